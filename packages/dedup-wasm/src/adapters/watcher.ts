/**
 * The bookkeeping every stream adapter shares: one streaming monitor, both channels, steer
 * episodes, and the abort verdict. The detection itself is the core's.
 * @module
 */
import { createStreamingDedup, type StreamCheck, type StreamingDedup } from '../streaming.js';
import type { SettingsOrPreset } from '../settings.js';
import { RepetitionAbortError, type StreamChannel } from './abort-error.js';
import type { ChannelText } from './chunk-text.js';

/** Called when a stream starts drifting toward a loop (once per episode). */
export type SteerHandler = (check: StreamCheck, channel: StreamChannel) => void | Promise<void>;

/** Feeds both channels of a stream to one monitor and tracks steer episodes. */
export class StreamWatcher {
  private readonly monitor: StreamingDedup;
  private readonly steering: Record<StreamChannel, boolean> = { content: false, reasoning: false };
  private disposed = false;
  /** The latest check on either channel. */
  last: StreamCheck | null = null;
  /** The strongest action seen so far ('none' until a steer or abort). */
  worst: 'none' | 'steer' | 'abort' = 'none';
  /** The check behind {@link worst}. */
  worstCheck: StreamCheck | null = null;

  constructor(settings: SettingsOrPreset | undefined, private readonly onSteer?: SteerHandler) {
    this.monitor = createStreamingDedup(settings);
  }

  /**
   * Feeds a chunk's text. Returns the abort error when a channel's output is looping (the caller
   * then cancels its upstream), otherwise null. Awaits `onSteer` at the start of a steer episode.
   */
  async feed(t: ChannelText): Promise<RepetitionAbortError | null> {
    if (this.disposed) return null;
    for (const channel of ['reasoning', 'content'] as const) {
      const piece = channel === 'content' ? t.text : t.reasoning;
      if (piece.length === 0) continue;
      const check = channel === 'content' ? this.monitor.feedChunk(piece) : this.monitor.feedReasoningChunk(piece);
      this.last = check;
      if (check.action === 'abort') {
        this.note(check);
        return new RepetitionAbortError(check, channel);
      }
      if (check.action === 'steer') {
        this.note(check);
        if (!this.steering[channel]) {
          this.steering[channel] = true;
          if (this.onSteer) await this.onSteer(check, channel);
        }
      } else {
        this.steering[channel] = false;
      }
    }
    return null;
  }

  private note(check: StreamCheck): void {
    if (check.action === 'abort' || this.worst === 'none') {
      this.worst = check.action;
      this.worstCheck = check;
    }
  }

  /** Frees the monitor (idempotent). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.monitor.dispose();
  }
}
