import { beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import {
  createStreamingDedup,
  DedupTypeError,
  initDedupWasm,
  monitorStream,
  RepetitionAbortError,
  type StreamCheck,
} from '../dist/index.js';
import { chunksOf, LOOP, PROSE } from './helpers/texts.js';

beforeAll(async () => {
  await initDedupWasm();
});

/** An async iterable that records how far it was read and whether it was closed early. */
function trackedSource<T>(items: T[]) {
  const state = { pulled: 0, returned: false };
  const iterable: AsyncIterable<T> = {
    [Symbol.asyncIterator]() {
      let i = 0;
      return {
        async next() {
          if (i >= items.length) return { done: true, value: undefined };
          state.pulled += 1;
          return { done: false, value: items[i++]! };
        },
        async return() {
          state.returned = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return { iterable, state };
}

function trackedReadable<T>(items: T[]) {
  const state = { pulled: 0, cancelled: false as boolean, reason: undefined as unknown };
  let i = 0;
  const stream = new ReadableStream<T>(
    {
      pull(c) {
        if (i >= items.length) return c.close();
        state.pulled += 1;
        c.enqueue(items[i++]!);
      },
      cancel(reason) {
        state.cancelled = true;
        state.reason = reason;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

async function collect<T>(it: AsyncIterable<T>): Promise<{ items: T[]; error: unknown }> {
  const items: T[] = [];
  try {
    for await (const x of it) items.push(x);
    return { items, error: null };
  } catch (error) {
    return { items, error };
  }
}

async function readAll<T>(s: ReadableStream<T>): Promise<{ items: T[]; error: unknown }> {
  const reader = s.getReader();
  const items: T[] = [];
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) return { items, error: null };
      items.push(r.value);
    }
  } catch (error) {
    return { items, error };
  }
}

describe('monitorStream over async iterables of strings', () => {
  it('passes clean prose through unchanged and reads to the end', async () => {
    const chunks = chunksOf(PROSE);
    const { iterable, state } = trackedSource(chunks);
    const { items, error } = await collect(monitorStream(iterable));
    expect(error).toBeNull();
    expect(items).toEqual(chunks);
    expect(items.join('')).toBe(PROSE);
    expect(state.pulled).toBe(chunks.length);
  });

  it('stops a loop early: cancels the upstream, aborts the controller, ends with the evidence', async () => {
    const chunks = chunksOf(LOOP + PROSE);
    const { iterable, state } = trackedSource(chunks);
    const controller = new AbortController();
    const { items, error } = await collect(monitorStream(iterable, { abortController: controller }));
    expect(error).toBeInstanceOf(RepetitionAbortError);
    const e = error as RepetitionAbortError;
    expect(e.channel).toBe('content');
    expect(e.check.action).toBe('abort');
    expect(e.evidence?.rule).toMatch(/\S/);
    expect(e.evidence?.severity).toBe('abort');
    expect(state.returned).toBe(true);
    expect(controller.signal.aborted).toBe(true);
    expect(controller.signal.reason).toBe(e);
    // Nothing was read after the verdict, and everything read was delivered unchanged.
    expect(state.pulled).toBe(items.length);
    expect(items).toEqual(chunks.slice(0, items.length));
    expect(items.join('').length).toBeLessThan(LOOP.length);
  });

  it('ends normally when onAbort is given and returns', async () => {
    const { iterable, state } = trackedSource(chunksOf(LOOP));
    const seen: RepetitionAbortError[] = [];
    const { items, error } = await collect(monitorStream(iterable, { onAbort: (e) => void seen.push(e) }));
    expect(error).toBeNull();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(RepetitionAbortError);
    expect(state.returned).toBe(true);
    expect(items.length).toBeLessThan(chunksOf(LOOP).length);
  });

  it('calls onSteer once per steer episode, as the core reports them', async () => {
    // Candidates that steer under today's rules; the expectation is computed from the core itself.
    const candidates: [string, object | undefined][] = [
      [LOOP, { maxRepetitions: 1000 }],
      [Array.from({ length: 60 }, (_, i) => `Checking item ${i}: the value is ${(i * 7) % 13} and the status is fine. `).join(''), undefined],
    ];
    let steered = 0;
    for (const [text, settings] of candidates) {
      const chunks = chunksOf(text);
      const ref = createStreamingDedup(settings);
      let episodes = 0;
      let prev = 'none';
      for (const c of chunks) {
        const a = ref.feedChunk(c).action;
        if (a === 'abort') break;
        if (a === 'steer' && prev !== 'steer') episodes += 1;
        prev = a;
      }
      ref.dispose();
      const calls: StreamCheck[] = [];
      await collect(monitorStream((async function* () { yield* chunks; })(), { settings, onSteer: (c) => void calls.push(c), onAbort: () => {} }));
      expect(calls).toHaveLength(episodes);
      for (const c of calls) {
        expect(c.action).toBe('steer');
        expect(c.evidence?.severity).toBe('steer');
      }
      steered += episodes;
    }
    expect(steered, 'no candidate text steered, so onSteer was never exercised').toBeGreaterThan(0);
  });

  it('releases the upstream when the consumer stops early', async () => {
    const { iterable, state } = trackedSource(chunksOf(PROSE));
    for await (const _ of monitorStream(iterable)) break;
    expect(state.returned).toBe(true);
  });

  it('propagates upstream errors unchanged', async () => {
    const boom = new Error('network down');
    const source = (async function* () {
      yield 'Hello there. ';
      throw boom;
    })();
    const { items, error } = await collect(monitorStream(source));
    expect(items).toEqual(['Hello there. ']);
    expect(error).toBe(boom);
  });
});

describe('monitorStream over ReadableStreams', () => {
  it('returns a ReadableStream passing chunks through', async () => {
    const chunks = chunksOf(PROSE);
    const { stream } = trackedReadable(chunks);
    const out = monitorStream(stream);
    expect(out).toBeInstanceOf(ReadableStream);
    const { items, error } = await readAll(out);
    expect(error).toBeNull();
    expect(items.join('')).toBe(PROSE);
  });

  it('cancels the upstream on a loop and errors with RepetitionAbortError', async () => {
    const chunks = chunksOf(LOOP);
    const { stream, state } = trackedReadable(chunks);
    const { items, error } = await readAll(monitorStream(stream));
    expect(error).toBeInstanceOf(RepetitionAbortError);
    expect(state.cancelled).toBe(true);
    expect(state.reason).toBe(error);
    expect(state.pulled).toBe(items.length);
    expect(items.length).toBeLessThan(chunks.length);
  });

  it('closes normally with onAbort, keeping the last chunk', async () => {
    const chunks = chunksOf(LOOP);
    const { stream, state } = trackedReadable(chunks);
    let aborted: RepetitionAbortError | null = null;
    const { items, error } = await readAll(monitorStream(stream, { onAbort: (e) => void (aborted = e) }));
    expect(error).toBeNull();
    expect(aborted).toBeInstanceOf(RepetitionAbortError);
    expect(state.cancelled).toBe(true);
    expect(items).toEqual(chunks.slice(0, state.pulled));
  });

  it('a text stream piped through TextDecoderStream works; raw bytes ask for getText', async () => {
    const bytes = new TextEncoder().encode(PROSE);
    const source = () => new ReadableStream<BufferSource>({ start(c) { c.enqueue(bytes); c.close(); } });
    const { items } = await readAll(monitorStream(source().pipeThrough(new TextDecoderStream())));
    expect(items.join('')).toBe(PROSE);
    const { error } = await readAll(monitorStream(source()));
    expect(error).toBeInstanceOf(DedupTypeError);
    expect((error as DedupTypeError).field).toBe('getText');
    expect((error as Error).message).toMatch(/TextDecoderStream/);
  });
});

describe('monitorStream with SDK chunks', () => {
  it('reads custom chunk shapes through getText, on both channels', async () => {
    const parts = [
      ...chunksOf(PROSE).map((t) => ({ kind: 'think', t })),
      ...chunksOf(LOOP).map((t) => ({ kind: 'say', t })),
    ];
    const { error } = await collect(
      monitorStream((async function* () { yield* parts; })(), {
        getText: (p) => (p.kind === 'think' ? { reasoning: p.t } : p.t),
      }),
    );
    expect(error).toBeInstanceOf(RepetitionAbortError);
    expect((error as RepetitionAbortError).channel).toBe('content');
  });

  it('watches AI SDK fullStream parts and Anthropic events with no option', async () => {
    const aiParts = chunksOf(LOOP).map((text, i) => ({ type: 'text-delta', id: '0', text, i }));
    const r1 = await collect(monitorStream((async function* () { yield { type: 'start' }; yield* aiParts; })()));
    expect(r1.error).toBeInstanceOf(RepetitionAbortError);
    const anthropic = chunksOf(LOOP).map((thinking) => ({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking } }));
    const r2 = await collect(monitorStream((async function* () { yield { type: 'message_start' }; yield* anthropic; })()));
    expect((r2.error as RepetitionAbortError).channel).toBe('reasoning');
  });

  it('rejects unknown chunk shapes, bad options and non-streams by name', async () => {
    const r = await collect(monitorStream((async function* () { yield { token: 'x' }; })()));
    expect(r.error).toBeInstanceOf(DedupTypeError);
    expect((r.error as DedupTypeError).field).toBe('getText');
    const bad = await collect(monitorStream((async function* () { yield 1; })(), { getText: () => 42 as never }));
    expect((bad.error as DedupTypeError).rule).toMatch(/must return/);
    expect(() => monitorStream([] as never)).toThrow(DedupTypeError);
    expect(() => monitorStream((async function* () {})(), { onsteer: () => {} } as never)).toThrow(/unknown option "onsteer"/);
    expect(() => monitorStream((async function* () {})(), { onSteer: 'x' as never })).toThrow(DedupTypeError);
    expect(() => monitorStream((async function* () {})(), { settings: { ngramThreshold: 2 } })).toThrow(RangeError);
  });
});

describe('the OpenAI SDK (recipe: OpenAI SDK stream)', () => {
  /** A fetch that answers a chat-completions call with SSE chunks, and records the abort. */
  function sseFetch(deltas: { content?: string; reasoning_content?: string }[]) {
    const state = { sent: 0, cancelled: false, signal: undefined as AbortSignal | undefined };
    const fetch = async (_url: unknown, init?: RequestInit): Promise<Response> => {
      state.signal = init?.signal ?? undefined;
      const enc = new TextEncoder();
      let i = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(c) {
            if (i < deltas.length) {
              const chunk = {
                id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-test', system_fingerprint: 'fp_test',
                choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', ...deltas[i] } : deltas[i], logprobs: null, finish_reason: null }],
              };
              c.enqueue(enc.encode(`data: ${JSON.stringify(chunk)}\n\n`));
              state.sent += 1;
              i += 1;
            } else {
              c.enqueue(enc.encode('data: [DONE]\n\n'));
              c.close();
            }
          },
          cancel() {
            state.cancelled = true;
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    return { fetch, state };
  }

  const client = (fetch: typeof globalThis.fetch) => new OpenAI({ apiKey: 'test-key', baseURL: 'http://localhost.invalid/v1', fetch, maxRetries: 0 });

  it('passes a clean completion through, chunk for chunk', async () => {
    const { fetch } = sseFetch(chunksOf(PROSE).map((content) => ({ content })));
    const stream = await client(fetch).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of monitorStream(stream)) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(PROSE);
  });

  it('aborts a looping completion: the HTTP request is aborted and the body cancelled', async () => {
    const deltas = chunksOf(LOOP).map((content) => ({ content }));
    const { fetch, state } = sseFetch(deltas);
    const stream = await client(fetch).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const { error } = await collect(
      (async function* () {
        for await (const chunk of monitorStream(stream)) {
          text += chunk.choices[0]?.delta?.content ?? '';
          yield chunk;
        }
      })(),
    );
    expect(error).toBeInstanceOf(RepetitionAbortError);
    expect(state.signal?.aborted).toBe(true);
    expect(state.cancelled).toBe(true);
    expect(state.sent).toBeLessThan(deltas.length);
    expect(LOOP.startsWith(text)).toBe(true);
  });

  it('sends reasoning_content deltas to the reasoning channel', async () => {
    const deltas = [...chunksOf(LOOP).map((reasoning_content) => ({ reasoning_content }))];
    const { fetch } = sseFetch(deltas);
    const stream = await client(fetch).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const { error } = await collect(monitorStream(stream));
    expect(error).toBeInstanceOf(RepetitionAbortError);
    expect((error as RepetitionAbortError).channel).toBe('reasoning');
    expect((error as RepetitionAbortError).message).toMatch(/reasoning/);
  });
});
