/**
 * Merge policies: which of two duplicates survives, and what it looks like.
 * @module
 */
import { DedupTypeError } from '../errors.js';
import type { MemoryEntry, MergePolicy, MergePolicyName } from './types.js';

/** The built-in policy names. */
export const MERGE_POLICIES: readonly MergePolicyName[] = ['keep-newest', 'keep-oldest', 'keep-longest', 'keep-highest-confidence', 'merge'];

/** An entry with its insertion order (higher = inserted later). */
export interface Ranked {
  entry: MemoryEntry;
  seq: number;
}

/** The outcome of resolving a duplicate pair. */
export interface Resolution {
  /** The surviving entry as it should be stored. */
  survivor: MemoryEntry;
  /** Which input it takes the id of. */
  winner: 'candidate' | 'match';
}

/** `metadata.timestamp`, else `metadata.createdAt`, as ms (numbers or Dates); undefined when absent. */
export function timeOf(e: MemoryEntry): number | undefined {
  for (const k of ['timestamp', 'createdAt']) {
    const v = e.metadata?.[k];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (v instanceof Date && Number.isFinite(v.getTime())) return v.getTime();
  }
  return undefined;
}

/** True when `a` is newer than `b`: by timestamp/createdAt when both have one and they differ, else by insertion order. */
export function isNewer(a: Ranked, b: Ranked): boolean {
  const ta = timeOf(a.entry);
  const tb = timeOf(b.entry);
  if (ta !== undefined && tb !== undefined && ta !== tb) return ta > tb;
  return a.seq > b.seq;
}

function confidenceOf(e: MemoryEntry): number | undefined {
  const c = e.metadata?.confidence;
  return typeof c === 'number' && Number.isFinite(c) ? c : undefined;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    try {
      return JSON.stringify(a) === JSON.stringify(b);
    } catch {
      return false;
    }
  }
  return false;
}

/**
 * Merges metadata: arrays are unioned (older items first, no duplicates), when both values are
 * finite numbers the larger is kept, any other field takes the incoming entry's value.
 */
export function mergeMetadata(existing: Record<string, unknown> | undefined, incoming: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!existing) return incoming ? { ...incoming } : undefined;
  if (!incoming) return { ...existing };
  const out: Record<string, unknown> = { ...existing };
  for (const [k, v] of Object.entries(incoming)) {
    const old = out[k];
    if (Array.isArray(old) && Array.isArray(v)) {
      const merged: unknown[] = [...old];
      for (const item of v) if (!merged.some((m) => sameValue(m, item))) merged.push(item);
      out[k] = merged;
    } else if (typeof old === 'number' && typeof v === 'number' && Number.isFinite(old) && Number.isFinite(v)) {
      out[k] = Math.max(old, v);
    } else {
      out[k] = v;
    }
  }
  return out;
}

/**
 * Resolves a duplicate pair. `candidate` is the incoming (or newer) entry, `match` the existing one.
 *
 * - `keep-newest` / `keep-oldest`: by `timestamp` (or `createdAt`) when both have one and they
 *   differ, otherwise by insertion order (the incoming entry is the newest).
 * - `keep-longest`: the longer content; a tie falls back to `keep-newest`.
 * - `keep-highest-confidence`: the higher `metadata.confidence`; an entry with a confidence beats
 *   one without; neither or equal falls back to `keep-newest`.
 * - `merge`: the longer content (tie: the newer) keeps its id; metadata merged by
 *   {@link mergeMetadata} with the incoming entry's values taking precedence.
 * - a function: its result survives; its `id` must be the candidate's or the match's.
 */
export function resolve(policy: MergePolicy, candidate: Ranked, match: Ranked, similarity: number): Resolution {
  const newer = isNewer(candidate, match) ? 'candidate' : 'match';
  const pick = (w: 'candidate' | 'match'): Resolution => ({ survivor: (w === 'candidate' ? candidate : match).entry, winner: w });
  const lenC = candidate.entry.content.length;
  const lenM = match.entry.content.length;
  switch (policy) {
    case 'keep-newest':
      return pick(newer);
    case 'keep-oldest':
      return pick(newer === 'candidate' ? 'match' : 'candidate');
    case 'keep-longest':
      return pick(lenC === lenM ? newer : lenC > lenM ? 'candidate' : 'match');
    case 'keep-highest-confidence': {
      const cc = confidenceOf(candidate.entry);
      const cm = confidenceOf(match.entry);
      if (cc !== undefined && (cm === undefined || cc > cm)) return pick('candidate');
      if (cm !== undefined && (cc === undefined || cm > cc)) return pick('match');
      return pick(newer);
    }
    case 'merge': {
      const w = lenC === lenM ? newer : lenC > lenM ? 'candidate' : 'match';
      const base = w === 'candidate' ? candidate.entry : match.entry;
      const metadata = mergeMetadata(match.entry.metadata, candidate.entry.metadata);
      const survivor: MemoryEntry = { id: base.id, content: base.content };
      if (metadata !== undefined) survivor.metadata = metadata;
      return { survivor, winner: w };
    }
    default: {
      const out: unknown = policy(candidate.entry, match.entry, similarity);
      const e = out as MemoryEntry;
      if (typeof out !== 'object' || out === null || typeof e.content !== 'string' || (e.metadata !== undefined && (typeof e.metadata !== 'object' || e.metadata === null))) {
        throw new DedupTypeError('mergePolicy', 'must return a MemoryEntry', 'the custom mergePolicy must return a MemoryEntry ({ id, content, metadata? })');
      }
      if (e.id !== candidate.entry.id && e.id !== match.entry.id) {
        throw new DedupTypeError('mergePolicy', "must return an entry whose id is the candidate's or the match's", `the custom mergePolicy returned id '${String(e.id)}', which is neither '${candidate.entry.id}' nor '${match.entry.id}'`);
      }
      return { survivor: e, winner: e.id === candidate.entry.id ? 'candidate' : 'match' };
    }
  }
}

/** True when two entries are the same content and metadata. */
export function sameEntry(a: MemoryEntry, b: MemoryEntry): boolean {
  return a.id === b.id && a.content === b.content && sameValue(a.metadata ?? null, b.metadata ?? null);
}
