/**
 * Typed access to the core's memory-dedup exports: the vector index (f32 rows in wasm memory,
 * exact search while small, HNSW above a size), text normalization with its 128-bit hash, cosine
 * similarity and the lexical embedder. Vectors cross the boundary as raw little-endian f32.
 * @module
 */
import { DedupRangeError, DedupTypeError, DedupWasmTrapError } from '../errors.js';
import { call, readOut, release, throwCoreError, withStrings, type Input } from '../wasm/abi.js';
import { memoryModule, type MemoryExports } from '../wasm/loader.js';
import { handleRegistry } from '../wasm/handles.js';

/** Runs `f` against the memory-dedup module. */
function callMemory<T>(f: (x: MemoryExports) => T): T {
  return call(f, memoryModule);
}

/** {@link withStrings} on the memory-dedup module. */
function withMemoryStrings<T>(texts: string[], f: (x: MemoryExports, inputs: Input[]) => T): T {
  return withStrings(texts, f, memoryModule);
}

/** A text after normalization for the exact tier, with its hash. */
export interface NormalizedText {
  /** 32 hex digits (128 bits) of the normalized text. */
  hash: string;
  /** NFKC, case-folded, edge punctuation dropped, whitespace collapsed. */
  text: string;
}

/**
 * Normalizes memory content for exact comparison: Unicode NFKC, case folding, sentence punctuation
 * dropped at word edges (kept inside tokens such as `3.50` or `don't`), whitespace collapsed.
 * Letters and digits of every script and all symbols (`$`, `%`, `°`) are kept, so two different
 * Chinese, Russian or Arabic memories never normalize alike, and `"$3.50"` differs from `"3 50"`.
 */
export function normalizeMemoryText(content: string): NormalizedText {
  if (typeof content !== 'string') throw new DedupTypeError('content', 'must be a string');
  return withMemoryStrings([content.normalize('NFKC')], (x, [t]) => {
    if (x.dw_memory_normalize(t!.ptr, t!.len) < 0) throwCoreError(x);
    const out = readOut(x);
    return { hash: out.slice(0, 32), text: out.slice(32) };
  });
}

/** Copies f32 values into wasm memory. */
function putF32(x: MemoryExports, v: Float32Array): Input {
  if (v.length === 0) return { ptr: 0, len: 0, cap: 0 };
  const len = v.length * 4;
  const ptr = x.dw_alloc(len);
  if (ptr === 0) throw new RangeError(`dedup-wasm: out of memory copying ${v.length} floats`);
  new Uint8Array(x.memory.buffer, ptr, len).set(new Uint8Array(v.buffer, v.byteOffset, len));
  return { ptr, len, cap: len };
}

/** A copy of the output buffer. */
function outCopy(x: MemoryExports): ArrayBuffer {
  const ptr = x.dw_out_ptr();
  return x.memory.buffer.slice(ptr, ptr + x.dw_out_len());
}

/**
 * Converts an embedding to a Float32Array, checking it is a non-empty array of finite numbers
 * with a non-zero norm (and, when `dim` is given, of that dimension).
 * @throws DedupTypeError when it is not an array of numbers; DedupRangeError otherwise
 */
export function toEmbedding(value: unknown, field: string, dim?: number): Float32Array {
  if (!(value instanceof Float32Array || value instanceof Float64Array || Array.isArray(value))) {
    throw new DedupTypeError(field, 'must be an array of numbers or a Float32Array', `${field} must be an array of numbers, got ${value === null ? 'null' : typeof value}`);
  }
  const src = value as ArrayLike<unknown>;
  if (dim !== undefined && src.length !== dim) {
    throw new DedupRangeError(field, 'must have the same dimension as the index', `${field} has ${src.length} dimensions but the index holds ${dim}-dimensional vectors (was the embedder changed?)`);
  }
  if (src.length === 0) throw new DedupRangeError(field, 'must not be empty', `${field} is an empty vector`);
  const out = value instanceof Float32Array ? value : new Float32Array(src.length);
  let sum = 0;
  for (let i = 0; i < src.length; i++) {
    const n = src[i];
    if (typeof n !== 'number') throw new DedupTypeError(field, 'must be an array of numbers', `${field}[${i}] is ${typeof n}, not a number`);
    if (out !== value) out[i] = n;
    const f = out[i]!;
    if (!Number.isFinite(f)) throw new DedupRangeError(field, 'must contain only finite numbers', `${field}[${i}] is ${n}, not a finite number${Number.isFinite(n) ? " once stored as f32" : ""}`);
    sum += f * f;
  }
  if (!(sum > 0) || !Number.isFinite(1 / Math.sqrt(sum))) {
    throw new DedupRangeError(field, 'must not be the zero vector', `${field} is the zero vector (norm 0): cosine similarity is undefined for it`);
  }
  return out;
}

/**
 * Cosine similarity of two embeddings of equal dimension, computed in the core.
 * @throws DedupRangeError for different dimensions, zero vectors or non-finite values
 */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const va = toEmbedding(a, 'a');
  const vb = toEmbedding(b, 'b', va.length);
  return callMemory((x) => {
    const ia = putF32(x, va);
    const ib = putF32(x, vb);
    try {
      const s = x.dw_vector_cosine(ia.ptr, ia.len, ib.ptr, ib.len);
      if (s < -1.5) throwCoreError(x);
      return s;
    } finally {
      release(x, ia);
      release(x, ib);
    }
  });
}

/** The lexical embedding of a text (see `createLexicalEmbedder`). */
export function lexicalEmbed(text: string, dims: number): Float32Array {
  if (typeof text !== 'string') throw new DedupTypeError('text', 'must be a string');
  return withMemoryStrings([text.normalize('NFKC')], (x, [t]) => {
    if (x.dw_lexical_embed(t!.ptr, t!.len, dims) < 0) throwCoreError(x);
    return new Float32Array(outCopy(x));
  });
}

/** Settings of a {@link WasmVectorIndex}; omitted values take the core's defaults. */
export interface VectorIndexOptions {
  /**
   * Live vectors above which searches use the HNSW graph instead of a full scan (default 1,024).
   * `Infinity` keeps search exact at any size.
   */
  annThreshold?: number;
  /** HNSW links per node on upper levels, 2..64 (default 24; level 0 keeps twice as many). */
  m?: number;
  /** HNSW beam width while inserting, 1..4096 (default 64). */
  efConstruction?: number;
  /** HNSW beam width while searching, 1..4096 (default 64). */
  efSearch?: number;
}

/** A best match: key and cosine similarity. */
export interface KeyMatch {
  key: number;
  similarity: number;
}

function intOption(v: number | undefined, field: string, min: number, max: number, allowInfinity = false): number {
  if (v === undefined) return 0;
  if (allowInfinity && v === Infinity) return 0xffffffff;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new DedupRangeError(field, `must be an integer in [${min}, ${max}]${allowInfinity ? ' or Infinity' : ''}`, `${field} must be an integer in [${min}, ${max}], got ${String(v)}`);
  }
  return v;
}

const registry = handleRegistry<MemoryExports>((x, handle) => x.dw_index_free(handle), memoryModule);

function readMatches(buf: ArrayBuffer, offset: number, count: number): KeyMatch[] {
  const dv = new DataView(buf);
  const out: KeyMatch[] = [];
  for (let i = 0; i < count; i++) {
    out.push({ key: dv.getUint32(offset + i * 8, true), similarity: dv.getFloat32(offset + i * 8 + 4, true) });
  }
  return out;
}

/**
 * A vector index living in the wasm core, addressed by numeric keys. Vectors are stored as given
 * (f32); similarity is cosine. Search is exact up to `annThreshold` vectors and goes through a
 * deterministic HNSW graph above it (candidates are scored exactly on the full vectors).
 *
 * The index lives in wasm memory: `dispose()` it when done (a forgotten one is freed by GC).
 */
export class WasmVectorIndex {
  private slot: { handle: number; epoch: number } | null;
  /** Dimension of every vector. */
  readonly dim: number;

  constructor(dim: number, options: VectorIndexOptions = {}) {
    this.dim = intOption(dim, 'dim', 1, 65536);
    const ann = intOption(options.annThreshold, 'annThreshold', 1, 0xfffffffe, true);
    const m = intOption(options.m, 'm', 2, 64);
    const efc = intOption(options.efConstruction, 'efConstruction', 1, 4096);
    const efs = intOption(options.efSearch, 'efSearch', 1, 4096);
    const handle = callMemory((x) => {
      const h = x.dw_index_new(this.dim, ann, m, efc, efs);
      if (h === 0) throwCoreError(x);
      return h;
    });
    this.slot = { handle, epoch: memoryModule.epoch() };
    registry.register(this, this.slot, this);
  }

  private live(): number {
    if (!this.slot) throw new Error('dedup-wasm: this vector index was disposed');
    if (this.slot.epoch !== memoryModule.epoch()) {
      throw new DedupWasmTrapError('dedup-wasm: this vector index was lost when the core restarted after a trap; rebuild it');
    }
    return this.slot.handle;
  }

  private withVector<T>(v: Float32Array, f: (x: MemoryExports, h: number, input: Input) => T): T {
    const h = this.live();
    return callMemory((x) => {
      const input = putF32(x, v);
      try {
        return f(x, h, input);
      } finally {
        release(x, input);
      }
    });
  }

  /** Stores a vector; returns its key. @throws DedupRangeError for a bad vector */
  add(v: Float32Array): number {
    return this.withVector(v, (x, h, i) => {
      const key = x.dw_index_add(h, i.ptr, i.len);
      if (key < 0) throwCoreError(x);
      return key;
    });
  }

  /** Stores `count` vectors laid out back to back; all or none. Returns their keys. */
  addMany(flat: Float32Array, count: number): number[] {
    return this.withVector(flat, (x, h, i) => {
      const n = x.dw_index_add_many(h, i.ptr, i.len, count);
      if (n < 0) throwCoreError(x);
      return Array.from(new Uint32Array(outCopy(x)));
    });
  }

  /**
   * Stores a vector and returns its key with its `k` best matches among the vectors stored before
   * it (in graph mode taken from the insertion's own search: one pass instead of two).
   */
  addSearch(v: Float32Array, k: number): { key: number; matches: KeyMatch[] } {
    return this.withVector(v, (x, h, i) => {
      const key = x.dw_index_add_search(h, i.ptr, i.len, k);
      if (key < 0) throwCoreError(x);
      const buf = outCopy(x);
      return { key, matches: readMatches(buf, 4, new DataView(buf).getUint32(0, true)) };
    });
  }

  /** The `k` most similar stored vectors, best first. */
  search(v: Float32Array, k: number): KeyMatch[] {
    return this.withVector(v, (x, h, i) => {
      const n = x.dw_index_search(h, i.ptr, i.len, k);
      if (n < 0) throwCoreError(x);
      return readMatches(outCopy(x), 0, n);
    });
  }

  /** Removes a key; false when it is not stored. */
  remove(key: number): boolean {
    const h = this.live();
    return callMemory((x) => x.dw_index_remove(h, key)) === 1;
  }

  /** The stored vector, or null. */
  get(key: number): Float32Array | null {
    const h = this.live();
    return callMemory((x) => {
      const n = x.dw_index_get(h, key);
      if (n < 0) throwCoreError(x);
      return n === 0 ? null : new Float32Array(outCopy(x));
    });
  }

  /** Cosine similarity of two stored vectors, or null when either is missing. */
  score(a: number, b: number): number | null {
    const h = this.live();
    const s = callMemory((x) => x.dw_index_score(h, a, b));
    return s < -1.5 ? null : s;
  }

  /** Every pair with similarity >= threshold as `[keyA, keyB, similarity]`, most similar first. */
  pairs(threshold: number): Array<[number, number, number]> {
    const h = this.live();
    return callMemory((x) => {
      const n = x.dw_index_pairs(h, threshold);
      if (n < 0) throwCoreError(x);
      const dv = new DataView(outCopy(x));
      const out: Array<[number, number, number]> = [];
      for (let i = 0; i < n; i++) out.push([dv.getUint32(i * 12, true), dv.getUint32(i * 12 + 4, true), dv.getFloat32(i * 12 + 8, true)]);
      return out;
    });
  }

  /**
   * Clusters without chaining: every member is within `threshold` of its cluster's leader (the
   * first key). Vectors with no neighbor above the threshold are in no cluster.
   */
  clusters(threshold: number): number[][] {
    const h = this.live();
    return callMemory((x) => {
      const n = x.dw_index_clusters(h, threshold);
      if (n < 0) throwCoreError(x);
      const words = new Uint32Array(outCopy(x));
      const out: number[][] = [];
      let at = 0;
      for (let i = 0; i < n; i++) {
        const len = words[at++]!;
        out.push(Array.from(words.subarray(at, at + len)));
        at += len;
      }
      return out;
    });
  }

  /** Live vectors. */
  get size(): number {
    const h = this.live();
    return callMemory((x) => x.dw_index_len(h));
  }

  /** Removes every vector. */
  clear(): void {
    const h = this.live();
    callMemory((x) => x.dw_index_clear(h));
  }

  /** Frees the index; later calls throw. */
  dispose(): void {
    if (!this.slot) return;
    const slot = this.slot;
    this.slot = null;
    registry.unregister(this);
    if (slot.epoch === memoryModule.epoch()) callMemory((x) => x.dw_index_free(slot.handle));
  }
}
