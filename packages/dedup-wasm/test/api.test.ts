import { beforeAll, describe, expect, it } from 'vitest';
import { callWithString, raw } from './helpers/core-spy.js';
import * as api from '../dist/index.js';

const LOOP_UNIT = 'I will check the configuration file again. ';

/** Asserts that `f` throws an error of `type` naming `field`. */
function expectArgError(f: () => unknown, type: typeof api.DedupRangeError | typeof api.DedupTypeError, field: string): void {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected a ${type.name} for ${field}`).toBeInstanceOf(type);
  const e = caught as api.DedupRangeError;
  expect(e.field).toBe(field);
  expect(e.rule.length).toBeGreaterThan(0);
  expect(e.message).toContain(field);
  expect(e).toBeInstanceOf(type === api.DedupRangeError ? RangeError : TypeError);
}

describe('before init', () => {
  it('every core-backed function throws DedupNotInitializedError; pure ones work', () => {
    expect(api.isDedupWasmReady()).toBe(false);
    const calls: Array<() => unknown> = [
      () => api.checkRepetition('text'),
      () => api.tokenize('text'),
      () => api.textSimilarity('a', 'b'),
      () => api.createStreamingDedup(),
      () => api.createLoopDetector(),
      () => api.isCharCollapsed('text'),
    ];
    for (const f of calls) expect(f).toThrow(api.DedupNotInitializedError);
    expect(api.resolveDedupPreset('relaxed').stepSize).toBe(15);
  });
});

describe('after init', () => {
  beforeAll(async () => {
    await api.initDedupWasm();
  });

  describe('settings', () => {
    it('presets and defaults equal what the core resolves', () => {
      for (const name of ['default', 'relaxed', 'sensitive'] as const) {
        const { code, out } = callWithString('dw_settings_resolve', JSON.stringify(name));
        expect(code).toBe(0);
        expect(JSON.parse(out)).toEqual(api.PRESETS[name]);
        expect(api.resolveDedupPreset(name)).toEqual(api.PRESETS[name]);
      }
      expect(api.PRESETS.default).toEqual(api.DEFAULT_SETTINGS);
      expect(api.DEFAULT_SETTINGS.loop).toEqual(api.LOOP_DEFAULTS);
    });

    it('constants are frozen and resolveDedupPreset returns a fresh copy', () => {
      expect(Object.isFrozen(api.DEFAULT_SETTINGS)).toBe(true);
      expect(Object.isFrozen(api.LOOP_DEFAULTS)).toBe(true);
      expect(Object.isFrozen(api.PRESETS.sensitive)).toBe(true);
      const s = api.resolveDedupPreset('default');
      s.loop.windowChars = 5;
      s.stepSize = 1;
      expect(api.DEFAULT_SETTINGS.stepSize).toBe(25);
      expect(api.LOOP_DEFAULTS.windowChars).toBe(1600);
    });

    it('resolveDedupPreset rejects unknown names and non-strings', () => {
      expectArgError(() => api.resolveDedupPreset('aggressive' as never), api.DedupRangeError, 'preset');
      expectArgError(() => api.resolveDedupPreset('toString' as never), api.DedupRangeError, 'preset');
      expectArgError(() => api.resolveDedupPreset(3 as never), api.DedupTypeError, 'preset');
    });

    it('invalid settings throw typed errors naming the field', () => {
      const R = api.DedupRangeError;
      const T = api.DedupTypeError;
      const cases: Array<[unknown, typeof R | typeof T, string]> = [
        [{ ngramThreshold: NaN }, R, 'ngramThreshold'],
        [{ ngramThreshold: 1.5 }, R, 'ngramThreshold'],
        [{ sentenceThreshold: 0 }, R, 'sentenceThreshold'],
        [{ sentenceThreshold: -Infinity }, R, 'sentenceThreshold'],
        [{ windowSize: 0 }, R, 'windowSize'],
        [{ stepSize: -1 }, R, 'stepSize'],
        [{ minRepeatLength: 2.5 }, R, 'minRepeatLength'],
        [{ maxWindowChars: 100 }, R, 'maxWindowChars'],
        [{ maxRepetitions: 2 ** 40 }, R, 'maxRepetitions'],
        [{ loop: { windowChars: Infinity } }, R, 'windowChars'],
        [{ loop: { periodMatch: NaN } }, R, 'periodMatch'],
        [{ loop: { zeroGainChars: 5000 } }, R, 'zeroGainChars'],
        [{ ngramThreshold: '0.5' }, T, 'ngramThreshold'],
        [{ windowSize: null }, T, 'windowSize'],
        [{ ngramTreshold: 0.9 }, T, 'settings'],
        [{ loop: { bogus: 1 } }, T, 'loop'],
        [{ loop: 5 }, T, 'loop'],
        [{ preset: 'aggressive' }, R, 'preset'],
        ['aggressive', R, 'preset'],
        [42, T, 'settings'],
        [[1, 2], T, 'settings'],
      ];
      for (const [settings, type, field] of cases) {
        expectArgError(() => api.checkRepetition('some text', settings as never), type, field);
        expectArgError(() => api.createStreamingDedup(settings as never), type, field);
      }
    });

    it('accepts a preset name, overrides, and overrides over a preset', () => {
      const text = `${'x'.repeat(10)} zebra quantum lattice forty-two! then again zebra quantum lattice forty-two!`;
      expect(api.checkRepetition(text).repeated).toBe(false);
      expect(api.checkRepetition(text, 'sensitive').repeated).toBe(true);
      expect(api.checkRepetition(text, { minRepeatLength: 20 }).repeated).toBe(true);
      expect(api.checkRepetition(text, { preset: 'sensitive', minRepeatLength: 60 }).repeated).toBe(false);
      expect(api.checkRepetition(text, undefined).repeated).toBe(false);
    });
  });

  describe('checkRepetition', () => {
    it('reports sections in UTF-16 indices, right for emoji and CJK', () => {
      const unit = '😀 部署完成 — the deploy 🚀 finished, caches cleared, checking again. ';
      const text = `前言 𝒳𝒴 ${unit.repeat(5)}`;
      const r = api.checkRepetition(text);
      expect(r.repeated).toBe(true);
      expect(r.ratio).toBeGreaterThan(0.7);
      expect(r.ratio).toBeLessThanOrEqual(1);
      const ngram = r.sections.find((s) => s.source === 'ngram');
      expect(ngram).toBeDefined();
      const s = ngram!;
      const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ');
      expect(s.similarity).toBe(1);
      expect(norm(text.slice(s.repeatStart, s.repeatEnd))).toBe(norm(text.slice(s.originalStart, s.originalEnd)));
      expect(text.slice(s.repeatStart, s.repeatEnd)).toContain('😀 部署完成');
      expect(s.repeatEnd).toBe(text.length);
      for (const sec of r.sections) {
        // A slice never cuts a surrogate pair.
        for (const i of [sec.originalStart, sec.originalEnd, sec.repeatStart, sec.repeatEnd]) {
          const c = text.charCodeAt(i);
          expect(c >= 0xdc00 && c <= 0xdfff).toBe(false);
        }
      }
      const sources = new Set(r.sections.map((x) => x.source));
      expect(sources).toEqual(new Set(['ngram', 'sentence', 'period']));
    });

    it('handles the empty string, lone surrogates and NUL', () => {
      expect(api.checkRepetition('')).toEqual({ repeated: false, ratio: 0, sections: [] });
      const odd = `\ud800 lone \udfff and nul \u0000 text. `.repeat(8);
      const r = api.checkRepetition(odd);
      expect(r.repeated).toBe(true);
      for (const s of r.sections) expect(s.repeatEnd).toBeLessThanOrEqual(odd.length);
    });

    it('rejects a non-string text', () => {
      expectArgError(() => api.checkRepetition(42 as never), api.DedupTypeError, 'text');
      expectArgError(() => api.checkRepetition(null as never), api.DedupTypeError, 'text');
    });
  });

  describe('tokenize and textSimilarity', () => {
    it('tokenizes words, digits and each CJK char', () => {
      expect(api.tokenize('Hello, World 42! 你好')).toEqual(['hello', 'world', '42', '你', '好']);
      expect(api.tokenize('')).toEqual([]);
      expect(api.tokenize('😀🚀 ...')).toEqual([]);
      expectArgError(() => api.tokenize(undefined as never), api.DedupTypeError, 'text');
    });

    it('compares texts in [0, 1]', () => {
      expect(api.textSimilarity('the cache was stale today', 'today the cache was stale')).toBe(1);
      expect(api.textSimilarity('alpha beta gamma delta', 'one two three four')).toBe(0);
      const s = api.textSimilarity('the cache was stale today', 'the cache was fresh today');
      expect(s).toBeGreaterThan(0.3);
      expect(s).toBeLessThan(1);
      expectArgError(() => api.textSimilarity(1 as never, 'b'), api.DedupTypeError, 'a');
      expectArgError(() => api.textSimilarity('a', {} as never), api.DedupTypeError, 'b');
    });
  });

  describe('createStreamingDedup', () => {
    it('goes none → abort on a loop and latches', () => {
      const m = api.createStreamingDedup();
      expect(m.lastCheck).toBeNull();
      expect(m.determineAction()).toBe('none');
      const first = m.feedChunk('Some opening words. ');
      expect(first).toMatchObject({ repeated: false, action: 'none', evidence: null, charsSeen: 20 });
      expect(m.lastCheck).toBe(first);
      let check = first;
      for (let i = 0; i < 20; i++) check = m.feedChunk(LOOP_UNIT);
      expect(check.action).toBe('abort');
      expect(m.determineAction(check)).toBe('abort');
      expect(m.determineAction()).toBe('abort');
      expect(check.repeated).toBe(true);
      expect(check.ratio).toBeGreaterThan(0.5);
      expect(check.evidence?.severity).toBe('abort');
      expect(check.evidence?.rule).toMatch(/loop$/);
      expect(check.evidence?.sample).toContain('check the configuration');
      expect(check.sections.length).toBeGreaterThan(0);
      expect(check.sections.length).toBeLessThanOrEqual(32);
      expect(check.charsSeen).toBe(20 + 20 * LOOP_UNIT.length);
      const later = m.feedChunk('Completely different prose follows now, about gardens and rivers.');
      expect(later.action).toBe('abort');
      m.dispose();
    });

    it('determineAction reads the check it is given', () => {
      const m = api.createStreamingDedup();
      const c = m.feedChunk('hello');
      expect(m.determineAction({ ...c, action: 'steer' })).toBe('steer');
      m.dispose();
    });

    it('joins a surrogate pair split across chunks', () => {
      const text = `${'🚀 launch the rocket again and again. '.repeat(8)}`;
      const whole = api.createStreamingDedup();
      const split = api.createStreamingDedup();
      const a = whole.feedChunk(text);
      let b = split.feedChunk('');
      for (let i = 0; i < text.length; i += 3) b = split.feedChunk(text.slice(i, i + 3));
      expect(b.sections).toEqual(a.sections);
      expect(b.ratio).toBe(a.ratio);
      expect(b.charsSeen).toBe(text.length);
      for (const s of b.sections) expect(text.slice(s.repeatStart, s.repeatEnd).startsWith('\udc80')).toBe(false);
      whole.dispose();
      split.dispose();
    });

    it('reasoning has its own channel; a loop there aborts too', () => {
      const m = api.createStreamingDedup();
      m.feedChunk('Visible answer text. ');
      let c = m.lastCheck!;
      for (let i = 0; i < 20; i++) c = m.feedReasoningChunk(LOOP_UNIT);
      expect(c.action).toBe('abort');
      expect(c.charsSeen).toBe('Visible answer text. '.length);
      m.dispose();
    });

    it('reset forgets everything and keeps the settings', () => {
      const m = api.createStreamingDedup({ minRepeatLength: 20 });
      for (let i = 0; i < 20; i++) m.feedChunk(LOOP_UNIT);
      expect(m.determineAction()).toBe('abort');
      m.reset();
      expect(m.lastCheck).toBeNull();
      const c = m.feedChunk('A fresh start with a short unit. A fresh start with a short unit. ');
      expect(c.charsSeen).toBe(66);
      expect(c.action).not.toBe('abort');
      // minRepeatLength 20 survived the reset: this 33-char repeat is a section.
      expect(c.sections.some((s) => s.source === 'ngram')).toBe(true);
      m.dispose();
    });

    it('dispose frees the handle; later calls throw; dispose twice is fine; Symbol.dispose works', () => {
      const x = raw();
      const before = x.dw_stream_count();
      const m = api.createStreamingDedup();
      expect(x.dw_stream_count()).toBe(before + 1);
      m.dispose();
      expect(x.dw_stream_count()).toBe(before);
      expect(() => m.feedChunk('x')).toThrow(/disposed/);
      expect(() => m.reset()).toThrow(/disposed/);
      m.dispose();
      {
        using scoped = api.createStreamingDedup();
        scoped.feedChunk('inside a block');
        expect(x.dw_stream_count()).toBe(before + 1);
      }
      expect(x.dw_stream_count()).toBe(before);
    });

    it('rejects non-string chunks', () => {
      const m = api.createStreamingDedup();
      expectArgError(() => m.feedChunk(5 as never), api.DedupTypeError, 'chunk');
      expectArgError(() => m.feedReasoningChunk(undefined as never), api.DedupTypeError, 'chunk');
      m.dispose();
    });
  });

  describe('createLoopDetector and isCharCollapsed', () => {
    it('returns null until a loop, then the same frozen verdict', () => {
      const d = api.createLoopDetector();
      expect(d.feed('Here is my answer. ')).toBeNull();
      expect(d.tripped()).toBe(false);
      expect(d.evidence()).toBeNull();
      let hit: api.LoopHit | null = null;
      for (let i = 0; i < 200 && !hit; i++) hit = d.feed('哈哈，');
      expect(hit).not.toBeNull();
      expect(hit!.channel).toBe('content');
      expect(hit!.rule).toMatch(/loop$/);
      expect(Object.isFrozen(hit)).toBe(true);
      expect(d.feed('anything else')).toBe(hit);
      expect(d.tripped()).toBe(true);
      expect(d.evidence()).toBe(hit);
      expect(d.size()).toBeGreaterThan(19);
      d.dispose();
    });

    it('watches the reasoning channel and counts both in size()', () => {
      const d = api.createLoopDetector({ maxReasoningChars: 100 });
      d.feed('abc');
      const hit = d.feedReasoning('x'.repeat(60) + ' some reasoning text that runs past the cap of one hundred chars');
      expect(hit?.rule).toBe('max-reasoning-chars');
      expect(hit?.channel).toBe('reasoning');
      expect(d.size()).toBe(3 + 60 + 64);
      d[Symbol.dispose]();
    });

    it('rejects bad configs', () => {
      expectArgError(() => api.createLoopDetector({ windowChars: NaN }), api.DedupRangeError, 'windowChars');
      expectArgError(() => api.createLoopDetector({ bogus: 1 } as never), api.DedupTypeError, 'loop');
      expectArgError(() => api.createLoopDetector('x' as never), api.DedupTypeError, 'config');
      expectArgError(() => api.isCharCollapsed('text', { periodMax: 0 }), api.DedupRangeError, 'periodMax');
      expectArgError(() => api.isCharCollapsed(7 as never), api.DedupTypeError, 'text');
    });

    it('isCharCollapsed tells a collapsed tail from prose', () => {
      expect(api.isCharCollapsed('哈哈，'.repeat(100))).toBe(true);
      expect(api.isCharCollapsed('ha, '.repeat(100))).toBe(true);
      expect(api.isCharCollapsed('A sentence with many different words, letters and no collapse at all in it.')).toBe(false);
      expect(api.isCharCollapsed('')).toBe(false);
    });
  });
});
