/**
 * Types of the memory-dedup API.
 * @module
 */

/** A value or a promise of it: store methods may be synchronous or asynchronous. */
export type MaybePromise<T> = T | Promise<T>;

/** One memory of an agent. */
export interface MemoryEntry {
  /** Unique identifier for this entry. Adding an entry with an existing id replaces that entry. */
  id: string;
  /** The text content of the memory entry. Embedded and compared for similarity. */
  content: string;
  /** Optional metadata for merge decisions and provenance (see {@link EntryMetadata}). */
  metadata?: Record<string, unknown>;
}

/** Metadata fields the merge policies read. */
export interface EntryMetadata {
  /** Unix timestamp (ms) when the entry was created (a `Date` is accepted too). */
  timestamp?: number;
  /** Unix timestamp (ms), alias for `timestamp` (used when `timestamp` is absent). */
  createdAt?: number;
  /** Confidence score from extraction (0.0 to 1.0). */
  confidence?: number;
  /** Additional caller-defined fields. */
  [key: string]: unknown;
}

/** The four tiers. */
export type Classification = 'exact_duplicate' | 'semantic_duplicate' | 'related' | 'unique';

/** Names of the built-in merge policies. */
export type MergePolicyName = 'keep-newest' | 'keep-oldest' | 'keep-longest' | 'keep-highest-confidence' | 'merge';

/**
 * A custom merge policy: given the incoming (newer) entry, the existing (older) match and their
 * similarity, return the entry that survives. Its `id` must be the candidate's or the match's.
 */
export type MergeFunction = (candidate: MemoryEntry, match: MemoryEntry, similarity: number) => MemoryEntry;

/** A merge policy: a built-in name or a function. */
export type MergePolicy = MergePolicyName | MergeFunction;

/** A vector as embedders return it. */
export type EmbeddingVector = number[] | Float32Array;

/**
 * Turns text into an embedding. Any `(text) => Promise<number[]>` works. An embedder may also
 * carry `embedMany(texts)`: `addBatch` then embeds a whole batch in one call.
 */
export type Embedder = ((text: string) => Promise<EmbeddingVector> | EmbeddingVector) & {
  embedMany?: (texts: string[]) => Promise<EmbeddingVector[]> | EmbeddingVector[];
};

/** A store's answer to a similarity query. */
export interface StoreMatch {
  /** Id of the stored entry. */
  id: string;
  /** Cosine similarity to the query, in [-1, 1]. */
  similarity: number;
}

/**
 * Where entries, embeddings and hashes live. Every method may return a promise.
 *
 * - `add` stores an entry (replacing an entry with the same id).
 * - `all` returns entries in insertion order, oldest first (the deduplicator's fallback order for
 *   `keep-newest` / `keep-oldest`).
 * - `search`, when present, answers k-nearest-neighbor queries by cosine similarity from the
 *   store's own index; without it the deduplicator keeps a wasm index of the store's embeddings.
 * - `allEmbeddings`, when present, returns every embedding in one call.
 */
export interface StoreBackend {
  add(entry: MemoryEntry, embedding: EmbeddingVector, hash: string): MaybePromise<void>;
  get(id: string): MaybePromise<MemoryEntry | null>;
  remove(id: string): MaybePromise<void>;
  all(): MaybePromise<MemoryEntry[]>;
  getEmbedding(id: string): MaybePromise<EmbeddingVector | null>;
  getHash(hash: string): MaybePromise<string | null>;
  size(): MaybePromise<number>;
  clear(): MaybePromise<void>;
  /** Optional: the `k` stored entries most similar to `embedding`, best first. */
  search?(embedding: Float32Array, k: number): MaybePromise<StoreMatch[]>;
  /** Optional: every stored embedding at once (sweep and compact use it instead of one `getEmbedding` per entry). */
  allEmbeddings?(): MaybePromise<Array<{ id: string; embedding: EmbeddingVector }>>;
}

/** Options of `createDeduplicator`. */
export interface DedupOptions {
  /** Embedding function (default: `createLexicalEmbedder()`, offline and deterministic). */
  embedder?: Embedder;
  /** Cosine similarity threshold for semantic duplicates (default 0.90). */
  threshold?: number;
  /** Cosine similarity threshold for exact duplicates (default 0.98). */
  exactThreshold?: number;
  /** Cosine similarity threshold for related entries (default 0.75). */
  relatedThreshold?: number;
  /** How to resolve a detected duplicate (default `'keep-newest'`). */
  mergePolicy?: MergePolicy;
  /** Storage backend (default: an in-memory store with a wasm vector index). */
  store?: StoreBackend;
}

/** Result of `check()`. */
export interface DedupResult {
  classification: Classification;
  /** Id of the best-matching existing entry. */
  matchId?: string;
  /** Cosine similarity with the best match (1 for a confirmed hash match). */
  similarity?: number;
  /** True when matched by content hash and normalized text (no embedding call needed). */
  hashMatch?: boolean;
  /** Wall-clock time in milliseconds. */
  durationMs: number;
}

/** Result of `add()`. */
export interface AddResult extends DedupResult {
  /** `added`: stored; `merged`: the store changed to resolve a duplicate; `skipped`: nothing changed. */
  action: 'added' | 'merged' | 'skipped';
  /** Id of the surviving entry after a merge. */
  survivorId?: string;
  /** Id of the entry that lost the merge. */
  evictedId?: string;
}

/** Result of `addBatch()`. */
export interface BatchResult {
  /** Per-entry results in input order. */
  results: AddResult[];
  totalProcessed: number;
  uniqueAdded: number;
  duplicatesFound: number;
  durationMs: number;
}

/** Result of `sweep()`. */
export interface SweepResult {
  /** `[survivorId, evictedId]` for every duplicate resolved. */
  duplicatePairs: Array<[string, string]>;
  duplicateCount: number;
  evictedCount: number;
  evictedIds: string[];
  totalScanned: number;
  durationMs: number;
}

/** Result of `compact()`. */
export interface CompactResult extends SweepResult {
  /** Clusters that were merged into one entry each. */
  clustersFound: number;
  /** Entries merged into a cluster's survivor. */
  mergedCount: number;
}

/** Counters of a deduplicator. */
export interface DedupStats {
  /** Entries currently in the index. */
  totalEntries: number;
  /** Entries processed by `add()` / `addBatch()` (`check()` does not count). */
  totalChecks: number;
  /** Exact duplicates detected by `add()` / `addBatch()`. */
  exactDuplicates: number;
  /** Semantic duplicates detected by `add()` / `addBatch()`. */
  semanticDuplicates: number;
  /** Entries added because they were not duplicates (tiers `unique` and `related`). */
  uniqueEntries: number;
  /** Cumulative processing time of add, addBatch, sweep and compact (ms). */
  durationMs?: number;
}

/** Payload of `duplicate-found`. */
export interface DuplicateFoundEvent {
  /** The incoming entry (for `sweep` / `compact`, the newer of the pair). */
  entry: MemoryEntry;
  matchId: string;
  similarity: number;
  classification: 'exact_duplicate' | 'semantic_duplicate';
  hashMatch: boolean;
  source: 'add' | 'sweep' | 'compact';
}

/** Payload of `merged`. */
export interface MergedEvent {
  survivorId: string;
  /** The survivor as stored after the merge. */
  survivor: MemoryEntry;
  /** Ids merged into the survivor. */
  mergedIds: string[];
  similarity: number;
  source: 'add' | 'sweep' | 'compact';
}

/** Why an entry left the index. */
export type EvictionReason = 'duplicate' | 'replaced' | 'removed' | 'cleared' | 'sweep' | 'compact';

/** Payload of `evicted`: sent for every entry that leaves the index or loses a merge. */
export interface EvictedEvent {
  id: string;
  /** The entry as it was. */
  entry: MemoryEntry;
  /** The entry that took its place; null for `remove()` and `clear()`. */
  survivorId: string | null;
  reason: EvictionReason;
  /** False for an incoming entry that lost a merge before it was ever stored. */
  wasStored: boolean;
  similarity?: number;
}

/** Payload of `added`. */
export interface AddedEvent {
  entry: MemoryEntry;
  classification: 'unique' | 'related';
  matchId?: string;
  similarity?: number;
}

/** Event names and their payloads. */
export interface DedupEvents {
  'duplicate-found': DuplicateFoundEvent;
  merged: MergedEvent;
  evicted: EvictedEvent;
  added: AddedEvent;
}

/** Options of `sweep()` / `compact()`. */
export interface SweepOptions {
  /** Similarity at or above which two entries are merged (default: the deduplicator's `threshold`). */
  threshold?: number;
}

/** A deduplicator (see `createDeduplicator`). */
export interface MemoryDedup {
  /**
   * Classifies an entry against the index without changing anything (stats included). An entry
   * whose id is already stored is compared with the other entries, as `add()` would.
   */
  check(entry: MemoryEntry): Promise<DedupResult>;
  /** Adds an entry, resolving a duplicate with the merge policy. Mutations run one at a time. */
  add(entry: MemoryEntry): Promise<AddResult>;
  /** Adds entries in order, each checked against the index including earlier batch entries. */
  addBatch(entries: MemoryEntry[]): Promise<BatchResult>;
  /** Finds duplicate pairs among stored entries through the index and resolves them. */
  sweep(options?: SweepOptions): Promise<SweepResult>;
  /** Merges clusters of duplicates; every member is within the threshold of the survivor. */
  compact(options?: SweepOptions): Promise<CompactResult>;
  /** Entries currently in the index, in insertion order. */
  getEntries(): MemoryEntry[];
  /** Removes an entry by id (queued behind pending mutations; await it). */
  remove(id: string): Promise<void>;
  /** Removes every entry and resets counters. */
  clear(): Promise<void>;
  /** Counters. */
  stats(): DedupStats;
  /** Entries in the index. */
  size(): number;
  /** Waits until entries of a pre-filled store are loaded (every async method does this itself). */
  ready(): Promise<void>;
  /** Registers a handler; returns the unsubscribe function. */
  on<E extends keyof DedupEvents>(event: E, fn: (payload: DedupEvents[E]) => void): () => void;
  /** Removes a handler. */
  off<E extends keyof DedupEvents>(event: E, fn: (payload: DedupEvents[E]) => void): void;
}
