/**
 * `DeduplicateGuard`: the input guard that removes repeated blocks before the model sees them.
 * @module
 */
import { DedupTypeError } from '../errors.js';
import { isDedupWasmReady } from '../wasm/loader.js';
import { deduplicate, type DeduplicateResult } from './deduplicate.js';
import { dedupMessages, type ChatMessage, type DedupMessagesResult } from './messages.js';
import { requireOptionsObject, type DeduplicateOptions } from './options.js';
import type { Guard, GuardAction } from './guards.js';

/** Options of {@link DeduplicateGuard}: the {@link DeduplicateOptions} plus logging. */
export interface DeduplicateGuardOptions extends DeduplicateOptions {
  /** Log a one-line summary whenever blocks are removed. Default false. */
  verbose?: boolean;
  /** Where summaries go when `verbose` (default: stderr in Node, `console.info` elsewhere). */
  logger?: (line: string) => void;
}

const GUARD_KEYS = new Set(['similarityChars', 'minBlockChars', 'keep', 'nearDuplicate', 'verbose', 'logger']);

function defaultLogger(line: string): void {
  if (typeof process !== 'undefined' && typeof process.stderr?.write === 'function') process.stderr.write(`${line}\n`);
  else console.info(line);
}

/**
 * The summary line: `[DeduplicateGuard] removed N block(s) — X → Y chars (-Z%)`.
 */
export function summaryLine(r: { removed: number; originalChars: number; cleanedChars: number }): string {
  const pct = r.originalChars === 0 ? 0 : Math.round(((r.originalChars - r.cleanedChars) / r.originalChars) * 100);
  return `[DeduplicateGuard] removed ${r.removed} block(s) — ${r.originalChars} → ${r.cleanedChars} chars (-${pct}%)`;
}

/**
 * Removes repeated blocks from an agent's input (`checkInput`); output passes through untouched
 * (`checkOutput`). It never refuses a text.
 *
 * ```ts
 * const guard = new DeduplicateGuard();
 * const { modifiedText } = guard.checkInput(history);
 * const prompt = modifiedText ?? history;
 * ```
 */
export class DeduplicateGuard implements Guard {
  /** The options passed to {@link deduplicate}. */
  readonly options: Readonly<DeduplicateOptions>;
  /** The result of the latest `checkInput` / `checkMessages`, or null. */
  lastResult: DeduplicateResult | DedupMessagesResult<ChatMessage> | null = null;
  private readonly verbose: boolean;
  private readonly logger: (line: string) => void;

  /** @throws DedupTypeError / DedupRangeError naming the field when an option is invalid */
  constructor(options: DeduplicateGuardOptions = {}) {
    requireOptionsObject(options, 'options');
    for (const k of Object.keys(options)) {
      if (!GUARD_KEYS.has(k)) throw new DedupTypeError('options', 'has no field of this name', `DeduplicateGuard has no option '${k}'`);
    }
    if (options.verbose !== undefined && typeof options.verbose !== 'boolean') {
      throw new DedupTypeError('verbose', 'must be a boolean', 'verbose must be a boolean');
    }
    if (options.logger !== undefined && typeof options.logger !== 'function') {
      throw new DedupTypeError('logger', 'must be a function', 'logger must be a function');
    }
    const { verbose, logger, ...dedup } = options;
    this.options = Object.freeze(dedup);
    this.verbose = verbose ?? false;
    this.logger = logger ?? defaultLogger;
    // Validate the dedup options now when the core is loaded (otherwise at the first call).
    if (isDedupWasmReady()) deduplicate('', this.options);
  }

  /** Removes repeated blocks; `modifiedText` is set when something was removed. */
  checkInput(text: string): GuardAction {
    const r = deduplicate(text, this.options);
    this.lastResult = r;
    if (r.removed === 0) return { allowed: true };
    if (this.verbose) this.logger(summaryLine(r));
    return { allowed: true, modifiedText: r.text };
  }

  /** Output is never touched. */
  checkOutput(_text: string): GuardAction {
    return { allowed: true };
  }

  /** Removes repeated blocks across a message array (see {@link dedupMessages}). */
  checkMessages<M extends ChatMessage>(messages: readonly M[]): DedupMessagesResult<M> {
    const r = dedupMessages(messages, this.options);
    this.lastResult = r as DedupMessagesResult<ChatMessage>;
    if (this.verbose && r.removed > 0) this.logger(summaryLine(r));
    return r;
  }
}
