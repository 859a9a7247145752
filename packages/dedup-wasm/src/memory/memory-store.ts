/**
 * The default store: entries in a Map, embeddings in a wasm vector index.
 * @module
 */
import { toEmbedding, type VectorIndexOptions } from './core.js';
import { IdVectorIndex, type Reservation } from './id-index.js';
import type { EmbeddingVector, MemoryEntry, StoreBackend, StoreMatch } from './types.js';

/** Internal hook: search for an add and keep the vector stored, so the add costs one graph pass. */
export const RESERVE = Symbol('dedup-wasm.memory.reserve');
/** Internal hook: the store's own index, used by sweep and compact. */
export const ID_INDEX = Symbol('dedup-wasm.memory.index');

/** Options of {@link createInMemoryStore}. */
export type InMemoryStoreOptions = VectorIndexOptions;

/**
 * A synchronous in-memory {@link StoreBackend}. Embeddings live as f32 rows in the wasm core; search
 * is exact up to `annThreshold` entries (default 1,024) and uses an HNSW graph above that, so an
 * add costs about a millisecond at 10,000 entries instead of a scan of all of them.
 */
export class InMemoryStore implements StoreBackend {
  private readonly entries = new Map<string, { entry: MemoryEntry; hash: string }>();
  private readonly hashes = new Map<string, Set<string>>();
  private readonly index: IdVectorIndex;
  private pending: Reservation | null = null;

  constructor(options: InMemoryStoreOptions = {}) {
    this.index = new IdVectorIndex(options);
  }

  private settle(): void {
    if (this.pending) {
      this.index.drop(this.pending);
      this.pending = null;
    }
  }

  add(entry: MemoryEntry, embedding: EmbeddingVector, hash: string): void {
    const pending = this.pending;
    this.pending = null;
    if (pending && pending.vector === embedding) {
      this.index.bind(pending, entry.id);
    } else {
      if (pending) this.index.drop(pending);
      this.index.set(entry.id, toEmbedding(embedding, 'embedding', this.index.dim ?? undefined));
    }
    this.forgetHash(entry.id);
    this.entries.delete(entry.id);
    this.entries.set(entry.id, { entry, hash });
    let ids = this.hashes.get(hash);
    if (!ids) this.hashes.set(hash, (ids = new Set()));
    ids.add(entry.id);
  }

  private forgetHash(id: string): void {
    const old = this.entries.get(id);
    if (!old) return;
    const ids = this.hashes.get(old.hash);
    ids?.delete(id);
    if (ids && ids.size === 0) this.hashes.delete(old.hash);
  }

  get(id: string): MemoryEntry | null {
    return this.entries.get(id)?.entry ?? null;
  }

  remove(id: string): void {
    this.settle();
    this.forgetHash(id);
    this.entries.delete(id);
    this.index.unset(id);
  }

  all(): MemoryEntry[] {
    return [...this.entries.values()].map((e) => e.entry);
  }

  getEmbedding(id: string): Float32Array | null {
    return this.index.get(id);
  }

  getHash(hash: string): string | null {
    const ids = this.hashes.get(hash);
    return ids && ids.size > 0 ? ids.values().next().value! : null;
  }

  size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.pending = null;
    this.entries.clear();
    this.hashes.clear();
    this.index.clear();
  }

  search(embedding: Float32Array, k: number): StoreMatch[] {
    this.settle();
    return this.index.search(embedding, k);
  }

  /** @internal Search for an add whose vector stays reserved until `add` with the same array. */
  [RESERVE](embedding: Float32Array, k: number): StoreMatch[] {
    this.settle();
    this.pending = this.index.reserve(embedding, k);
    return this.pending.matches.slice(0, k + 1);
  }

  /** @internal The index, for sweep and compact. */
  [ID_INDEX](): IdVectorIndex {
    this.settle();
    return this.index;
  }
}

/** Creates the default in-memory store (see {@link InMemoryStore}). */
export function createInMemoryStore(options: InMemoryStoreOptions = {}): InMemoryStore {
  return new InMemoryStore(options);
}
