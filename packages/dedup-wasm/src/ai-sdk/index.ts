/**
 * `dedup-wasm/ai-sdk`: loop protection for the Vercel AI SDK (`ai` 6.x) as a language-model
 * middleware.
 *
 * ```ts
 * import { wrapLanguageModel, streamText } from 'ai';
 * import { initDedupWasm } from 'dedup-wasm';
 * import { repetitionMiddleware } from 'dedup-wasm/ai-sdk';
 *
 * await initDedupWasm();
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: repetitionMiddleware() });
 * const result = streamText({ model, prompt });
 * ```
 * @module
 */
import type { LanguageModelMiddleware } from 'ai';
import { RepetitionAbortError, type StreamChannel } from '../adapters/abort-error.js';
import { StreamWatcher } from '../adapters/watcher.js';
import { DedupTypeError } from '../errors.js';
import type { StreamCheck } from '../streaming.js';
import type { SettingsOrPreset } from '../settings.js';

type WrapStream = NonNullable<LanguageModelMiddleware['wrapStream']>;
type WrapGenerate = NonNullable<LanguageModelMiddleware['wrapGenerate']>;
type CallOptions = Parameters<WrapStream>[0]['params'];
type StreamResult = Awaited<ReturnType<WrapStream>>;
type GenerateResult = Awaited<ReturnType<WrapGenerate>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;
type FinishPart = Extract<StreamPart, { type: 'finish' }>;
type ProviderMetadata = NonNullable<FinishPart['providerMetadata']>;

/** The key under which the verdict appears in `providerMetadata`. */
export const PROVIDER_METADATA_KEY = 'dedupWasm';

/** The raw finish reason of a stream ended because its output was looping. */
export const REPETITION_FINISH_REASON = 'repetition-loop';

/** Options of {@link repetitionMiddleware}. */
export interface RepetitionMiddlewareOptions {
  /** Detector settings or a preset name (default: the `default` preset). */
  settings?: SettingsOrPreset;
  /** Called once per steer episode while streaming (and once for a generate call that steers). */
  onSteer?: (check: StreamCheck, channel: StreamChannel) => void | Promise<void>;
  /** Called when a stream is cut (after the upstream call was cancelled), or a generated text loops. */
  onAbort?: (error: RepetitionAbortError) => void | Promise<void>;
  /**
   * How a looping stream ends. `'finish'` (default): open text/reasoning parts are closed and a
   * `finish` part follows with `finishReason: { unified: 'other', raw: 'repetition-loop' }` and
   * the evidence in `providerMetadata.dedupWasm`. `'error'`: an `error` part carrying the
   * {@link RepetitionAbortError} comes first (the AI SDK reports it through `onError` and
   * `fullStream`), then the same finish part with `unified: 'error'`.
   */
  abortWith?: 'finish' | 'error';
  /**
   * Chars fed per step when checking a finished (non-streamed) text, so the streaming rules see it
   * as they would have live. Default 64.
   */
  generateChunkChars?: number;
}

/** The verdict as reported in `providerMetadata.dedupWasm` (JSON values only). */
export interface RepetitionVerdictMetadata {
  [key: string]: string | number | boolean | null | Record<string, string | number | null>;
  /** `none`, `steer` or `abort`. */
  action: 'none' | 'steer' | 'abort';
  /** The channel the verdict is about (`content` when nothing fired). */
  channel: StreamChannel;
  /** The rule's finding, or null. */
  evidence: Record<string, string | number | null> | null;
  /** Share of the output that repeats earlier output near-exactly. */
  ratio: number;
}

const OPTION_KEYS = new Set(['settings', 'onSteer', 'onAbort', 'abortWith', 'generateChunkChars']);

function checkOptions(options: RepetitionMiddlewareOptions | undefined): RepetitionMiddlewareOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new DedupTypeError('options', 'must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new DedupTypeError('options', 'has no field of this name', `repetitionMiddleware: unknown option "${key}"`);
  }
  for (const key of ['onSteer', 'onAbort'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function') throw new DedupTypeError(key, 'must be a function');
  }
  if (options.abortWith !== undefined && options.abortWith !== 'finish' && options.abortWith !== 'error') {
    throw new DedupTypeError('abortWith', "must be 'finish' or 'error'");
  }
  const n = options.generateChunkChars;
  if (n !== undefined && !(typeof n === 'number' && Number.isInteger(n) && n >= 1)) {
    throw new DedupTypeError('generateChunkChars', 'must be an integer of at least 1');
  }
  return options;
}

function verdictOf(watcher: StreamWatcher, abort: RepetitionAbortError | null): RepetitionVerdictMetadata {
  const check = abort?.check ?? watcher.worstCheck ?? watcher.last;
  const e = check?.evidence ?? null;
  return {
    action: abort ? 'abort' : watcher.worst,
    channel: abort?.channel ?? 'content',
    evidence: e && watcher.worst !== 'none' ? { rule: e.rule, detail: e.detail, sample: e.sample, severity: e.severity, start: e.start, at: e.at } : null,
    ratio: check?.ratio ?? 0,
  };
}

function withVerdict(meta: ProviderMetadata | undefined, verdict: RepetitionVerdictMetadata): ProviderMetadata {
  return { ...(meta ?? {}), [PROVIDER_METADATA_KEY]: verdict } as ProviderMetadata;
}

/** An AbortSignal that fires when either input does (AbortSignal.any where available). */
function anySignal(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  if (!a) return b;
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const c = new AbortController();
  const forward = (s: AbortSignal) => () => c.abort(s.reason);
  if (a.aborted) c.abort(a.reason);
  else a.addEventListener('abort', forward(a), { once: true });
  b.addEventListener('abort', forward(b), { once: true });
  return c.signal;
}

const EMPTY_USAGE: FinishPart['usage'] = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/**
 * A Vercel AI SDK middleware (for `wrapLanguageModel`) that stops a model's looping output.
 *
 * - **streaming** (`streamText`, `streamObject`…): text and reasoning deltas are watched as they
 *   arrive. On a steer, `onSteer` runs. On a loop, the upstream call is aborted (its abort signal
 *   fires and its stream is cancelled), and the stream ends cleanly: see `abortWith`. The final
 *   `finish` part always carries the verdict in `providerMetadata.dedupWasm`.
 * - **generate** (`generateText`…): the finished text is checked and the verdict is reported in
 *   `providerMetadata.dedupWasm` (the text itself is returned unchanged).
 *
 * Call `await initDedupWasm()` before the first model call.
 * @throws DedupTypeError for bad options
 */
export function repetitionMiddleware(options?: RepetitionMiddlewareOptions): LanguageModelMiddleware {
  const opts = checkOptions(options);
  const abortWith = opts.abortWith ?? 'finish';
  const step = opts.generateChunkChars ?? 64;

  const wrapStream: WrapStream = async ({ params, model }) => {
    const watcher = new StreamWatcher(opts.settings, opts.onSteer);
    const cut = new AbortController();
    let result: StreamResult;
    try {
      // Calling the wrapped model ourselves (rather than `doStream`, which is bound to the caller's
      // params) lets us add our own abort signal, so a loop cancels the provider request itself.
      const call: CallOptions = { ...params, abortSignal: anySignal(params.abortSignal, cut.signal) };
      result = await model.doStream(call);
    } catch (e) {
      watcher.dispose();
      throw e;
    }
    const reader = result.stream.getReader();
    const open = new Map<string, 'text-end' | 'reasoning-end'>();
    let tail: StreamPart[] | null = null;

    const stream = new ReadableStream<StreamPart>(
      {
        async pull(controller) {
          if (tail) {
            for (const part of tail) controller.enqueue(part);
            controller.close();
            return;
          }
          let part: StreamPart;
          let error: RepetitionAbortError | null = null;
          try {
            const r = await reader.read();
            if (r.done) {
              watcher.dispose();
              controller.close();
              return;
            }
            part = r.value;
            if (part.type === 'text-start') open.set(part.id, 'text-end');
            else if (part.type === 'reasoning-start') open.set(part.id, 'reasoning-end');
            else if (part.type === 'text-end' || part.type === 'reasoning-end') open.delete(part.id);
            else if (part.type === 'text-delta') error = await watcher.feed({ text: part.delta, reasoning: '' });
            else if (part.type === 'reasoning-delta') error = await watcher.feed({ text: '', reasoning: part.delta });
            else if (part.type === 'finish') {
              part = { ...part, providerMetadata: withVerdict(part.providerMetadata, verdictOf(watcher, null)) };
            }
          } catch (e) {
            watcher.dispose();
            reader.cancel(e).catch(() => undefined);
            controller.error(e);
            return;
          }
          controller.enqueue(part);
          if (!error) return;

          // A loop: stop paying for it, then end the stream in a way every consumer understands.
          const verdict = verdictOf(watcher, error);
          watcher.dispose();
          cut.abort(error);
          reader.cancel(error).catch(() => undefined);
          const closing: StreamPart[] = [...open].map(([id, type]) => ({ type, id }) as StreamPart);
          if (abortWith === 'error') closing.push({ type: 'error', error });
          closing.push({
            type: 'finish',
            usage: EMPTY_USAGE,
            finishReason: { unified: abortWith === 'error' ? 'error' : 'other', raw: REPETITION_FINISH_REASON },
            providerMetadata: withVerdict(undefined, verdict),
          });
          tail = closing;
          try {
            await opts.onAbort?.(error);
          } catch (e) {
            controller.error(e);
          }
        },
        cancel(reason) {
          watcher.dispose();
          cut.abort(reason);
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
    return { ...result, stream };
  };

  const wrapGenerate: WrapGenerate = async ({ doGenerate }) => {
    const result: GenerateResult = await doGenerate();
    const watcher = new StreamWatcher(opts.settings, opts.onSteer);
    let error: RepetitionAbortError | null = null;
    try {
      outer: for (const part of result.content) {
        if (part.type !== 'text' && part.type !== 'reasoning') continue;
        for (let i = 0; i < part.text.length; i += step) {
          const piece = part.text.slice(i, i + step);
          error = await watcher.feed(part.type === 'text' ? { text: piece, reasoning: '' } : { text: '', reasoning: piece });
          if (error) break outer;
        }
      }
      const verdict = verdictOf(watcher, error);
      if (error) await opts.onAbort?.(error);
      return { ...result, providerMetadata: withVerdict(result.providerMetadata, verdict) };
    } finally {
      watcher.dispose();
    }
  };

  return { specificationVersion: 'v3', wrapStream, wrapGenerate };
}

export { RepetitionAbortError };
