/**
 * Options of the input guard and their checks.
 * @module
 */
import { DedupTypeError } from '../errors.js';
import { toCoreJson } from '../wasm/abi.js';

/**
 * Options of {@link deduplicate} and {@link dedupMessages}.
 *
 * Range checks happen in the core; a bad value throws a `DedupRangeError` / `DedupTypeError` naming
 * the field (`similarityChars`, `minBlockChars`, `keep`, `nearDuplicate`).
 */
export interface DeduplicateOptions {
  /**
   * Leading chars (of the whitespace-collapsed, lowercased block) two blocks must share before they
   * are compared as near-duplicates. Integer >= 1. Default 60.
   */
  similarityChars?: number;
  /**
   * Blocks shorter than this many chars (Unicode code points of the original block, whitespace
   * included) are never removed. Integer >= 0. Default 40.
   */
  minBlockChars?: number;
  /** Which occurrence of a repeated block survives: the earliest (`'first'`, default) or the newest. */
  keep?: 'first' | 'last';
  /**
   * Near-duplicate removal. A block that shares its first `similarityChars` with a kept block is
   * removed only when its similarity to it (token Jaccard, computed by the core) is at least this
   * threshold **and** all of its words and numbers occur in the kept block in the same order.
   * `true` (default) means {@link DEFAULT_NEAR_DUPLICATE}; a number in (0, 1] sets the threshold;
   * `false` removes exact repeats only.
   */
  nearDuplicate?: boolean | number;
}

/**
 * Default near-duplicate threshold: 0.8 token Jaccard. A block that is within it of a kept block
 * and adds no word or number (a re-paste with different punctuation, casing or a truncated tail)
 * goes; anything that adds a word or number stays whatever the similarity.
 */
export const DEFAULT_NEAR_DUPLICATE = 0.8;

const KEYS = ['similarityChars', 'minBlockChars', 'keep', 'nearDuplicate'] as const;

/** Throws unless `value` is undefined or a plain object. */
export function requireOptionsObject(value: unknown, field: string): asserts value is Record<string, unknown> | undefined {
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new DedupTypeError(field, 'must be an object', `${field} must be an object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
}

/** The core's JSON for the guard options in `options` (other fields are the caller's business). */
export function guardOptionsJson(options: DeduplicateOptions | undefined, field = 'options'): string {
  requireOptionsObject(options, field);
  if (options === undefined) return '';
  const picked: Record<string, unknown> = {};
  for (const k of KEYS) if (options[k] !== undefined) picked[k] = options[k];
  return toCoreJson(picked);
}

/** Like {@link guardOptionsJson}, but unknown fields are an error. */
export function strictGuardOptionsJson(options: DeduplicateOptions | undefined, field = 'options'): string {
  requireOptionsObject(options, field);
  if (options === undefined) return '';
  return toCoreJson(options);
}
