import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

describe('dedup-wasm/memory shares the core with the root entry', () => {
  it('in CommonJS: initDedupWasm from the root makes the subpath work', async () => {
    const root = require('../dist/index.cjs') as typeof import('../dist/index.js');
    const memory = require('../dist/memory.cjs') as typeof import('../dist/memory.js');
    await root.initDedupWasm();
    expect(memory.normalizeMemoryText('Hello,  World!').text).toBe('hello world');
    expect(root.createDeduplicator).toBe(memory.createDeduplicator);
    const d = memory.createDeduplicator();
    expect((await d.add({ id: 'a', content: 'User likes tea' })).action).toBe('added');
  });

  it('in ESM: the root re-exports the same functions as the subpath', async () => {
    const root = await import('../dist/index.js');
    const memory = await import('../dist/memory.js');
    expect(root.createDeduplicator).toBe(memory.createDeduplicator);
    expect(root.WasmVectorIndex).toBe(memory.WasmVectorIndex);
  });
});
