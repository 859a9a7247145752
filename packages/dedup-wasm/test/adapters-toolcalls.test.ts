import { beforeAll, describe, expect, it } from 'vitest';
import { createToolCallMonitor, DedupRangeError, DedupTypeError, initDedupWasm, TOOL_CALL_DEFAULTS } from '../dist/index.js';

beforeAll(async () => {
  await initDedupWasm();
});

describe('createToolCallMonitor', () => {
  it('documents the core defaults', () => {
    const m = createToolCallMonitor();
    expect(m.options).toEqual(TOOL_CALL_DEFAULTS);
    m.dispose();
  });

  it('steers then aborts on the same call repeated, and the abort latches until reset', () => {
    const m = createToolCallMonitor();
    const actions = Array.from({ length: TOOL_CALL_DEFAULTS.abortRepeats }, () => m.record({ name: 'read_file', args: { path: 'a.txt' } }).action);
    expect(actions.slice(0, TOOL_CALL_DEFAULTS.steerRepeats - 1).every((a) => a === 'none')).toBe(true);
    expect(actions[TOOL_CALL_DEFAULTS.steerRepeats - 1]).toBe('steer');
    expect(actions.at(-1)).toBe('abort');
    const v = m.record({ name: 'something_else', args: {} });
    expect(v.action).toBe('abort');
    expect(v.evidence).toMatchObject({ kind: 'exact', period: 1, severity: 'abort', cycle: [{ name: 'read_file', args: '{"path":"a.txt"}' }] });
    expect(m.calls).toBe(TOOL_CALL_DEFAULTS.abortRepeats + 1);
    m.reset();
    expect(m.calls).toBe(0);
    expect(m.record({ name: 'read_file', args: { path: 'a.txt' } }).action).toBe('none');
    m.dispose();
  });

  it('finds cycles of 2 to 5 calls', () => {
    for (let p = 2; p <= 5; p++) {
      using m = createToolCallMonitor();
      let last = m.record({ name: 't0', args: { i: 0 } });
      for (let i = 1; i < p * TOOL_CALL_DEFAULTS.abortRepeats; i++) last = m.record({ name: `t${i % p}`, args: { i: i % p } });
      expect(last.action).toBe('abort');
      expect(last.evidence?.period).toBe(p);
      expect(last.evidence?.repeats).toBe(TOOL_CALL_DEFAULTS.abortRepeats);
      expect(last.evidence?.cycle.map((c) => c.name)).toEqual(Array.from({ length: p }, (_, k) => `t${(k + p * TOOL_CALL_DEFAULTS.abortRepeats) % p}`));
    }
  });

  it('ignores key order and JSON formatting; accepts arguments as a JSON string', () => {
    using m = createToolCallMonitor({ steerRepeats: 2, abortRepeats: 3 });
    expect(m.record({ name: 'search', args: { q: 'wasm', limit: 10 } }).action).toBe('none');
    expect(m.record({ name: 'search', args: '{\n  "limit": 10,\n  "q": "wasm"\n}' }).action).toBe('steer');
    expect(m.record({ name: 'search', args: { limit: 10.0, q: '  wasm ' } }).action).toBe('abort');
  });

  it('catches a call repeated with only timestamps, UUIDs and counters varying', () => {
    using m = createToolCallMonitor();
    const verdicts = Array.from({ length: TOOL_CALL_DEFAULTS.volatileAbortRepeats }, (_, i) =>
      m.record({
        name: 'get_job_status',
        args: { job: 'build-7', requestId: crypto.randomUUID(), at: new Date(Date.UTC(2025, 0, 1, 12, i)).toISOString(), note: `poll attempt ${i + 1}` },
      }),
    );
    expect(verdicts[TOOL_CALL_DEFAULTS.volatileSteerRepeats - 2]!.action).toBe('none');
    expect(verdicts[TOOL_CALL_DEFAULTS.volatileSteerRepeats - 1]!.action).toBe('steer');
    const last = verdicts.at(-1)!;
    expect(last.action).toBe('abort');
    expect(last.evidence?.kind).toBe('volatile');
    expect(last.evidence?.cycle[0]?.args).toContain('build-7');
    expect(last.evidence?.cycle[0]?.args).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}/);
  });

  it('does not flag progress: different files, pages, queries', () => {
    using m = createToolCallMonitor();
    for (let i = 0; i < 50; i++) {
      expect(m.record({ name: 'read_file', args: { path: `src/module${i}.ts` } }).action).toBe('none');
      expect(m.record({ name: 'list_issues', args: { page: i + 1 } }).action).toBe('none');
    }
  });

  it('takes extra volatile keys', () => {
    using plain = createToolCallMonitor();
    using custom = createToolCallMonitor({ volatileKeys: ['cursor'] });
    const acts = (m: typeof plain) => Array.from({ length: 8 }, (_, i) => m.record({ name: 'poll', args: { cursor: `c${i}` } }).action);
    expect(acts(plain).every((a) => a === 'none')).toBe(true);
    expect(acts(custom).at(-1)).toBe('abort');
  });

  it('rejects bad options and calls by name', () => {
    expect(() => createToolCallMonitor({ maxCycleLen: 0 })).toThrow(DedupRangeError);
    expect(() => createToolCallMonitor({ maxCycleLen: 0 })).toThrow(/maxCycleLen/);
    expect(() => createToolCallMonitor({ steerRepeats: 9 })).toThrow(/abortRepeats.*steer_repeats|abortRepeats/);
    expect(() => createToolCallMonitor({ steerRepeats: Number.NaN })).toThrow(RangeError);
    expect(() => createToolCallMonitor({ bogus: 1 } as never)).toThrow(DedupTypeError);
    expect(() => createToolCallMonitor({ volatileKeys: [1] } as never)).toThrow(DedupTypeError);
    using m = createToolCallMonitor();
    expect(() => m.record({ name: '' })).toThrow(DedupTypeError);
    expect(() => m.record({ name: 5 } as never)).toThrow(/name/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => m.record({ name: 'x', args: cyclic })).toThrow(/args/);
    expect(() => m.record({ name: 'x', args: 10n })).toThrow(DedupTypeError);
    expect(m.calls).toBe(0);
    m.dispose();
    expect(() => m.record({ name: 'x' })).toThrow(/disposed/);
  });
});
