/**
 * Validation of deduplicator options and entries.
 * @module
 */
import { DedupRangeError, DedupTypeError } from '../errors.js';
import { MERGE_POLICIES } from './policies.js';
import type { DedupOptions, Embedder, MemoryEntry, MergePolicy, StoreBackend } from './types.js';

/** Options with defaults applied. */
export interface ResolvedOptions {
  embedder: Embedder | undefined;
  threshold: number;
  exactThreshold: number;
  relatedThreshold: number;
  mergePolicy: MergePolicy;
  store: StoreBackend | undefined;
}

function threshold(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new DedupTypeError(field, 'must be a number', `${field} must be a number, got ${typeof value}`);
  if (!Number.isFinite(value) || value <= 0 || value > 1) {
    throw new DedupRangeError(field, 'must be in (0, 1]', `${field} must be in (0, 1], got ${value}`);
  }
  return value;
}

const STORE_METHODS = ['add', 'get', 'remove', 'all', 'getEmbedding', 'size', 'clear'] as const;

/**
 * Checks options and applies defaults (0.90 / 0.98 / 0.75, `keep-newest`).
 * @throws DedupRangeError when a threshold is not in (0, 1] or they are out of order
 *   (`relatedThreshold < threshold < exactThreshold`); DedupTypeError for wrong types
 */
export function resolveOptions(options: DedupOptions | undefined): ResolvedOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new DedupTypeError('options', 'must be an object');
  }
  const o = options ?? {};
  const t = threshold(o.threshold, 'threshold', 0.9);
  const exact = threshold(o.exactThreshold, 'exactThreshold', 0.98);
  const related = threshold(o.relatedThreshold, 'relatedThreshold', 0.75);
  if (!(related < t)) {
    throw new DedupRangeError('relatedThreshold', 'must be less than threshold', `relatedThreshold (${related}) must be less than threshold (${t})`);
  }
  if (!(t < exact)) {
    throw new DedupRangeError('threshold', 'must be less than exactThreshold', `threshold (${t}) must be less than exactThreshold (${exact})`);
  }
  const policy = o.mergePolicy ?? 'keep-newest';
  if (typeof policy !== 'function' && !MERGE_POLICIES.includes(policy)) {
    throw new DedupRangeError('mergePolicy', `must be one of ${MERGE_POLICIES.join(', ')} or a function`, `unknown mergePolicy '${String(policy)}' (one of ${MERGE_POLICIES.join(', ')}, or a function)`);
  }
  if (o.embedder !== undefined && typeof o.embedder !== 'function') {
    throw new DedupTypeError('embedder', 'must be a function', 'embedder must be a function (text) => Promise<number[]>');
  }
  if (o.store !== undefined) {
    if (typeof o.store !== 'object' || o.store === null) throw new DedupTypeError('store', 'must implement StoreBackend');
    const missing = STORE_METHODS.filter((m) => typeof (o.store as unknown as Record<string, unknown>)[m] !== 'function');
    if (missing.length > 0) {
      throw new DedupTypeError('store', 'must implement StoreBackend', `store must implement StoreBackend (missing: ${missing.join(', ')})`);
    }
  }
  return { embedder: o.embedder, threshold: t, exactThreshold: exact, relatedThreshold: related, mergePolicy: policy, store: o.store };
}

/** Checks a sweep / compact threshold override. */
export function sweepThreshold(value: unknown, fallback: number): number {
  return threshold(value, 'threshold', fallback);
}

/** Checks an entry's shape. @throws DedupTypeError naming the field */
export function validateEntry(entry: unknown, field = 'entry'): asserts entry is MemoryEntry {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new DedupTypeError(field, 'must be an object { id, content, metadata? }');
  }
  const e = entry as Record<string, unknown>;
  if (typeof e.id !== 'string' || e.id.length === 0) {
    throw new DedupTypeError(`${field}.id`, 'must be a non-empty string', `${field}.id must be a non-empty string, got ${JSON.stringify(e.id) ?? typeof e.id}`);
  }
  if (typeof e.content !== 'string') {
    throw new DedupTypeError(`${field}.content`, 'must be a string', `${field}.content must be a string, got ${e.content === null ? 'null' : typeof e.content}`);
  }
  if (e.metadata !== undefined && (typeof e.metadata !== 'object' || e.metadata === null || Array.isArray(e.metadata))) {
    throw new DedupTypeError(`${field}.metadata`, 'must be an object when present');
  }
}
