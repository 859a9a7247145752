import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));
const dist = new URL('../dist/index.js', import.meta.url).href;
const wasmPath = fileURLToPath(new URL('../wasm/dedup_wasm.wasm', import.meta.url));
const memoryWasmPath = fileURLToPath(new URL('../wasm/dedup_memory.wasm', import.meta.url));

/** Runs an ES module snippet in a fresh Node process; returns what it printed. */
function runModule(code: string, flags: string[] = []): string {
  return execFileSync(process.execPath, [...flags, '--input-type=module', '-e', code], { cwd: here, encoding: 'utf8', timeout: 60_000 }).trim();
}

describe('initDedupWasm sources (each in a fresh process)', () => {
  const probe = `const r = api.tokenize('Hello 世界'); console.log(JSON.stringify(r));`;
  const sources: Array<[string, string]> = [
    ['no argument', `await api.initDedupWasm();`],
    ['bytes', `await api.initDedupWasm(readFileSync(${JSON.stringify(wasmPath)}));`],
    ['ArrayBuffer', `const b = readFileSync(${JSON.stringify(wasmPath)}); await api.initDedupWasm(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));`],
    ['a compiled Module', `await api.initDedupWasm(await WebAssembly.compile(readFileSync(${JSON.stringify(wasmPath)})));`],
    ['a file URL', `await api.initDedupWasm(new URL(${JSON.stringify(new URL('../wasm/dedup_wasm.wasm', import.meta.url).href)}));`],
    ['a Response (streaming compile)', `await api.initDedupWasm(new Response(readFileSync(${JSON.stringify(wasmPath)}), { headers: { 'content-type': 'application/wasm' } }));`],
    ['a Response without a wasm content type', `await api.initDedupWasm(new Response(readFileSync(${JSON.stringify(wasmPath)})));`],
    ['concurrent calls', `await Promise.all([api.initDedupWasm(), api.initDedupWasm(), api.initDedupWasm()]);`],
  ];
  for (const [name, init] of sources) {
    it(`loads from ${name}`, () => {
      const out = runModule(`import { readFileSync } from 'node:fs'; const api = await import(${JSON.stringify(dist)}); ${init} if (!api.isDedupWasmReady()) throw new Error('not ready'); ${probe}`);
      expect(JSON.parse(out)).toEqual(['hello', '世', '界']);
    });
  }

  it('rejects a bad source and a failed response with clear errors', () => {
    const out = runModule(`
      const api = await import(${JSON.stringify(dist)});
      const msgs = [];
      try { await api.initDedupWasm(42); } catch (e) { msgs.push(e.constructor.name + ': ' + e.message); }
      try { await api.initDedupWasm(new Response('nope', { status: 404 })); } catch (e) { msgs.push(e.message); }
      try { await api.initDedupWasm(new Uint8Array([0, 1, 2, 3])); } catch (e) { msgs.push(e.constructor.name); }
      msgs.push(String(api.isDedupWasmReady()));
      await api.initDedupWasm();
      msgs.push(String(api.isDedupWasmReady()));
      console.log(JSON.stringify(msgs));`);
    const msgs = JSON.parse(out) as string[];
    expect(msgs[0]).toMatch(/^TypeError: initDedupWasm: source must be/);
    expect(msgs[1]).toMatch(/HTTP 404/);
    expect(msgs[2]).toBe('CompileError');
    expect(msgs.slice(3)).toEqual(['false', 'true']);
  });

  it('loads only the modules named in a sources object; memory calls say what is missing', () => {
    const out = runModule(`
      import { readFileSync } from 'node:fs';
      const api = await import(${JSON.stringify(dist)});
      const memory = await import(${JSON.stringify(new URL('../dist/memory.js', import.meta.url).href)});
      const msgs = [];
      await api.initDedupWasm({ detect: readFileSync(${JSON.stringify(wasmPath)}) });
      msgs.push(api.tokenize('Hello world').join(' '));
      try { memory.normalizeMemoryText('User LIKES coffee.'); } catch (e) { msgs.push(e.name + ': ' + e.message); }
      await api.initDedupWasm({ memory: readFileSync(${JSON.stringify(memoryWasmPath)}) });
      msgs.push(memory.normalizeMemoryText('User LIKES coffee.').text);
      try { await api.initDedupWasm({}); } catch (e) { msgs.push(e.constructor.name + ': ' + e.message); }
      console.log(JSON.stringify(msgs));`);
    const msgs = JSON.parse(out) as string[];
    expect(msgs[0]).toBe('hello world');
    expect(msgs[1]).toMatch(/^DedupNotInitializedError: the memory-dedup module .*\{ memory \}/);
    expect(msgs[2]).toBe('user likes coffee');
    expect(msgs[3]).toMatch(/^TypeError: initDedupWasm: the sources object names neither/);
  });

  it('each module exports its own group of calls and the shared allocation calls', () => {
    const names = (path: string): string[] => WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(path))).map((e) => e.name);
    const detect = names(wasmPath);
    const memory = names(memoryWasmPath);
    for (const shared of ['memory', 'dw_alloc', 'dw_free', 'dw_out_ptr', 'dw_out_len']) {
      expect(detect).toContain(shared);
      expect(memory).toContain(shared);
    }
    expect(detect).toEqual(expect.arrayContaining(['dw_check_repetition', 'dw_stream_feed', 'dw_toolcalls_record', 'dw_guard_dedup']));
    expect(detect.filter((n) => /^dw_(index|vector|memory|lexical)_/.test(n))).toEqual([]);
    expect(memory).toEqual(expect.arrayContaining(['dw_index_new', 'dw_index_search', 'dw_vector_cosine', 'dw_memory_normalize', 'dw_lexical_embed']));
    expect(memory.filter((n) => /^dw_(settings|tokenize|text|check|is|stream|toolcalls|guard)_?/.test(n))).toEqual([]);
  });

  it('the CommonJS build loads and runs too', () => {
    const cjs = fileURLToPath(new URL('../dist/index.cjs', import.meta.url));
    const out = execFileSync(process.execPath, ['-e', `const api = require(${JSON.stringify(cjs)}); api.initDedupWasm().then(() => console.log(JSON.stringify(api.checkRepetition('Retry the request now. '.repeat(6)).repeated)));`], { encoding: 'utf8' }).trim();
    expect(out).toBe('true');
  });
});

describe('FinalizationRegistry', () => {
  it('frees monitors that were never disposed once they are garbage collected', () => {
    const script = readFileSync(new URL('./helpers/gc-child.mjs', import.meta.url), 'utf8');
    const out = runModule(script.replace('__DIST__', dist), ['--expose-gc']);
    const r = JSON.parse(out) as { created: number; kept: number; afterGc: number };
    expect(r.created).toBe(r.kept + 40);
    // The 40 forgotten monitors were freed; the one still referenced was not.
    expect(r.afterGc).toBe(r.kept);
  });
});
