/**
 * Loading and owning the WebAssembly instance.
 *
 * The core has no imports and no generated glue: we compile the module once, instantiate it, and
 * keep the compiled `WebAssembly.Module` so that, if a call ever traps, a fresh instance can be made
 * synchronously and the package keeps working.
 * @module
 */
import { DedupNotInitializedError } from '../errors.js';

/** The raw exports of the core (see ARCHITECTURE.md, "The wasm ABI"). */
export interface CoreExports {
  memory: WebAssembly.Memory;
  dw_alloc(len: number): number;
  dw_free(ptr: number, len: number): void;
  dw_out_ptr(): number;
  dw_out_len(): number;
  dw_settings_resolve(ptr: number, len: number): number;
  dw_tokenize(ptr: number, len: number): number;
  dw_text_similarity(aPtr: number, aLen: number, bPtr: number, bLen: number): number;
  dw_check_repetition(tPtr: number, tLen: number, sPtr: number, sLen: number): number;
  dw_is_char_collapsed(tPtr: number, tLen: number, cPtr: number, cLen: number): number;
  dw_stream_new(sPtr: number, sLen: number): number;
  dw_stream_feed(handle: number, ptr: number, len: number, channel: number): number;
  dw_stream_ratio(handle: number): number;
  dw_stream_sections(handle: number): number;
  dw_stream_evidence(handle: number): number;
  dw_stream_live(handle: number): number;
  dw_stream_reset(handle: number): number;
  dw_stream_free(handle: number): number;
  dw_stream_count(): number;
  dw_toolcalls_new(cPtr: number, cLen: number): number;
  dw_toolcalls_record(handle: number, ptr: number, len: number): number;
  dw_toolcalls_reset(handle: number): number;
  dw_toolcalls_free(handle: number): number;
  dw_toolcalls_count(): number;
  dw_guard_dedup(tPtr: number, tLen: number, dPtr: number, dCount: number, oPtr: number, oLen: number): number;
  dw_guard_split(tPtr: number, tLen: number): number;
  dw_index_new(dim: number, annThreshold: number, m: number, efConstruction: number, efSearch: number): number;
  dw_index_add(handle: number, ptr: number, len: number): number;
  dw_index_add_many(handle: number, ptr: number, len: number, count: number): number;
  dw_index_add_search(handle: number, ptr: number, len: number, k: number): number;
  dw_index_remove(handle: number, key: number): number;
  dw_index_get(handle: number, key: number): number;
  dw_index_search(handle: number, ptr: number, len: number, k: number): number;
  dw_index_score(handle: number, a: number, b: number): number;
  dw_index_pairs(handle: number, threshold: number): number;
  dw_index_clusters(handle: number, threshold: number): number;
  dw_index_len(handle: number): number;
  dw_index_clear(handle: number): number;
  dw_index_free(handle: number): number;
  dw_index_count(): number;
  dw_vector_cosine(aPtr: number, aLen: number, bPtr: number, bLen: number): number;
  dw_memory_normalize(ptr: number, len: number): number;
  dw_lexical_embed(ptr: number, len: number, dims: number): number;
}

/** What {@link initDedupWasm} accepts: where to find the `.wasm`, or the module itself. */
export type WasmSource = URL | string | Response | BufferSource | WebAssembly.Module;

interface Loaded {
  module: WebAssembly.Module;
  exports: CoreExports;
  /** Increments each time the instance is replaced after a trap; handles remember theirs. */
  epoch: number;
}

let loaded: Loaded | undefined;
let loading: Promise<void> | undefined;

function isNode(): boolean {
  return typeof process !== 'undefined' && typeof process.versions?.node === 'string';
}

async function compileFrom(source: WasmSource | undefined): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return source;
  if (source === undefined) {
    const url = new URL('../wasm/dedup_wasm.wasm', import.meta.url);
    if (isNode() && url.protocol === 'file:') {
      const { readFile } = await import('node:fs/promises');
      return WebAssembly.compile(await readFile(url));
    }
    return compileFrom(url);
  }
  if (typeof source === 'string' || source instanceof URL) {
    const url = source instanceof URL ? source : new URL(source, typeof location !== 'undefined' ? location.href : undefined);
    if (isNode() && url.protocol === 'file:') {
      const { readFile } = await import('node:fs/promises');
      return WebAssembly.compile(await readFile(url));
    }
    return compileFrom(await fetch(url));
  }
  if (typeof Response !== 'undefined' && source instanceof Response) {
    if (!source.ok) throw new Error(`initDedupWasm: fetching the wasm failed with HTTP ${source.status}`);
    if (typeof WebAssembly.compileStreaming === 'function' && source.headers.get('content-type')?.startsWith('application/wasm')) {
      return WebAssembly.compileStreaming(source);
    }
    return WebAssembly.compile(await source.arrayBuffer());
  }
  if (ArrayBuffer.isView(source) || source instanceof ArrayBuffer) {
    return WebAssembly.compile(source as BufferSource);
  }
  throw new TypeError('initDedupWasm: source must be a URL, a string URL, a Response, bytes or a WebAssembly.Module');
}

function instantiate(module: WebAssembly.Module): CoreExports {
  const instance = new WebAssembly.Instance(module, {});
  return instance.exports as unknown as CoreExports;
}

/**
 * Loads the WebAssembly core. Call it once and await it before anything else; later calls return
 * at once.
 *
 * - In Node, with no argument, it reads the `.wasm` shipped inside the package.
 * - In browsers and workers, pass where the `.wasm` is: a `URL` (e.g.
 *   `new URL('dedup-wasm/wasm', import.meta.url)` with a bundler), a `Response`, the bytes, or a
 *   compiled `WebAssembly.Module`.
 */
export async function initDedupWasm(source?: WasmSource): Promise<void> {
  if (loaded) return;
  loading ??= (async () => {
    const module = await compileFrom(source);
    loaded = { module, exports: instantiate(module), epoch: 0 };
  })().finally(() => {
    loading = undefined;
  });
  return loading;
}

/** True once {@link initDedupWasm} has finished. */
export function isDedupWasmReady(): boolean {
  return loaded !== undefined;
}

/** The live exports; throws when not initialized. */
export function core(): CoreExports {
  if (!loaded) throw new DedupNotInitializedError();
  return loaded.exports;
}

/** The current instance's epoch (see {@link Loaded.epoch}). */
export function epoch(): number {
  if (!loaded) throw new DedupNotInitializedError();
  return loaded.epoch;
}

/** Replaces a trapped instance with a fresh one from the same compiled module. */
export function recover(): void {
  if (!loaded) return;
  loaded = { module: loaded.module, exports: instantiate(loaded.module), epoch: loaded.epoch + 1 };
}
