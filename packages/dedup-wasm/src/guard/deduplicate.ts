/**
 * `deduplicate`: remove repeated blocks from one text, and `splitBlocks`: see the blocks it compares.
 * @module
 */
import { requireString } from '../repetition.js';
import { applyKept, runGuard, runSplit } from './core.js';
import { strictGuardOptionsJson, type DeduplicateOptions } from './options.js';

/** A UTF-16 range of a text: `text.slice(start, end)`. */
export interface TextRange {
  start: number;
  end: number;
}

/** A block that was removed, and the block it repeats (both UTF-16 ranges of the input). */
export interface RemovedBlock extends TextRange {
  /**
   * The block that stays and says everything this one said: the earlier occurrence with
   * `keep: 'first'`, the later one with `keep: 'last'`.
   */
  duplicateOf: TextRange;
}

/** Result of {@link deduplicate}. */
export interface DeduplicateResult {
  /**
   * The input minus the removed blocks, each with the separator before it (or, for a leading
   * block, after it). Identical to the input (the same string) when nothing was removed.
   */
  text: string;
  /** Number of blocks removed. */
  removed: number;
  /** The removed blocks in input order. */
  removedBlocks: RemovedBlock[];
  /** `input.length`. */
  originalChars: number;
  /** `text.length`. */
  cleanedChars: number;
}

/**
 * Removes repeated blocks from a text — the same dialogue turns, paragraphs or lines pasted into a
 * prompt again and again — without losing information.
 *
 * The text is split by `[Turn N]` markers at line starts, else blank lines, else line breaks
 * (fenced code is never split). A block of at least `minBlockChars` chars goes when its
 * whitespace-collapsed, lowercased form equals a kept block's, or when it shares the kept block's
 * first `similarityChars` chars, is `nearDuplicate`-similar to it and adds no word or number it
 * lacks ("tests PASSED" and "tests FAILED" both stay). When the removals leave a single block, it is
 * split further, so `deduplicate(deduplicate(t).text)` removes nothing more.
 *
 * @param text - any string (lone surrogates included)
 * @param options - see {@link DeduplicateOptions}
 * @throws DedupTypeError / DedupRangeError naming the field when an option is invalid
 */
export function deduplicate(text: string, options?: DeduplicateOptions): DeduplicateResult {
  requireString(text, 'text');
  const json = strictGuardOptionsJson(options);
  const { kept, removals } = runGuard([{ text, pinned: false }], json);
  const cleaned = removals.length === 0 ? text : applyKept(text, kept[0] ?? []);
  return {
    text: cleaned,
    removed: removals.length,
    removedBlocks: removals.map((r) => ({ start: r.start, end: r.end, duplicateOf: { start: r.dupStart, end: r.dupEnd } })),
    originalChars: text.length,
    cleanedChars: cleaned.length,
  };
}

/** How a text is split: by turn markers, blank lines, line breaks, or not at all. */
export type SplitMode = 'turn' | 'paragraph' | 'line' | 'none';

/** Result of {@link splitBlocks}. */
export interface BlockSplit {
  mode: SplitMode;
  /** Blocks in order (blank ones included: leading/trailing whitespace yields empty blocks). */
  blocks: TextRange[];
  /** Separators in order; `separators[i]` lies between `blocks[i]` and `blocks[i + 1]`. */
  separators: TextRange[];
}

const MODES: readonly SplitMode[] = ['none', 'turn', 'paragraph', 'line'];

/**
 * The blocks {@link deduplicate} compares in `text`, at the top level (a text whose repeats collapse
 * it to one block is split further inside `deduplicate`). Blocks and separators alternate and
 * together cover the text.
 */
export function splitBlocks(text: string): BlockSplit {
  requireString(text, 'text');
  const w = runSplit(text);
  const blocks: TextRange[] = [];
  const separators: TextRange[] = [];
  const n = w[1] ?? 0;
  for (let i = 0; i < n; i++) {
    const at = 2 + i * 3;
    (w[at + 2] === 1 ? blocks : separators).push({ start: w[at] ?? 0, end: w[at + 1] ?? 0 });
  }
  return { mode: MODES[w[0] ?? 0] ?? 'none', blocks, separators };
}
