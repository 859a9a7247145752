/**
 * Memory dedup: detect and merge duplicate agent memories by content hash and embedding
 * similarity, at any scale (`dedup-wasm/memory`, also exported from the package root).
 * @module
 */
export { createDeduplicator } from './deduplicator.js';
export { createLexicalEmbedder, type LexicalEmbedder, type LexicalEmbedderOptions } from './lexical.js';
export { createInMemoryStore, InMemoryStore, type InMemoryStoreOptions } from './memory-store.js';
export { cosineSimilarity, normalizeMemoryText, WasmVectorIndex, type KeyMatch, type NormalizedText, type VectorIndexOptions } from './core.js';
export { MERGE_POLICIES, mergeMetadata } from './policies.js';
export type {
  AddedEvent,
  AddResult,
  BatchResult,
  Classification,
  CompactResult,
  DedupEvents,
  DedupOptions,
  DedupResult,
  DedupStats,
  DuplicateFoundEvent,
  Embedder,
  EmbeddingVector,
  EntryMetadata,
  EvictedEvent,
  EvictionReason,
  MaybePromise,
  MemoryDedup,
  MemoryEntry,
  MergedEvent,
  MergeFunction,
  MergePolicy,
  MergePolicyName,
  StoreBackend,
  StoreMatch,
  SweepOptions,
} from './types.js';
