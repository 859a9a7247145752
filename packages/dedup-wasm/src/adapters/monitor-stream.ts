/**
 * `monitorStream`: loop protection for any stream of model output, in one line.
 * @module
 */
import { DedupTypeError } from '../errors.js';
import type { StreamCheck } from '../streaming.js';
import type { SettingsOrPreset } from '../settings.js';
import type { RepetitionAbortError, StreamChannel } from './abort-error.js';
import { defaultChunkText, normalizeChunkText, type ChannelText, type ChunkText } from './chunk-text.js';
import { StreamWatcher } from './watcher.js';

/** Options of {@link monitorStream}. */
export interface MonitorStreamOptions<T> {
  /** Detector settings or a preset name (default: the `default` preset). */
  settings?: SettingsOrPreset;
  /**
   * Finds the text in a chunk. Not needed for strings, OpenAI chat-completion chunks, OpenAI
   * Responses events, Anthropic events and AI SDK stream parts; required for any other shape.
   */
  getText?: (chunk: T) => ChunkText;
  /**
   * Called when the output starts drifting toward a loop: once per episode (an episode ends when
   * a check comes back clean), per channel. A good moment to queue a corrective message. May be
   * async; the stream waits for it.
   */
  onSteer?: (check: StreamCheck, channel: StreamChannel) => void | Promise<void>;
  /**
   * Called when the output is looping, after the upstream was cancelled. When given (and it
   * returns), the stream ends normally instead of failing with the error.
   */
  onAbort?: (error: RepetitionAbortError) => void | Promise<void>;
  /** Aborted (with the {@link RepetitionAbortError} as reason) when the output is looping. */
  abortController?: AbortController;
}

const OPTION_KEYS = new Set(['settings', 'getText', 'onSteer', 'onAbort', 'abortController']);

function checkOptions<T>(options: MonitorStreamOptions<T> | undefined): MonitorStreamOptions<T> {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new DedupTypeError('options', 'must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new DedupTypeError('options', 'has no field of this name', `monitorStream: unknown option "${key}"`);
  }
  for (const key of ['getText', 'onSteer', 'onAbort'] as const) {
    const f = options[key];
    if (f !== undefined && typeof f !== 'function') throw new DedupTypeError(key, 'must be a function');
  }
  const ac = options.abortController;
  if (ac !== undefined && !(typeof ac === 'object' && ac !== null && typeof ac.abort === 'function')) {
    throw new DedupTypeError('abortController', 'must be an AbortController');
  }
  return options;
}

function isReadableStream<T>(v: unknown): v is ReadableStream<T> {
  return typeof v === 'object' && v !== null && typeof (v as ReadableStream<T>).getReader === 'function';
}

function isAsyncIterable<T>(v: unknown): v is AsyncIterable<T> {
  return typeof v === 'object' && v !== null && typeof (v as AsyncIterable<T>)[Symbol.asyncIterator] === 'function';
}

/** What both stream kinds share: reading text, feeding it, and the abort sequence. */
class Session<T> {
  readonly watcher: StreamWatcher;
  private readonly extract: (chunk: T) => ChannelText;

  constructor(private readonly options: MonitorStreamOptions<T>) {
    this.watcher = new StreamWatcher(options.settings, options.onSteer);
    const getText = options.getText;
    this.extract = getText ? (c) => normalizeChunkText(getText(c)) : defaultChunkText;
  }

  feed(chunk: T): Promise<RepetitionAbortError | null> {
    return this.watcher.feed(this.extract(chunk));
  }

  /** Cancels everything upstream, then runs `onAbort`. Returns true when the stream ends normally. */
  async abort(error: RepetitionAbortError, cancelUpstream: () => unknown): Promise<boolean> {
    this.watcher.dispose();
    try {
      this.options.abortController?.abort(error);
    } catch {
      // An abort listener threw; the request is aborted all the same.
    }
    try {
      await cancelUpstream();
    } catch {
      // The upstream failed while closing: it is closed, which is all we need.
    }
    if (!this.options.onAbort) return false;
    await this.options.onAbort(error);
    return true;
  }
}

async function* iterate<T>(source: AsyncIterable<T>, session: Session<T>): AsyncGenerator<T, void, undefined> {
  const it = source[Symbol.asyncIterator]();
  let upstreamClosed = false;
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) {
        upstreamClosed = true;
        return;
      }
      const error = await session.feed(r.value);
      if (error) {
        upstreamClosed = true;
        const endsNormally = await session.abort(error, () => it.return?.());
        // The chunk that tripped the verdict was produced and paid for: deliver it, then end.
        yield r.value;
        if (endsNormally) return;
        throw error;
      }
      yield r.value;
    }
  } finally {
    session.watcher.dispose();
    if (!upstreamClosed) {
      // The consumer stopped early, or reading failed: release the upstream.
      try {
        await it.return?.();
      } catch {
        // Closing failed; nothing more can be done for it.
      }
    }
  }
}

function wrapReadable<T>(source: ReadableStream<T>, session: Session<T>): ReadableStream<T> {
  const reader = source.getReader();
  let failWith: RepetitionAbortError | null = null;
  return new ReadableStream<T>(
    {
      async pull(controller) {
        if (failWith) {
          controller.error(failWith);
          return;
        }
        let value: T;
        let error: RepetitionAbortError | null;
        try {
          const r = await reader.read();
          if (r.done) {
            session.watcher.dispose();
            controller.close();
            return;
          }
          value = r.value;
          error = await session.feed(value);
        } catch (e) {
          session.watcher.dispose();
          reader.cancel(e).catch(() => undefined);
          controller.error(e);
          return;
        }
        if (!error) {
          controller.enqueue(value);
          return;
        }
        let endsNormally: boolean;
        try {
          endsNormally = await session.abort(error, () => reader.cancel(error));
        } catch (e) {
          controller.error(e);
          return;
        }
        controller.enqueue(value);
        // Closing keeps the queued chunk; erroring would drop it, so the error waits for the next read.
        if (endsNormally) controller.close();
        else failWith = error;
      },
      cancel(reason) {
        session.watcher.dispose();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Watches a stream of model output for loops and passes it through unchanged.
 *
 * - Give it what your SDK gives you: an `AsyncIterable` (the OpenAI SDK's stream, an AI SDK
 *   `textStream` / `fullStream`, an async generator of strings…) or a web `ReadableStream`. You get
 *   the same kind of stream back, with the same chunks.
 * - When the output drifts toward a loop, `onSteer(check)` is called (once per episode).
 * - When it is looping, it stops reading, cancels the upstream (`return()` on an iterator,
 *   `cancel()` on a ReadableStream, plus `abortController.abort()` when given), delivers the chunk
 *   that tripped the verdict and then fails with a {@link RepetitionAbortError} carrying the
 *   evidence, or ends normally when `onAbort` is given and returns.
 * - Reasoning text (`reasoning_content` deltas, AI SDK `reasoning-delta` parts…) is watched on its
 *   own channel.
 *
 * Call `await initDedupWasm()` first.
 *
 * ```ts
 * const stream = await openai.chat.completions.create({ model, messages, stream: true });
 * for await (const chunk of monitorStream(stream)) {
 *   process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
 * }
 * ```
 * @throws DedupTypeError for a source that is not a stream, or bad options
 */
export function monitorStream<T>(source: ReadableStream<T>, options?: MonitorStreamOptions<T>): ReadableStream<T>;
export function monitorStream<T>(source: AsyncIterable<T>, options?: MonitorStreamOptions<T>): AsyncGenerator<T, void, undefined>;
export function monitorStream<T>(
  source: ReadableStream<T> | AsyncIterable<T>,
  options?: MonitorStreamOptions<T>,
): ReadableStream<T> | AsyncGenerator<T, void, undefined> {
  const opts = checkOptions(options);
  if (isReadableStream<T>(source)) {
    if (source.locked) throw new DedupTypeError('source', 'must not be locked', 'monitorStream: the ReadableStream is already being read');
    return wrapReadable(source, new Session(opts));
  }
  if (isAsyncIterable<T>(source)) return iterate(source, new Session(opts));
  throw new DedupTypeError('source', 'must be an AsyncIterable or a ReadableStream');
}
