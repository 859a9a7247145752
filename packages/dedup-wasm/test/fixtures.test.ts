import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import * as api from '../dist/index.js';

/**
 * The shared fixtures (`test/fixtures/*.json` at the repository root) against the wasm build. cargo
 * test runs the same files against the native build: together they prove both agree exactly.
 */
interface Fixture {
  name: string;
  kind: 'batch' | 'stream';
  input: string | string[];
  settings: api.SettingsOrPreset | null;
  expected: Record<string, unknown>;
}

const dir = new URL('../../../test/fixtures/', import.meta.url);
const fixtures: Fixture[] = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Fixture);

function settingsOf(f: Fixture): api.SettingsOrPreset | undefined {
  return f.settings ?? undefined;
}

function errorOf(f: () => unknown): { field: string; errorClass: 'range' | 'type' } {
  try {
    f();
  } catch (e) {
    if (e instanceof api.DedupRangeError) return { field: e.field, errorClass: 'range' };
    if (e instanceof api.DedupTypeError) return { field: e.field, errorClass: 'type' };
    throw e;
  }
  throw new Error('expected an error');
}

beforeAll(async () => {
  await api.initDedupWasm();
});

it('the fixtures are there', () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(20);
  expect(fixtures.some((f) => f.kind === 'stream')).toBe(true);
});

describe.each(fixtures.filter((f) => f.kind === 'batch'))('batch fixture $name', (f) => {
  it('wasm equals the fixture', () => {
    const text = f.input as string;
    if ('error' in f.expected) {
      expect({ error: errorOf(() => api.checkRepetition(text, settingsOf(f))) }).toEqual(f.expected);
      return;
    }
    expect(api.checkRepetition(text, settingsOf(f))).toEqual(f.expected);
  });
});

describe.each(fixtures.filter((f) => f.kind === 'stream'))('stream fixture $name', (f) => {
  it('wasm equals the fixture, chunk by chunk', () => {
    const chunks = f.input as string[];
    const expected = f.expected as {
      perChunk: Array<{ action: string; repeated: boolean; ratio: number }>;
      final: { sections: api.RepeatedSection[]; evidence: (api.LoopEvidence & Record<string, unknown>) | null; charsSeen: number };
    };
    using m = api.createStreamingDedup(settingsOf(f));
    const perChunk = chunks.map((c) => {
      const check = m.feedChunk(c);
      return { action: check.action, repeated: check.repeated, ratio: check.ratio };
    });
    expect(perChunk).toEqual(expected.perChunk);
    const last = m.lastCheck!;
    expect(last.sections).toEqual(expected.final.sections);
    expect(last.charsSeen).toBe(expected.final.charsSeen);
    expect(last.evidence).toEqual(expected.final.evidence);
  });
});
