/**
 * Batch functions: check a whole text, tokenize, compare two texts.
 * @module
 */
import { DedupTypeError } from './errors.js';
import { readJson, throwCoreError, toCoreJson, withStrings } from './wasm/abi.js';
import { readSections } from './wasm/sections.js';
import { settingsArgument, type SettingsOrPreset } from './settings.js';

/** Which pass found a section. */
export type SectionSource = 'ngram' | 'sentence' | 'period';

/**
 * A repeated stretch and the earlier stretch it repeats. Offsets are UTF-16 indices, so
 * `text.slice(repeatStart, repeatEnd)` is the repeat for any text, emoji and CJK included.
 */
export interface RepeatedSection {
  originalStart: number;
  originalEnd: number;
  repeatStart: number;
  repeatEnd: number;
  /** Similarity of the repeat to the original in [0, 1]. */
  similarity: number;
  source: SectionSource;
}

/** Result of {@link checkRepetition}. */
export interface RepetitionResult {
  /** True when any section was found. */
  repeated: boolean;
  /** Share of the text (whitespace-collapsed) that repeats earlier text near-exactly, in [0, 1]. */
  ratio: number;
  /** Sections ordered by where the repeat starts. */
  sections: RepeatedSection[];
}

/** Throws a {@link DedupTypeError} unless `value` is a string. */
export function requireString(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string') {
    throw new DedupTypeError(field, 'must be a string', `${field} must be a string, got ${value === null ? 'null' : typeof value}`);
  }
}

/**
 * Finds every repeated section of a finished text: near-exact repeats (n-gram pass), corroborated
 * sentence repeats (sentence pass) and a confirmed loop (period rules).
 *
 * @param text - any string (lone surrogates, NUL and megabytes are fine)
 * @param settingsOrPreset - a preset name or settings overrides
 * @throws DedupTypeError / DedupRangeError naming the field when settings are invalid
 */
export function checkRepetition(text: string, settingsOrPreset?: SettingsOrPreset): RepetitionResult {
  requireString(text, 'text');
  const settings = toCoreJson(settingsArgument(settingsOrPreset));
  return withStrings([text, settings], (x, [t, s]) => {
    const count = x.dw_check_repetition(t!.ptr, t!.len, s!.ptr, s!.len);
    if (count < 0) throwCoreError(x);
    const { head, sections } = readSections(x, count, 1);
    return { repeated: count > 0, ratio: head[0]!, sections };
  });
}

/**
 * The tokens the detector compares: lowercased runs of letters and digits, and each CJK char on its own.
 */
export function tokenize(text: string): string[] {
  requireString(text, 'text');
  return withStrings([text], (x, [t]) => {
    if (x.dw_tokenize(t!.ptr, t!.len) < 0) throwCoreError(x);
    return readJson<string[]>(x);
  });
}

/**
 * Similarity of two texts in [0, 1]: token Jaccard, or character-trigram Jaccard when either side has
 * fewer than four distinct tokens.
 */
export function textSimilarity(a: string, b: string): number {
  requireString(a, 'a');
  requireString(b, 'b');
  return withStrings([a, b], (x, [pa, pb]) => {
    const s = x.dw_text_similarity(pa!.ptr, pa!.len, pb!.ptr, pb!.len);
    if (s < 0) throwCoreError(x);
    return s;
  });
}
