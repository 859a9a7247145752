import { describe, expect, it } from 'vitest';
import * as api from '../dist/index.js';

describe('before init', () => {
  it('every core call throws a clear error', () => {
    expect(() => api.checkRepetition('text')).toThrow(api.DedupNotInitializedError);
    expect(() => api.createStreamingDedup()).toThrow(/initDedupWasm/);
    expect(() => api.tokenize('a b')).toThrow(api.DedupNotInitializedError);
  });
});

describe('init', () => {
  it('loads the packaged wasm with no argument, once', async () => {
    await api.initDedupWasm();
    await api.initDedupWasm();
    expect(api.isDedupWasmReady()).toBe(true);
    expect(api.tokenize('Hello world')).toEqual(['hello', 'world']);
  });
});
