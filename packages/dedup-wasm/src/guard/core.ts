/**
 * The one call into the core that the input guard makes: every document at once, kept ranges and
 * removals back as u32s.
 * @module
 */
import { throwCoreError, call, putString, release } from '../wasm/abi.js';

const encoder = new TextEncoder();

/** A document for the core. */
export interface CoreDoc {
  text: string;
  /** Never changed; its blocks still count as originals. */
  pinned: boolean;
}

/** A removal, offsets in UTF-16 units of the named documents. */
export interface CoreRemoval {
  doc: number;
  start: number;
  end: number;
  dupDoc: number;
  dupStart: number;
  dupEnd: number;
}

/** What the core decided. */
export interface CoreOutcome {
  /** Per document: flat `[start, end, start, end, …]` of what remains, in order. */
  kept: number[][];
  /** Per document: non-blank blocks that remain (0 when all of its text was repeats). */
  keptBlocks: number[];
  removals: CoreRemoval[];
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * UTF-8 would turn every lone surrogate into the same U+FFFD, making blocks that differ only there
 * look equal. Each lone surrogate becomes its own private-use char instead (one UTF-16 unit, like
 * the surrogate, so offsets are unchanged).
 */
function comparable(text: string): string {
  const wellFormed = (text as { isWellFormed?: () => boolean }).isWellFormed;
  if (wellFormed ? wellFormed.call(text) : !/[\uD800-\uDFFF]/.test(text)) return text;
  return text.replace(LONE_SURROGATE, (s) => String.fromCharCode(0xe000 + (s.charCodeAt(0) - 0xd800)));
}

/** Runs the guard core over `docs` with `optionsJson` (empty for defaults). */
export function runGuard(docs: readonly CoreDoc[], optionsJson: string): CoreOutcome {
  return call((x) => {
    const texts = docs.map((d) => comparable(d.text));
    let units = 0;
    for (const t of texts) units += t.length;
    const cap = units * 3;
    const metaCap = docs.length * 8;
    const textPtr = cap > 0 ? x.dw_alloc(cap) : 0;
    const metaPtr = metaCap > 0 ? x.dw_alloc(metaCap) : 0;
    if ((cap > 0 && textPtr === 0) || (metaCap > 0 && metaPtr === 0)) {
      if (textPtr) x.dw_free(textPtr, cap);
      if (metaPtr) x.dw_free(metaPtr, metaCap);
      throw new RangeError(`dedup-wasm: out of memory copying ${units} chars`);
    }
    let opts;
    try {
      opts = putString(x, optionsJson);
    } catch (e) {
      if (textPtr) x.dw_free(textPtr, cap);
      if (metaPtr) x.dw_free(metaPtr, metaCap);
      throw e;
    }
    try {
      // Views after every allocation: memory may have grown.
      const mem = new Uint8Array(x.memory.buffer);
      const meta = new DataView(x.memory.buffer, metaPtr, metaCap);
      let off = 0;
      texts.forEach((t, i) => {
        const written = t.length === 0 ? 0 : encoder.encodeInto(t, mem.subarray(textPtr + off, textPtr + cap)).written;
        meta.setUint32(i * 8, written, true);
        meta.setUint32(i * 8 + 4, docs[i]!.pinned ? 1 : 0, true);
        off += written;
      });
      if (x.dw_guard_dedup(textPtr, off, metaPtr, docs.length, opts.ptr, opts.len) < 0) throwCoreError(x);
      return decode(readWords(x));
    } finally {
      if (textPtr) x.dw_free(textPtr, cap);
      if (metaPtr) x.dw_free(metaPtr, metaCap);
      release(x, opts);
    }
  });
}

/** Copies the output buffer as little-endian u32s. */
export function readWords(x: { memory: WebAssembly.Memory; dw_out_ptr(): number; dw_out_len(): number }): Uint32Array {
  const len = x.dw_out_len();
  const ptr = x.dw_out_ptr();
  // slice() copies, so the words are aligned and survive the next call.
  return new Uint32Array(x.memory.buffer.slice(ptr, ptr + (len - (len % 4))));
}

function decode(w: Uint32Array): CoreOutcome {
  let i = 0;
  const next = (): number => w[i++] ?? 0;
  const nDocs = next();
  const kept: number[][] = [];
  const keptBlocks: number[] = [];
  for (let d = 0; d < nDocs; d++) {
    const n = next();
    keptBlocks.push(next());
    const ranges: number[] = new Array<number>(n * 2);
    for (let k = 0; k < n * 2; k++) ranges[k] = next();
    kept.push(ranges);
  }
  const nRemoved = next();
  const removals: CoreRemoval[] = [];
  for (let r = 0; r < nRemoved; r++) {
    removals.push({ doc: next(), start: next(), end: next(), dupDoc: next(), dupStart: next(), dupEnd: next() });
  }
  return { kept, keptBlocks, removals };
}

/** The text that remains of `text` given its flat kept ranges. */
export function applyKept(text: string, ranges: readonly number[]): string {
  if (ranges.length === 2 && ranges[0] === 0 && ranges[1] === text.length) return text;
  let out = '';
  for (let k = 0; k < ranges.length; k += 2) out += text.slice(ranges[k], ranges[k + 1]);
  return out;
}

/** How the core splits `text`: mode code and flat `(start, end, isBlock)` triples. */
export function runSplit(text: string): Uint32Array {
  return call((x) => {
    const t = putString(x, comparable(text));
    try {
      if (x.dw_guard_split(t.ptr, t.len) < 0) throwCoreError(x);
      return readWords(x);
    } finally {
      release(x, t);
    }
  });
}
