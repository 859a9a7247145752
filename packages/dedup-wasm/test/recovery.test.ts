import { beforeAll, describe, expect, it } from 'vitest';
import { instances, raw, rawMemory, trapNextCall } from './helpers/core-spy.js';
import * as api from '../dist/index.js';

const LOOP_UNIT = 'I will check the configuration file again. ';

/** What `f` throws (undefined when it returns). */
function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

beforeAll(async () => {
  await api.initDedupWasm();
});

describe('a trap in the core', () => {
  it('throws DedupWasmTrapError caused by the RuntimeError, and the next call works on a fresh instance', () => {
    const count = instances.length;
    trapNextCall('dw_tokenize');
    const caught = thrownBy(() => api.tokenize('hello world'));
    expect(caught).toBeInstanceOf(api.DedupWasmTrapError);
    expect((caught as Error).message).toMatch(/restarted/);
    expect((caught as Error).cause).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(instances.length).toBe(count + 1);
    expect(api.tokenize('hello world')).toEqual(['hello', 'world']);
    expect(api.checkRepetition(LOOP_UNIT.repeat(5)).repeated).toBe(true);
  });

  it('traps in every kind of call are recovered', () => {
    for (const [exportName, call] of [
      ['dw_check_repetition', () => api.checkRepetition('some text to check')],
      ['dw_text_similarity', () => api.textSimilarity('a b c', 'a b d')],
      ['dw_is_char_collapsed', () => api.isCharCollapsed('ha ha ha')],
      ['dw_stream_new', () => api.createStreamingDedup({ stepSize: 5 })],
    ] as const) {
      trapNextCall(exportName);
      expect(call, exportName).toThrow(api.DedupWasmTrapError);
      expect(call, exportName).not.toThrow();
    }
  });

  it('monitors made before the trap throw until reset(), then work again', () => {
    const m = api.createStreamingDedup();
    const d = api.createLoopDetector();
    m.feedChunk('Before the trap. ');
    trapNextCall('dw_tokenize');
    expect(() => api.tokenize('x y')).toThrow(api.DedupWasmTrapError);
    expect(() => m.feedChunk('after')).toThrow(api.DedupWasmTrapError);
    expect(() => m.feedChunk('after')).toThrow(/reset/);
    expect(() => d.feed('after')).toThrow(api.DedupWasmTrapError);
    m.reset();
    let c = m.feedChunk('Fresh. ');
    expect(c.charsSeen).toBe(7);
    for (let i = 0; i < 20; i++) c = m.feedChunk(LOOP_UNIT);
    expect(c.action).toBe('abort');
    // Disposing a monitor of a dead instance is harmless and frees nothing in the new one.
    const live = raw().dw_stream_count();
    d.dispose();
    expect(raw().dw_stream_count()).toBe(live);
    m.dispose();
    expect(raw().dw_stream_count()).toBe(live - 1);
  });

  it('a trap while feeding a stream is reported on that call', () => {
    const m = api.createStreamingDedup();
    m.feedChunk('one');
    trapNextCall('dw_stream_feed', 1);
    expect(() => m.feedChunk('two')).toThrow(api.DedupWasmTrapError);
    m.reset();
    expect(m.feedChunk('three').charsSeen).toBe(5);
    m.dispose();
  });
});

describe('a trap in the memory-dedup module', () => {
  it('restarts that module only: detection streams keep their state, vector indexes are lost', () => {
    const m = api.createStreamingDedup();
    m.feedChunk('A stream that lives in the detection module. ');
    const index = new api.WasmVectorIndex(2);
    index.add(new Float32Array([1, 0]));
    const detection = raw();
    trapNextCall('dw_memory_normalize');
    const caught = thrownBy(() => api.normalizeMemoryText('User likes coffee'));
    expect(caught).toBeInstanceOf(api.DedupWasmTrapError);
    expect((caught as Error).message).toMatch(/memory module trapped/);
    expect(api.normalizeMemoryText('User LIKES coffee.').text).toBe('user likes coffee');
    // The detection instance was not replaced, and the stream goes on where it was.
    expect(raw()).toBe(detection);
    expect(m.feedChunk('More text.').charsSeen).toBe(55);
    expect(() => index.size).toThrow(/lost when the core restarted/);
    const fresh = new api.WasmVectorIndex(2);
    fresh.add(new Float32Array([0, 1]));
    expect(rawMemory().dw_index_count()).toBe(1);
    fresh.dispose();
    index.dispose();
    m.dispose();
  });
});

describe('bounded memory', () => {
  it('wasm memory stops growing on a 5 MB stream', () => {
    const m = api.createStreamingDedup({ loop: { maxChars: 0 } });
    const syllables = ['ka', 'lo', 'mir', 'ven', 'tas', 'oru', 'pel', 'dan', 'sie', 'gro', 'fun', 'bat', 'xel', 'quo', 'rin', 'hem'];
    let seed = 7;
    const next = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      seed >>>= 0;
      return seed;
    };
    const sentence = (): string => {
      const n = 6 + (next() % 8);
      const parts: string[] = [];
      for (let i = 0; i < n; i++) {
        let w = '';
        for (let k = 1 + (next() % 3); k >= 0; k--) w += syllables[next() % syllables.length]!;
        parts.push(w);
      }
      return `${parts.join(' ')} ${next() % 100000}. `;
    };
    const block = (): string => {
      let s = '';
      while (s.length < 64 * 1024) s += sentence();
      return s;
    };
    let fed = 0;
    let afterFirstMb = 0;
    while (fed < 5 * 1024 * 1024) {
      const b = block();
      for (let i = 0; i < b.length; i += 4096) m.feedChunk(b.slice(i, i + 4096));
      fed += b.length;
      if (afterFirstMb === 0 && fed >= 1024 * 1024) afterFirstMb = raw().memory.buffer.byteLength;
    }
    const end = raw().memory.buffer.byteLength;
    expect(m.lastCheck!.charsSeen).toBe(fed);
    expect(m.lastCheck!.action, JSON.stringify(m.lastCheck!.evidence)).not.toBe('abort');
    // Memory reached its plateau within the first megabyte; four more did not add a page budget of 2 MiB.
    expect(end - afterFirstMb).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(end).toBeLessThan(32 * 1024 * 1024);
    m.dispose();
  });
});
