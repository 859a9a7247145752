/**
 * A window onto the raw wasm exports for tests: it wraps `WebAssembly.Instance` so that every instance
 * the package creates is recorded, and lets a test make one export receive a bogus pointer, which
 * makes the real core trap (out-of-bounds memory access). Import it before `initDedupWasm()`.
 */
import type { CoreExports, MemoryExports } from '../../src/wasm/loader.js';

const Original = WebAssembly.Instance;

/** Raw exports as the package declares them, plus any export looked up by name. */
export type RawExports = CoreExports & { [name: string]: unknown };

/** Raw exports of the memory-dedup module. */
export type RawMemoryExports = MemoryExports & { [name: string]: unknown };

/** Every instance created since this module was loaded, oldest first. */
export const instances: WebAssembly.Instance[] = [];

/** When set, the named export is called with a pointer far outside memory (once). */
let sabotaged: string | null = null;
let sabotagedArg = 0;

/** Makes the next call of export `name` trap, by replacing its argument `pointerArg` (a pointer). */
export function trapNextCall(name: string, pointerArg = 0): void {
  sabotaged = name;
  sabotagedArg = pointerArg;
}

class SpyInstance extends Original {
  private readonly wrapped: WebAssembly.Exports;
  constructor(module: WebAssembly.Module, imports?: WebAssembly.Imports) {
    super(module, imports);
    const real = super.exports;
    // The real exports object is frozen, so it cannot be proxied with different values: build a
    // look-alike whose getters delegate to it.
    const wrapped: Record<string, unknown> = {};
    for (const name of Object.keys(real)) {
      Object.defineProperty(wrapped, name, {
        enumerable: true,
        get() {
          const v = real[name] as unknown;
          if (name === sabotaged && typeof v === 'function') {
            return (...args: number[]) => {
              sabotaged = null;
              const bogus = args.map((a, i) => (i === sabotagedArg ? 0x7fff_fff0 : a));
              return (v as (...a: number[]) => unknown)(...bogus);
            };
          }
          return v;
        },
      });
    }
    this.wrapped = wrapped as WebAssembly.Exports;
    instances.push(this);
  }
  override get exports(): WebAssembly.Exports {
    return this.wrapped;
  }
}

(WebAssembly as { Instance: typeof WebAssembly.Instance }).Instance = SpyInstance as typeof WebAssembly.Instance;

/** The exports of the newest instance that has export `marker`. */
function newest(marker: string): WebAssembly.Exports {
  for (let i = instances.length - 1; i >= 0; i--) {
    const x = instances[i]!.exports;
    if (marker in x) return x;
  }
  throw new Error(`no instance exporting ${marker} yet: call initDedupWasm() first`);
}

/** The exports of the newest instance of the detection module. */
export function raw(): RawExports {
  return newest('dw_check_repetition') as unknown as RawExports;
}

/** The exports of the newest instance of the memory-dedup module. */
export function rawMemory(): RawMemoryExports {
  return newest('dw_index_new') as unknown as RawMemoryExports;
}

/** Calls a raw export taking one UTF-8 string; returns its status and the output buffer as text. */
export function callWithString(name: string, text: string): { code: number; out: string } {
  const x = raw();
  const bytes = new TextEncoder().encode(text);
  const ptr = bytes.length ? x.dw_alloc(bytes.length) : 0;
  new Uint8Array(x.memory.buffer, ptr, bytes.length).set(bytes);
  try {
    const code = (x[name] as (p: number, l: number) => number)(ptr, bytes.length);
    const out = new TextDecoder().decode(new Uint8Array(x.memory.buffer, x.dw_out_ptr(), x.dw_out_len()));
    return { code, out };
  } finally {
    if (bytes.length) x.dw_free(ptr, bytes.length);
  }
}
