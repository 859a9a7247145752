/**
 * A {@link WasmVectorIndex} addressed by string ids: the bookkeeping (id ↔ key maps) over the
 * core's numeric keys. Shared by the in-memory store and by the deduplicator's own index for
 * stores that cannot search.
 * @module
 */
import { WasmVectorIndex, type VectorIndexOptions } from './core.js';

/** A best match by id. */
export interface IdMatch {
  id: string;
  similarity: number;
}

/** A vector stored but not yet bound to an id (see {@link IdVectorIndex.reserve}). */
export interface Reservation {
  key: number;
  vector: Float32Array;
  matches: IdMatch[];
}

/** A wasm vector index keyed by string ids; created on the first vector (its dimension is fixed then). */
export class IdVectorIndex {
  private index: WasmVectorIndex | null = null;
  private dimension: number | null = null;
  private readonly keyOf = new Map<string, number>();
  private readonly idOf = new Map<number, string>();

  constructor(private readonly options: VectorIndexOptions = {}) {}

  /** The dimension of the stored vectors, or null while none was stored. */
  get dim(): number | null {
    return this.dimension;
  }

  get size(): number {
    return this.keyOf.size;
  }

  has(id: string): boolean {
    return this.keyOf.has(id);
  }

  private ensure(dim: number): WasmVectorIndex {
    if (!this.index) {
      this.index = new WasmVectorIndex(dim, this.options);
      this.dimension = dim;
    }
    return this.index;
  }

  private named(matches: Array<{ key: number; similarity: number }>, exclude?: string): IdMatch[] {
    const out: IdMatch[] = [];
    for (const m of matches) {
      const id = this.idOf.get(m.key);
      if (id !== undefined && id !== exclude) out.push({ id, similarity: m.similarity });
    }
    return out;
  }

  /** Stores (or replaces) the vector of `id`. */
  set(id: string, vector: Float32Array): void {
    const key = this.ensure(vector.length).add(vector);
    this.unset(id);
    this.keyOf.set(id, key);
    this.idOf.set(key, id);
  }

  /** Stores many vectors at once (all validated first). */
  setMany(items: Array<{ id: string; vector: Float32Array }>): void {
    if (items.length === 0) return;
    const dim = items[0]!.vector.length;
    const flat = new Float32Array(items.length * dim);
    items.forEach((it, i) => {
      if (it.vector.length === dim) flat.set(it.vector, i * dim);
    });
    const keys = this.ensure(dim).addMany(flat, items.length);
    items.forEach((it, i) => {
      this.unset(it.id);
      this.keyOf.set(it.id, keys[i]!);
      this.idOf.set(keys[i]!, it.id);
    });
  }

  /**
   * Stores a vector under no id yet and returns its best matches among the vectors stored before
   * it (one graph pass for "search, then add"). {@link bind} gives it an id; {@link drop} undoes it.
   */
  reserve(vector: Float32Array, k: number): Reservation {
    const { key, matches } = this.ensure(vector.length).addSearch(vector, k + 1);
    return { key, vector, matches: this.named(matches) };
  }

  /** Gives a reserved vector its id (replacing any vector the id had). */
  bind(r: Reservation, id: string): void {
    this.unset(id);
    this.keyOf.set(id, r.key);
    this.idOf.set(r.key, id);
  }

  /** Removes a reserved vector that was never bound. */
  drop(r: Reservation): void {
    if (!this.idOf.has(r.key)) this.index?.remove(r.key);
  }

  /** Removes the vector of `id`; false when there was none. */
  unset(id: string): boolean {
    const key = this.keyOf.get(id);
    if (key === undefined) return false;
    this.keyOf.delete(id);
    this.idOf.delete(key);
    this.index?.remove(key);
    return true;
  }

  get(id: string): Float32Array | null {
    const key = this.keyOf.get(id);
    return key === undefined || !this.index ? null : this.index.get(key);
  }

  search(vector: Float32Array, k: number, exclude?: string): IdMatch[] {
    if (!this.index || this.keyOf.size === 0) return [];
    return this.named(this.index.search(vector, k + (exclude !== undefined ? 1 : 0)), exclude).slice(0, k);
  }

  score(a: string, b: string): number | null {
    const ka = this.keyOf.get(a);
    const kb = this.keyOf.get(b);
    if (ka === undefined || kb === undefined || !this.index) return null;
    return this.index.score(ka, kb);
  }

  /** Every pair of ids with similarity >= threshold, most similar first. */
  pairs(threshold: number): Array<[string, string, number]> {
    if (!this.index) return [];
    const out: Array<[string, string, number]> = [];
    for (const [a, b, s] of this.index.pairs(threshold)) {
      const ia = this.idOf.get(a);
      const ib = this.idOf.get(b);
      if (ia !== undefined && ib !== undefined) out.push([ia, ib, s]);
    }
    return out;
  }

  /** Clusters without chaining, as id lists (leader first). */
  clusters(threshold: number): string[][] {
    if (!this.index) return [];
    return this.index
      .clusters(threshold)
      .map((c) => c.map((k) => this.idOf.get(k)).filter((id): id is string => id !== undefined))
      .filter((c) => c.length > 1);
  }

  /** Removes everything and frees the wasm index (the next vector may have any dimension). */
  clear(): void {
    this.index?.dispose();
    this.index = null;
    this.dimension = null;
    this.keyOf.clear();
    this.idOf.clear();
  }
}
