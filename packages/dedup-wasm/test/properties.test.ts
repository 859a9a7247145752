import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import * as api from '../dist/index.js';

beforeAll(async () => {
  await api.initDedupWasm();
});

/** Any UTF-16 code unit, lone surrogates and NUL included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));
const cjk = fc.integer({ min: 0x4e00, max: 0x9fff }).map((n) => String.fromCharCode(n));
const emoji = fc.constantFrom('😀', '🚀', '👀', '✅', '🎉', '👨‍👩‍👧', '🇯🇵');
const piece = fc.oneof(
  fc.string({ unit: anyUnit, maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.string({ unit: cjk, minLength: 1, maxLength: 6 }),
  emoji,
  fc.constantFrom('\u0000', '\n\n', '. ', '。', ' ', 'I will check the file again. ', '该项检查通过。', 'Step '),
);

/** Arbitrary text that often repeats itself: pieces, some of them looped. */
const text = fc
  .array(fc.tuple(piece, fc.integer({ min: 1, max: 12 })), { maxLength: 40 })
  .map((parts) => parts.map(([p, n]) => p.repeat(n)).join(''));

/** Cut points for a text of `len` units. */
const cuts = fc.array(fc.nat(), { maxLength: 30 });

function chunked(t: string, points: number[]): string[] {
  const bounds = [...new Set([0, t.length, ...points.map((p) => p % (t.length + 1))])].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 1; i < bounds.length; i++) out.push(t.slice(bounds[i - 1], bounds[i]));
  return out;
}

function expectSectionsInside(t: string, sections: api.RepeatedSection[]): void {
  for (const s of sections) {
    expect(0 <= s.originalStart && s.originalStart <= s.originalEnd && s.originalEnd <= t.length).toBe(true);
    expect(0 <= s.repeatStart && s.repeatStart <= s.repeatEnd && s.repeatEnd <= t.length).toBe(true);
    expect(s.similarity > 0 && s.similarity <= 1).toBe(true);
  }
}

/** Lowercase each char and collapse whitespace runs: the comparison the n-gram pass makes. */
function normalize(t: string): string {
  return Array.from(t, (c) => c.toLowerCase()).join('').replace(/\s+/g, ' ');
}

describe('properties over arbitrary strings', () => {
  it('checkRepetition never traps and every range lies inside the text', () => {
    fc.assert(
      fc.property(text, fc.constantFrom<api.SettingsOrPreset | undefined>(undefined, 'sensitive', 'relaxed'), (t, settings) => {
        const r = api.checkRepetition(t, settings);
        expect(r.repeated).toBe(r.sections.length > 0);
        expect(r.ratio >= 0 && r.ratio <= 1).toBe(true);
        expectSectionsInside(t, r.sections);
      }),
      { numRuns: 200 },
    );
  });

  it('tokenize, textSimilarity and isCharCollapsed never trap', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(Array.isArray(api.tokenize(a))).toBe(true);
        const s = api.textSimilarity(a, b);
        expect(s >= 0 && s <= 1).toBe(true);
        expect(typeof api.isCharCollapsed(a)).toBe('boolean');
      }),
      { numRuns: 100 },
    );
  });

  it('any chunking gives the same final stream state as feeding the text whole', () => {
    fc.assert(
      fc.property(text, cuts, (t, points) => {
        using whole = api.createStreamingDedup();
        using parts = api.createStreamingDedup();
        const w = whole.feedChunk(t);
        let p: api.StreamCheck | null = null;
        for (const c of chunked(t, points)) p = parts.feedChunk(c);
        p ??= parts.feedChunk('');
        // A stream keeps its 32 most recent sections: both keep the same ones.
        expect(p.sections).toEqual(w.sections);
        expect(p.ratio).toBe(w.ratio);
        expect(p.action).toBe(w.action);
        expect(p.evidence).toEqual(w.evidence);
        expect(p.charsSeen).toBe(t.length);
        expectSectionsInside(t, p.sections);
      }),
      { numRuns: 150 },
    );
  });

  it('an exact repeat reports slices that are equal modulo case and whitespace', () => {
    // Chars whose lowercase is one char and the same in Rust and JS; ASCII whitespace only.
    const unitChar = fc.oneof(
      fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,!?\n\t-'.split('')),
      cjk,
      emoji,
    );
    fc.assert(
      fc.property(
        fc.string({ unit: unitChar, minLength: 60, maxLength: 200 }),
        fc.string({ unit: 'grapheme', maxLength: 100 }),
        fc.string({ unit: 'grapheme-ascii', maxLength: 100 }),
        (unit, before, between) => {
          const t = `${before}${unit}${between}${unit}`;
          const r = api.checkRepetition(t, { minRepeatLength: 30 });
          for (const s of r.sections.filter((x) => x.source === 'ngram' && x.similarity === 1)) {
            expect(normalize(t.slice(s.repeatStart, s.repeatEnd))).toBe(normalize(t.slice(s.originalStart, s.originalEnd)));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a unit repeated back to back is found, with exact slices', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom(...'abcdefghij .'.split('')), cjk, emoji), minLength: 20, maxLength: 80 }), fc.integer({ min: 3, max: 8 }), (unit, n) => {
        fc.pre(new Set(unit).size >= 6);
        const t = unit.repeat(n);
        const r = api.checkRepetition(t, { minRepeatLength: 20 });
        const ngram = r.sections.filter((s) => s.source === 'ngram');
        expect(ngram.length).toBeGreaterThan(0);
        for (const s of ngram) {
          expect(normalize(t.slice(s.repeatStart, s.repeatEnd))).toBe(normalize(t.slice(s.originalStart, s.originalEnd)));
        }
      }),
      { numRuns: 100 },
    );
  });

  it('megabyte inputs of any kind do not trap', () => {
    const mb = 1024 * 1024;
    const inputs = [
      '\ud800'.repeat(mb),
      '\u0000'.repeat(mb),
      '哈'.repeat(mb),
      '😀'.repeat(mb / 2),
      Array.from({ length: mb / 16 }, (_, i) => `w${(i * 2654435761) % 1000003} `).join('').slice(0, mb),
    ];
    for (const t of inputs) {
      const r = api.checkRepetition(t);
      expectSectionsInside(t, r.sections);
      using m = api.createStreamingDedup();
      let c: api.StreamCheck | null = null;
      for (let i = 0; i < t.length; i += 65536) c = m.feedChunk(t.slice(i, i + 65536));
      expect(c!.charsSeen).toBe(t.length);
      expectSectionsInside(t, c!.sections);
    }
  });
});
