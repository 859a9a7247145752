/**
 * `dedupMessages`: repeated-block removal across an OpenAI- or Anthropic-style message array.
 * @module
 */
import { DedupTypeError } from '../errors.js';
import { applyKept, runGuard, type CoreDoc } from './core.js';
import { strictGuardOptionsJson, type DeduplicateOptions } from './options.js';

/** A chat message: a role and string content or an array of content parts (other fields kept). */
export interface ChatMessage {
  role: string;
  content?: string | readonly unknown[] | null;
  [key: string]: unknown;
}

/**
 * Where a text lives in a message array: the message, the content part (`null` for string
 * content) and, inside an Anthropic `tool_result` part with array content, the inner part.
 */
export interface MessageTextLocation {
  message: number;
  part: number | null;
  innerPart?: number;
}

/** A removed block: UTF-16 range of the original text at its location, and what it repeats. */
export interface MessageRemovedBlock extends MessageTextLocation {
  start: number;
  end: number;
  /** The block that stays and says everything this one said. */
  duplicateOf: MessageTextLocation & { start: number; end: number };
}

/** Result of {@link dedupMessages}. */
export interface DedupMessagesResult<M extends ChatMessage> {
  /**
   * The cleaned messages, in order. Messages that changed are shallow copies with new `content`;
   * the others are the input objects themselves. The input array is never mutated.
   */
  messages: M[];
  /** Number of blocks removed. */
  removed: number;
  removedBlocks: MessageRemovedBlock[];
  /** Indices (in the input) of messages dropped because all of their text was a repeat. */
  droppedMessages: number[];
  /** UTF-16 units of text in the input (string content, text parts, tool results). */
  originalChars: number;
  /** The same count in the output. */
  cleanedChars: number;
}

interface DocRef extends MessageTextLocation {
  text: string;
  pinned: boolean;
}

/** Fields that make a message carry something besides its text. */
const CONTENT_FREE_KEYS = new Set(['role', 'content', 'name']);

/** Roles whose text is tool output: never changed, but other text repeating it can go. */
const TOOL_ROLES = new Set(['tool', 'function']);

/** Roles that do not take a turn in the user/assistant alternation. */
const SYSTEM_ROLES = new Set(['system', 'developer']);

function isTextPart(p: unknown): p is { type: 'text'; text: string } {
  return p !== null && typeof p === 'object' && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string';
}

function isToolResult(p: unknown): p is { type: 'tool_result'; content?: unknown } {
  return p !== null && typeof p === 'object' && (p as { type?: unknown }).type === 'tool_result';
}

function collectDocs(messages: readonly ChatMessage[]): DocRef[] {
  const docs: DocRef[] = [];
  messages.forEach((m, i) => {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      throw new DedupTypeError(`messages[${i}]`, 'must be an object', `messages[${i}] must be a message object`);
    }
    if (typeof m.role !== 'string') {
      throw new DedupTypeError(`messages[${i}].role`, 'must be a string', `messages[${i}].role must be a string`);
    }
    const pinned = TOOL_ROLES.has(m.role);
    const c = m.content;
    if (typeof c === 'string') {
      docs.push({ message: i, part: null, text: c, pinned });
    } else if (Array.isArray(c)) {
      c.forEach((p: unknown, j) => {
        if (isTextPart(p)) {
          docs.push({ message: i, part: j, text: p.text, pinned });
        } else if (isToolResult(p)) {
          if (typeof p.content === 'string') docs.push({ message: i, part: j, text: p.content, pinned: true });
          else if (Array.isArray(p.content)) {
            p.content.forEach((q: unknown, k) => {
              if (isTextPart(q)) docs.push({ message: i, part: j, innerPart: k, text: q.text, pinned: true });
            });
          }
        }
      });
    } else if (c !== undefined && c !== null) {
      throw new DedupTypeError(`messages[${i}].content`, 'must be a string, an array of parts or null', `messages[${i}].content must be a string, an array of content parts, or null`);
    }
  });
  return docs;
}

function isBlank(s: string): boolean {
  return s.trim().length === 0;
}

function location(d: DocRef): MessageTextLocation {
  return d.innerPart === undefined ? { message: d.message, part: d.part } : { message: d.message, part: d.part, innerPart: d.innerPart };
}

function hasToolCalls(m: ChatMessage): boolean {
  return (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || (m.function_call !== undefined && m.function_call !== null);
}

function carriesMore(m: ChatMessage): boolean {
  return Object.keys(m).some((k) => !CONTENT_FREE_KEYS.has(k) && m[k] !== undefined && m[k] !== null);
}

/**
 * Removes repeated blocks across the text of a message array — the history a pipeline pastes into
 * message after message — with the same rules as {@link deduplicate}, blocks compared across all
 * messages in order.
 *
 * - Text is string `content` and `{ type: 'text', text }` parts. Other parts (images, `tool_use`,
 *   thinking, …) and fields (`tool_calls`, `tool_call_id`, …) are never touched.
 * - Tool output (`role: 'tool'` messages and Anthropic `tool_result` parts) is never changed, so
 *   tool call / result pairing stays valid; text elsewhere that repeats tool output can go.
 * - A text part whose text was all repeats is removed from its message. A message is dropped only
 *   when all of its text was a repeat, it carries nothing else, it is not the last message, and
 *   dropping it neither changes which role speaks first nor puts two turns of the same role next to
 *   each other; otherwise it is kept as it was.
 *
 * @throws DedupTypeError naming `messages[i]…` for malformed messages; option errors as in
 * {@link deduplicate}
 */
export function dedupMessages<M extends ChatMessage>(messages: readonly M[], options?: DeduplicateOptions): DedupMessagesResult<M> {
  if (!Array.isArray(messages)) throw new DedupTypeError('messages', 'must be an array', 'messages must be an array of message objects');
  const json = strictGuardOptionsJson(options);
  const docs = collectDocs(messages);
  const originalChars = docs.reduce((n, d) => n + d.text.length, 0);
  const { kept, keptBlocks, removals } = runGuard(docs.map((d): CoreDoc => ({ text: d.text, pinned: d.pinned })), json);

  const cleaned = docs.map((d, k) => (d.pinned ? d.text : applyKept(d.text, kept[k] ?? [])));
  const docsOf = new Map<number, number[]>();
  docs.forEach((d, k) => {
    const list = docsOf.get(d.message);
    if (list) list.push(k);
    else docsOf.set(d.message, [k]);
  });
  const changedMessages = new Set(removals.map((r) => docs[r.doc]!.message));

  // Which messages lost all their text, and may be dropped.
  const restored = new Set<number>();
  const dropped: number[] = [];
  const emptied = (i: number): boolean => {
    const ks = docsOf.get(i) ?? [];
    return ks.length > 0 && ks.every((k) => keptBlocks[k] === 0) && ks.some((k) => !isBlank(docs[k]!.text));
  };
  // Would the message be left with no content at all?
  const nothingLeft = (m: ChatMessage): boolean =>
    Array.isArray(m.content) ? m.content.every((p) => isTextPart(p)) : !hasToolCalls(m);
  let prevRole: string | undefined;
  messages.forEach((m, i) => {
    if (changedMessages.has(i) && emptied(i) && nothingLeft(m)) {
      const next = messages[i + 1];
      const ok =
        !carriesMore(m) &&
        next !== undefined &&
        (prevRole === undefined ? next.role === m.role : prevRole !== next.role || prevRole === m.role || next.role === m.role);
      if (ok) {
        dropped.push(i);
        return;
      }
      // Keeping an empty message would be invalid, dropping it would change the conversation: keep it whole.
      restored.add(i);
    }
    if (!SYSTEM_ROLES.has(m.role)) prevRole = m.role;
  });
  for (const i of restored) for (const k of docsOf.get(i) ?? []) cleaned[k] = docs[k]!.text;

  const droppedSet = new Set(dropped);
  const out: M[] = [];
  messages.forEach((m, i) => {
    if (droppedSet.has(i)) return;
    if (!changedMessages.has(i) || restored.has(i)) {
      out.push(m);
      return;
    }
    const ks = docsOf.get(i) ?? [];
    if (typeof m.content === 'string') {
      const text = cleaned[ks[0]!]!;
      const gone = keptBlocks[ks[0]!] === 0 && !isBlank(m.content);
      out.push({ ...m, content: gone ? null : text });
      return;
    }
    // Array content: rewrite text parts, drop the ones whose text was all repeats.
    const byPart = new Map<number, string>();
    const emptiedPart = new Set<number>();
    for (const k of ks) {
      if (docs[k]!.innerPart !== undefined || docs[k]!.pinned) continue;
      byPart.set(docs[k]!.part!, cleaned[k]!);
      if (keptBlocks[k] === 0 && !isBlank(docs[k]!.text)) emptiedPart.add(docs[k]!.part!);
    }
    const parts: unknown[] = [];
    (m.content as readonly unknown[]).forEach((p, j) => {
      const t = byPart.get(j);
      if (t === undefined || !isTextPart(p)) parts.push(p);
      else if (!emptiedPart.has(j)) parts.push(t === p.text ? p : { ...p, text: t });
    });
    out.push({ ...m, content: parts });
  });

  const removedBlocks: MessageRemovedBlock[] = [];
  for (const r of removals) {
    const d = docs[r.doc]!;
    if (restored.has(d.message)) continue;
    removedBlocks.push({ ...location(d), start: r.start, end: r.end, duplicateOf: { ...location(docs[r.dupDoc]!), start: r.dupStart, end: r.dupEnd } });
  }
  let cleanedChars = 0;
  docs.forEach((d, k) => {
    if (!droppedSet.has(d.message)) cleanedChars += cleaned[k]!.length;
  });
  return { messages: out, removed: removedBlocks.length, removedBlocks, droppedMessages: dropped, originalChars, cleanedChars };
}
