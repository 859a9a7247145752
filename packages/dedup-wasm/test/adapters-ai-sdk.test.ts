import { beforeAll, describe, expect, it } from 'vitest';
import { generateText, streamText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { initDedupWasm, DedupTypeError } from '../dist/index.js';
import { PROVIDER_METADATA_KEY, RepetitionAbortError, REPETITION_FINISH_REASON, repetitionMiddleware } from '../dist/ai-sdk.js';
import { chunksOf, LOOP, PROSE } from './helpers/texts.js';

beforeAll(async () => {
  await initDedupWasm();
});

type Part = Record<string, unknown> & { type: string };
const usage = {
  inputTokens: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 100, text: 100, reasoning: 0 },
};

/** The provider-level parts of a streamed answer: optional reasoning, then text. */
function parts(text: string, reasoning = ''): Part[] {
  const out: Part[] = [{ type: 'stream-start', warnings: [] }];
  if (reasoning) {
    out.push({ type: 'reasoning-start', id: 'r' });
    for (const delta of chunksOf(reasoning)) out.push({ type: 'reasoning-delta', id: 'r', delta });
    out.push({ type: 'reasoning-end', id: 'r' });
  }
  out.push({ type: 'text-start', id: 't' });
  for (const delta of chunksOf(text)) out.push({ type: 'text-delta', id: 't', delta });
  out.push({ type: 'text-end', id: 't' }, { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
  return out;
}

/** The SDK's mock model, streaming `list` lazily and recording how far it got and whether it was cancelled. */
function mockStreaming(list: Part[]) {
  const state = { pulled: 0, cancelled: false };
  const model = new MockLanguageModelV3({
    doStream: async () => {
      let i = 0;
      const stream = new ReadableStream<never>(
        {
          pull(c) {
            if (i >= list.length) return c.close();
            state.pulled += 1;
            c.enqueue(list[i++] as never);
          },
          cancel() {
            state.cancelled = true;
          },
        },
        { highWaterMark: 0 },
      );
      return { stream };
    },
  });
  return { model, state, total: list.length };
}

function wrap(model: MockLanguageModelV3, middleware: LanguageModelMiddleware) {
  return wrapLanguageModel({ model, middleware });
}

describe('repetitionMiddleware with streamText (recipe: AI SDK middleware)', () => {
  it('passes a clean answer through and reports a clean verdict', async () => {
    const { model } = mockStreaming(parts(PROSE));
    const result = streamText({ model: wrap(model, repetitionMiddleware()), prompt: 'Explain the package.' });
    expect(await result.text).toBe(PROSE);
    expect(await result.finishReason).toBe('stop');
    const meta = (await result.providerMetadata)?.[PROVIDER_METADATA_KEY];
    expect(meta).toMatchObject({ action: 'none', evidence: null });
  });

  it('cuts a looping answer: upstream call aborted and cancelled, clear finish reason and evidence', async () => {
    const { model, state, total } = mockStreaming(parts(LOOP + PROSE));
    const aborts: RepetitionAbortError[] = [];
    const result = streamText({ model: wrap(model, repetitionMiddleware({ onAbort: (e) => void aborts.push(e) })), prompt: 'Go.' });
    const text = await result.text;
    expect(text.length).toBeGreaterThan(0);
    expect(LOOP.startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(LOOP.length);
    expect(await result.finishReason).toBe('other');
    expect(await result.rawFinishReason).toBe(REPETITION_FINISH_REASON);
    const meta = (await result.providerMetadata)?.[PROVIDER_METADATA_KEY] as Record<string, unknown>;
    expect(meta.action).toBe('abort');
    expect(meta.channel).toBe('content');
    expect((meta.evidence as Record<string, unknown>).rule).toMatch(/\S/);
    expect(model.doStreamCalls[0]?.abortSignal?.aborted).toBe(true);
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(total);
    expect(aborts).toHaveLength(1);
    expect(aborts[0]).toBeInstanceOf(RepetitionAbortError);
  });

  it("abortWith 'error' ends with an error part carrying RepetitionAbortError", async () => {
    const { model } = mockStreaming(parts(LOOP));
    const errors: unknown[] = [];
    const result = streamText({
      model: wrap(model, repetitionMiddleware({ abortWith: 'error' })),
      prompt: 'Go.',
      onError: ({ error }) => void errors.push(error),
    });
    const seen: string[] = [];
    for await (const part of result.fullStream) seen.push(part.type);
    expect(seen).toContain('error');
    expect(seen.indexOf('error')).toBeLessThan(seen.lastIndexOf('finish'));
    expect(errors[0]).toBeInstanceOf(RepetitionAbortError);
    expect(await result.finishReason).toBe('error');
  });

  it('watches reasoning deltas on their own channel', async () => {
    const { model, state, total } = mockStreaming(parts(PROSE, LOOP));
    const result = streamText({ model: wrap(model, repetitionMiddleware()), prompt: 'Think.' });
    expect(await result.text).toBe('');
    const meta = (await result.providerMetadata)?.[PROVIDER_METADATA_KEY] as Record<string, unknown>;
    expect(meta.action).toBe('abort');
    expect(meta.channel).toBe('reasoning');
    expect(state.pulled).toBeLessThan(total);
  });

  it('keeps the caller abort signal working', async () => {
    const { model } = mockStreaming(parts(PROSE));
    const caller = new AbortController();
    const result = streamText({ model: wrap(model, repetitionMiddleware()), prompt: 'x', abortSignal: caller.signal });
    await result.text;
    const signal = model.doStreamCalls[0]!.abortSignal!;
    expect(signal.aborted).toBe(false);
    caller.abort();
    expect(signal.aborted).toBe(true);
  });
});

describe('repetitionMiddleware with generateText', () => {
  const generating = (text: string) =>
    new MockLanguageModelV3({
      doGenerate: { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
    });

  it('reports the verdict on a finished text in provider metadata, text unchanged', async () => {
    const looping = await generateText({ model: wrap(generating(LOOP), repetitionMiddleware()), prompt: 'x' });
    expect(looping.text).toBe(LOOP);
    const bad = looping.providerMetadata?.[PROVIDER_METADATA_KEY] as Record<string, unknown>;
    expect(bad.action).toBe('abort');
    expect((bad.evidence as Record<string, unknown>).severity).toBe('abort');
    const clean = await generateText({ model: wrap(generating(PROSE), repetitionMiddleware()), prompt: 'x' });
    expect(clean.text).toBe(PROSE);
    expect(clean.providerMetadata?.[PROVIDER_METADATA_KEY]).toMatchObject({ action: 'none', evidence: null });
  });

  it('rejects bad options by name', () => {
    expect(() => repetitionMiddleware({ abortWith: 'explode' } as never)).toThrow(DedupTypeError);
    expect(() => repetitionMiddleware({ generateChunkChars: 0 })).toThrow(/generateChunkChars/);
    expect(() => repetitionMiddleware({ onAbort: 1 } as never)).toThrow(/onAbort/);
    expect(() => repetitionMiddleware({ nope: true } as never)).toThrow(/unknown option "nope"/);
  });
});
