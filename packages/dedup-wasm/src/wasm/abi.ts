/**
 * Calling the core: strings in through linear memory, JSON or packed numbers out, errors mapped to
 * typed TS errors, traps turned into {@link DedupWasmTrapError} plus a fresh instance.
 * @module
 */
import { DedupWasmTrapError, toArgumentError, type CoreError } from '../errors.js';
import { detectModule, type CoreExports, type SharedExports, type WasmModuleSlot } from './loader.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Bytes of input copied into wasm memory for one call. */
export interface Input {
  /** Address in wasm memory (0 for the empty string). */
  ptr: number;
  /** Bytes written. */
  len: number;
  /** Bytes reserved (what `dw_free` needs). */
  cap: number;
}

/** Copies `text` into wasm memory as UTF-8 (lone surrogates become U+FFFD, one UTF-16 unit each). */
export function putString(x: SharedExports, text: string): Input {
  if (text.length === 0) return { ptr: 0, len: 0, cap: 0 };
  // UTF-8 needs at most 3 bytes per UTF-16 unit.
  const cap = text.length * 3;
  const ptr = x.dw_alloc(cap);
  if (ptr === 0) throw new RangeError(`dedup-wasm: out of memory copying ${text.length} chars`);
  const { written } = encoder.encodeInto(text, new Uint8Array(x.memory.buffer, ptr, cap));
  return { ptr, len: written, cap };
}

/**
 * A reusable input region, so a stream feed (thousands per second) needs no alloc and free, with a
 * view onto it that is made again only when memory grows (growing detaches the old buffer, and
 * every view of it then has length 0).
 */
let scratch: { x: SharedExports; ptr: number; cap: number; view: Uint8Array } | null = null;

/** Below this many UTF-16 units an ASCII chunk is copied by hand: a call to `encodeInto` costs more. */
const SHORT_CHUNK = 32;

/**
 * Copies `text` into a region of wasm memory reused from call to call (grown when too small) and
 * returns its length in bytes; the region starts at {@link scratchPtr}. The bytes are only valid
 * until the next call of this function; never release them. (A length rather than an
 * {@link Input}: a stream feed makes no garbage but the check it returns.)
 */
export function putScratchString(x: SharedExports, text: string): number {
  const n = text.length;
  if (n === 0) return 0;
  const need = n * 3;
  if (scratch === null || scratch.x !== x || scratch.cap < need) {
    if (scratch !== null && scratch.x === x) x.dw_free(scratch.ptr, scratch.cap);
    scratch = null;
    const cap = Math.max(1024, 2 ** Math.ceil(Math.log2(need)));
    const ptr = x.dw_alloc(cap);
    if (ptr === 0) throw new RangeError(`dedup-wasm: out of memory copying ${n} chars`);
    scratch = { x, ptr, cap, view: new Uint8Array(x.memory.buffer, ptr, cap) };
  }
  if (scratch.view.byteLength === 0) scratch.view = new Uint8Array(x.memory.buffer, scratch.ptr, scratch.cap);
  const view = scratch.view;
  if (n <= SHORT_CHUNK) {
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) break;
      view[i] = c;
    }
    if (i === n) return n;
  }
  return encoder.encodeInto(text, view).written;
}

/** Where the last {@link putScratchString} wrote (0 before the first non-empty one). */
export function scratchPtr(): number {
  return scratch === null ? 0 : scratch.ptr;
}

/** Releases an {@link Input}. */
export function release(x: SharedExports, input: Input): void {
  if (input.cap !== 0) x.dw_free(input.ptr, input.cap);
}

/** Reads the output buffer as a string. */
export function readOut(x: SharedExports): string {
  const len = x.dw_out_len();
  if (len === 0) return '';
  return decoder.decode(new Uint8Array(x.memory.buffer, x.dw_out_ptr(), len));
}

/** Reads the output buffer as JSON. */
export function readJson<T>(x: SharedExports): T {
  return JSON.parse(readOut(x)) as T;
}

/** Throws the typed error the core reported. */
export function throwCoreError(x: SharedExports): never {
  throw toArgumentError(readJson<CoreError>(x));
}

/**
 * Runs `f` against a module: the detection module unless `module` names another. A trap
 * (`WebAssembly.RuntimeError`) is rethrown as {@link DedupWasmTrapError} after the instance is
 * replaced.
 */
export function call<T, X extends SharedExports = CoreExports>(f: (x: X) => T, module: WasmModuleSlot<X> = detectModule as unknown as WasmModuleSlot<X>): T {
  const x = module.exports();
  try {
    return f(x);
  } catch (e) {
    return rethrowTrap(e, module);
  }
}

/**
 * What a call into `module` that threw `e` throws: a trap becomes {@link DedupWasmTrapError} after
 * the instance is replaced; anything else is rethrown as it is.
 */
export function rethrowTrap(e: unknown, module: WasmModuleSlot<SharedExports> = detectModule): never {
  if (e instanceof WebAssembly.RuntimeError) {
    module.recover();
    throw new DedupWasmTrapError(`dedup-wasm ${module.name} module trapped (${e.message}); it was restarted`, { cause: e });
  }
  throw e;
}

/** Calls an export taking strings; the strings are copied in and released afterwards. */
export function withStrings<T, X extends SharedExports = CoreExports>(
  texts: string[],
  f: (x: X, inputs: Input[]) => T,
  module: WasmModuleSlot<X> = detectModule as unknown as WasmModuleSlot<X>,
): T {
  return call((x) => {
    const inputs: Input[] = [];
    try {
      for (const t of texts) inputs.push(putString(x, t));
      return f(x, inputs);
    } finally {
      for (const i of inputs) release(x, i);
    }
  }, module);
}

/** JSON for the core: non-finite numbers are sent as strings so the core can name them. */
export function toCoreJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));
}
