/**
 * The input guard: remove repeated blocks from an agent's input without losing information.
 *
 * - {@link deduplicate} cleans one text; {@link dedupMessages} a message array;
 * - {@link DeduplicateGuard}, {@link GuardChain} and {@link ContentGuard} plug that into an agent.
 * @module
 */
export { deduplicate, splitBlocks, type BlockSplit, type DeduplicateResult, type RemovedBlock, type SplitMode, type TextRange } from './deduplicate.js';
export { DEFAULT_NEAR_DUPLICATE, type DeduplicateOptions } from './options.js';
export {
  dedupMessages,
  type ChatMessage,
  type DedupMessagesResult,
  type MessageRemovedBlock,
  type MessageTextLocation,
} from './messages.js';
export { DeduplicateGuard, summaryLine, type DeduplicateGuardOptions } from './deduplicate-guard.js';
export { ContentGuard, GuardChain, type ContentCheck, type ContentGuardOptions, type Guard, type GuardAction } from './guards.js';
