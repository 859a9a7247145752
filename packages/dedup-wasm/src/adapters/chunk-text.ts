/**
 * Finding the text in a stream's chunks: strings, OpenAI chat-completion chunks, OpenAI Responses
 * events, Anthropic message events and Vercel AI SDK stream parts are recognized as they are.
 * @module
 */
import { DedupTypeError } from '../errors.js';

/**
 * The text of one chunk, as a `getText` option returns it: a string (visible output), an object
 * with either or both channels, or nothing (a chunk without text, e.g. a usage or tool-call chunk).
 */
export type ChunkText = string | { text?: string | null; reasoning?: string | null } | null | undefined;

/** Text of a chunk split by channel (empty strings when absent). */
export interface ChannelText {
  text: string;
  reasoning: string;
}

const NONE: ChannelText = { text: '', reasoning: '' };

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

// Event types of the recognized families that carry no text to watch.
const TYPED_PREFIXES = ['text-', 'reasoning-', 'tool-', 'response.', 'message_', 'content_block_', 'start', 'finish'];
const TYPED_NAMES = new Set(['source', 'file', 'abort', 'error', 'raw', 'stream-start', 'response-metadata', 'ping']);

/**
 * The text of a chunk in one of the recognized shapes. Throws {@link DedupTypeError} for any other
 * shape, so a stream is never watched silently without its text: pass `getText` for those.
 *
 * - a string: the visible text;
 * - OpenAI chat-completion chunks (`choices[0].delta.content`; `delta.reasoning_content` or
 *   `delta.reasoning` go to the reasoning channel); only the first choice is watched;
 * - OpenAI Responses events (`response.output_text.delta`, `response.reasoning_text.delta`,
 *   `response.reasoning_summary_text.delta`);
 * - Anthropic events (`content_block_delta` with a `text_delta` or `thinking_delta`);
 * - Vercel AI SDK parts (`text-delta` / `reasoning-delta`, with `text` or `delta`).
 */
export function defaultChunkText(chunk: unknown): ChannelText {
  if (typeof chunk === 'string') return { text: chunk, reasoning: '' };
  if (isRecord(chunk)) {
    if (Array.isArray(chunk['choices'])) {
      const choices = chunk['choices'] as unknown[];
      const first = choices.find((c) => isRecord(c) && (c['index'] === 0 || c['index'] === undefined)) ?? choices[0];
      if (!isRecord(first) || !isRecord(first['delta'])) return NONE;
      const d = first['delta'];
      return { text: str(d['content']), reasoning: str(d['reasoning_content']) || str(d['reasoning']) };
    }
    const type = chunk['type'];
    if (typeof type === 'string') {
      switch (type) {
        case 'text-delta':
          return { text: str(chunk['text']) || str(chunk['delta']), reasoning: '' };
        case 'reasoning-delta':
          return { text: '', reasoning: str(chunk['text']) || str(chunk['delta']) };
        case 'response.output_text.delta':
          return { text: str(chunk['delta']), reasoning: '' };
        case 'response.reasoning_text.delta':
        case 'response.reasoning_summary_text.delta':
          return { text: '', reasoning: str(chunk['delta']) };
        case 'content_block_delta': {
          const d = chunk['delta'];
          if (!isRecord(d)) return NONE;
          if (d['type'] === 'text_delta') return { text: str(d['text']), reasoning: '' };
          if (d['type'] === 'thinking_delta') return { text: '', reasoning: str(d['thinking']) };
          return NONE;
        }
        default:
          if (TYPED_NAMES.has(type) || TYPED_PREFIXES.some((p) => type.startsWith(p))) return NONE;
      }
    }
  }
  const got = chunk instanceof Uint8Array ? 'bytes (decode them first, e.g. with TextDecoderStream)' : describe(chunk);
  throw new DedupTypeError(
    'getText',
    'is required for chunks that are not strings or recognized SDK chunks',
    `monitorStream: cannot find the text in a chunk of ${got}; pass options.getText(chunk)`,
  );
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (isRecord(v)) {
    const type = v['type'];
    return typeof type === 'string' ? `type "${type}"` : `an object with keys ${Object.keys(v).slice(0, 5).join(', ') || '(none)'}`;
  }
  return `type ${typeof v}`;
}

/** Normalizes what a `getText` option returned; throws naming `getText` on anything else. */
export function normalizeChunkText(value: ChunkText): ChannelText {
  if (value === null || value === undefined) return NONE;
  if (typeof value === 'string') return { text: value, reasoning: '' };
  if (isRecord(value)) {
    const text = value.text ?? '';
    const reasoning = value.reasoning ?? '';
    if (typeof text === 'string' && typeof reasoning === 'string') return { text, reasoning };
  }
  throw new DedupTypeError(
    'getText',
    'must return a string, { text?, reasoning? } of strings, null or undefined',
    `monitorStream: getText returned ${describe(value)}`,
  );
}
