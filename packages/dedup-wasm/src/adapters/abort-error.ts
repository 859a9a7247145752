/**
 * The error a monitored stream ends with when its output has fallen into a loop.
 * @module
 */
import type { LoopEvidence, StreamCheck } from '../streaming.js';

/** Which text a verdict is about: the visible output or the model's reasoning. */
export type StreamChannel = 'content' | 'reasoning';

/**
 * A monitored stream was stopped because the model's output is looping. The upstream was cancelled
 * before this error was raised, so no more tokens are paid for. `evidence` says which rule fired,
 * on what, and where.
 */
export class RepetitionAbortError extends Error {
  override readonly name = 'RepetitionAbortError';
  /** The loop rule's finding (null only when the core aborted without a rule, which it does not today). */
  readonly evidence: LoopEvidence | null;
  /** The check that aborted. */
  readonly check: StreamCheck;
  /** The channel whose text is looping. */
  readonly channel: StreamChannel;

  constructor(check: StreamCheck, channel: StreamChannel) {
    const e = check.evidence;
    const what = e ? `${e.rule}: ${e.detail}` : 'repeated output';
    super(`dedup-wasm: the model's ${channel === 'reasoning' ? 'reasoning' : 'output'} is looping, stream aborted (${what})`);
    this.evidence = e;
    this.check = check;
    this.channel = channel;
  }
}
