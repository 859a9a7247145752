/**
 * Loading and owning the WebAssembly instances.
 *
 * The core ships as two modules built from the same crate: `dedup_wasm.wasm` (detection: output
 * loops, repeated input) and `dedup_memory.wasm` (memory dedup: the vector index). An app that only
 * detects repetition never downloads the vector index.
 *
 * Neither module has imports or generated glue: we compile each once, instantiate it, and keep the
 * compiled `WebAssembly.Module` so that, if a call ever traps, a fresh instance can be made
 * synchronously and the package keeps working.
 * @module
 */
import { DedupNotInitializedError } from '../errors.js';

/** What both wasm modules export: their memory, allocation and the output buffer. */
export interface SharedExports {
  memory: WebAssembly.Memory;
  dw_alloc(len: number): number;
  dw_free(ptr: number, len: number): void;
  dw_out_ptr(): number;
  dw_out_len(): number;
}

/** The raw exports of the detection module `dedup_wasm.wasm` (see ARCHITECTURE.md, "The wasm ABI"). */
export interface CoreExports extends SharedExports {
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
}

/** The raw exports of the memory-dedup module `dedup_memory.wasm`. */
export interface MemoryExports extends SharedExports {
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

/** What {@link initDedupWasm} accepts for one module: where to find the `.wasm`, or the module itself. */
export type WasmSource = URL | string | Response | BufferSource | WebAssembly.Module;

/**
 * Sources for each module, for hosts that serve the files themselves (browsers, workers). A module
 * left out is not loaded.
 */
export interface WasmSources {
  /** The detection module, `dedup-wasm/wasm` (`dedup_wasm.wasm`). */
  detect?: WasmSource;
  /** The memory-dedup module, `dedup-wasm/wasm/memory` (`dedup_memory.wasm`). */
  memory?: WasmSource;
}

function isNode(): boolean {
  return typeof process !== 'undefined' && typeof process.versions?.node === 'string';
}

async function compileFrom(source: WasmSource): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return source;
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

/**
 * One wasm module of the package: loaded once, its instance replaced after a trap.
 * @typeParam X - its raw exports
 */
export class WasmModuleSlot<X extends SharedExports> {
  private loaded: { module: WebAssembly.Module; exports: X; epoch: number } | undefined;
  private loading: Promise<void> | undefined;

  /**
   * @param name - the module's name in errors
   * @param packaged - where the package ships the file (a literal `new URL(..., import.meta.url)`
   *   in the caller, so bundlers see and copy the file)
   */
  constructor(
    readonly name: 'detect' | 'memory',
    private readonly packaged: () => URL,
  ) {}

  /** Compiles and instantiates the module from `source`, or from the packaged file. */
  load(source: WasmSource | undefined): Promise<void> {
    if (this.loaded) return Promise.resolve();
    this.loading ??= (async () => {
      const module = await compileFrom(source ?? this.packaged());
      this.loaded = { module, exports: instantiate<X>(module), epoch: 0 };
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /** True once loaded. */
  get ready(): boolean {
    return this.loaded !== undefined;
  }

  /** The live exports; throws when not loaded. */
  exports(): X {
    if (!this.loaded) throw new DedupNotInitializedError(this.name);
    return this.loaded.exports;
  }

  /** Increments each time the instance is replaced after a trap; handles remember theirs. */
  epoch(): number {
    if (!this.loaded) throw new DedupNotInitializedError(this.name);
    return this.loaded.epoch;
  }

  /** Replaces a trapped instance with a fresh one from the same compiled module. */
  recover(): void {
    if (!this.loaded) return;
    this.loaded = { module: this.loaded.module, exports: instantiate<X>(this.loaded.module), epoch: this.loaded.epoch + 1 };
  }
}

function instantiate<X>(module: WebAssembly.Module): X {
  const instance = new WebAssembly.Instance(module, {});
  return instance.exports as unknown as X;
}

/** The detection module. */
export const detectModule = new WasmModuleSlot<CoreExports>('detect', () => new URL('../wasm/dedup_wasm.wasm', import.meta.url));
/** The memory-dedup module. */
export const memoryModule = new WasmModuleSlot<MemoryExports>('memory', () => new URL('../wasm/dedup_memory.wasm', import.meta.url));

function isSources(source: WasmSource | WasmSources): source is WasmSources {
  return typeof source === 'object' && source !== null && !(source instanceof WebAssembly.Module) && !(source instanceof URL) &&
    !(typeof Response !== 'undefined' && source instanceof Response) && !ArrayBuffer.isView(source) && !(source instanceof ArrayBuffer);
}

/**
 * Loads the WebAssembly core. Call it once and await it before anything else; later calls return
 * at once for what is already loaded.
 *
 * - With no argument it loads both modules from the package: in Node from disk, elsewhere from the
 *   URLs next to the package's code (bundlers that understand `new URL(..., import.meta.url)` copy
 *   the files).
 * - With one source (browsers, workers: a `URL` such as `new URL('dedup-wasm/wasm', import.meta.url)`,
 *   a `Response`, the bytes, or a compiled `WebAssembly.Module`) it loads the detection module only.
 * - With `{ detect, memory }` it loads the modules given. Memory dedup (`dedup-wasm/memory`) needs
 *   the memory module; without it its calls throw {@link DedupNotInitializedError}.
 */
export async function initDedupWasm(source?: WasmSource | WasmSources): Promise<void> {
  if (source === undefined) {
    await Promise.all([detectModule.load(undefined), memoryModule.load(undefined)]);
  } else if (isSources(source)) {
    const jobs: Promise<void>[] = [];
    if (source.detect !== undefined) jobs.push(detectModule.load(source.detect));
    if (source.memory !== undefined) jobs.push(memoryModule.load(source.memory));
    if (jobs.length === 0) throw new TypeError('initDedupWasm: the sources object names neither `detect` nor `memory`');
    await Promise.all(jobs);
  } else {
    await detectModule.load(source);
  }
}

/** True once the detection module is loaded (see {@link initDedupWasm}). */
export function isDedupWasmReady(): boolean {
  return detectModule.ready;
}

/** The live exports of the detection module; throws when not initialized. */
export function core(): CoreExports {
  return detectModule.exports();
}

/** The detection instance's epoch (see {@link WasmModuleSlot.epoch}). */
export function epoch(): number {
  return detectModule.epoch();
}
