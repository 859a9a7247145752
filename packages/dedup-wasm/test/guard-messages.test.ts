/**
 * `dedupMessages` on OpenAI- and Anthropic-shaped conversations, tool calls included.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DedupTypeError, DeduplicateGuard, dedupMessages, initDedupWasm, type ChatMessage } from '../dist/index.js';

beforeAll(async () => {
  await initDedupWasm();
});

const H1 = '[Turn 1] User: Summarise the Q3 sales report for the leadership team.';
const H2 = '[Turn 2] Researcher: Q3 revenue was $4.2M, up 8% on Q2, driven by renewals.';
const FILE = 'def total(xs):\n    """Sum of the order amounts, in cents, for the quarterly report."""\n    return sum(x.amount for x in xs)';

/** Every tool call id of an assistant message has a tool message answering it, right after. */
function openAiPairingValid(messages: ChatMessage[]): boolean {
  for (let i = 0; i < messages.length; i++) {
    const calls = (messages[i]!.tool_calls as Array<{ id: string }> | undefined) ?? [];
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++) answered.add(messages[j]!.tool_call_id as string);
    if (calls.some((c) => !answered.has(c.id))) return false;
  }
  return true;
}

describe('dedupMessages: OpenAI shape', () => {
  const toolCall = { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"report.py"}' } };
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are the supervisor of a research team.' },
    { role: 'user', content: `${H1}\n${H2}` },
    { role: 'assistant', content: `${H2}`, tool_calls: [toolCall] },
    { role: 'tool', tool_call_id: 'call_1', content: FILE },
    { role: 'assistant', content: `The file says:\n\n${FILE}\n\nIt sums the amounts.` },
    { role: 'user', content: [{ type: 'text', text: `${H1}\n${H2}\n[Turn 3] Supervisor: Refine this summary.` }, { type: 'image_url', image_url: { url: 'https://example.com/chart.png' } }] },
  ];

  it('removes the repeats across messages and keeps roles, order, tool calls and pairing', () => {
    const input = structuredClone(messages);
    const r = dedupMessages(messages);
    expect(messages).toEqual(input); // the input is not mutated
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(r.droppedMessages).toEqual([]);
    // The assistant's repeat of H2 goes, but the message stays: it carries the tool call.
    expect(r.messages[2]).toEqual({ role: 'assistant', content: null, tool_calls: [toolCall] });
    // Tool output is never changed (same object), and pairing stays valid.
    expect(r.messages[3]).toBe(messages[3]);
    expect(openAiPairingValid(r.messages)).toBe(true);
    // The assistant's quote of the tool output goes.
    expect(r.messages[4]!.content).toBe('The file says:\n\nIt sums the amounts.');
    // The re-pasted history goes; the new turn and the image stay.
    expect(r.messages[5]!.content).toEqual([
      { type: 'text', text: '[Turn 3] Supervisor: Refine this summary.' },
      { type: 'image_url', image_url: { url: 'https://example.com/chart.png' } },
    ]);
    expect(r.messages[0]).toBe(messages[0]);
    expect(r.removed).toBe(4);
    expect(r.removedBlocks[0]).toEqual({ message: 2, part: null, start: 0, end: H2.length, duplicateOf: { message: 1, part: null, start: H1.length + 1, end: H1.length + 1 + H2.length } });
    expect(r.removedBlocks.find((b) => b.message === 4)!.duplicateOf).toEqual({ message: 3, part: null, start: 0, end: FILE.length });
    expect(r.originalChars).toBeGreaterThan(r.cleanedChars);
  });

  it('drops a message that was only a repeat when that keeps the turn order valid', () => {
    const msgs: ChatMessage[] = [
      { role: 'user', content: H1 },
      { role: 'user', content: H1 },
      { role: 'assistant', content: H2 },
      { role: 'user', content: 'And Q4?' },
    ];
    const r = dedupMessages(msgs);
    expect(r.droppedMessages).toEqual([1]);
    expect(r.messages).toEqual([msgs[0], msgs[2], msgs[3]]);
  });

  it('keeps a repeated message whole when dropping it would join two turns of one role or end the conversation', () => {
    const msgs: ChatMessage[] = [
      { role: 'user', content: H1 },
      { role: 'assistant', content: H2 },
      { role: 'user', content: 'Thanks. Can you double-check the number?' },
      { role: 'assistant', content: H2 },
      { role: 'user', content: H1 },
    ];
    const r = dedupMessages(msgs);
    expect(r.droppedMessages).toEqual([]);
    expect(r.messages).toEqual(msgs);
    expect(r.removed).toBe(0);
    expect(r.originalChars).toBe(r.cleanedChars);
  });

  it('does not drop a message that carries more than text', () => {
    const msgs: ChatMessage[] = [
      { role: 'user', content: H1 },
      { role: 'user', content: H1, name: 'analyst', metadata: { id: 7 } },
      { role: 'assistant', content: 'ok' },
    ];
    const r = dedupMessages(msgs);
    expect(r.droppedMessages).toEqual([]);
    expect(r.messages[1]).toBe(msgs[1]);
  });

  it('rejects malformed messages naming the field', () => {
    expect(() => dedupMessages('nope' as never)).toThrow(DedupTypeError);
    try {
      dedupMessages([{ role: 'user', content: 'a' }, { role: 7 } as never]);
      expect.unreachable();
    } catch (e) {
      expect((e as DedupTypeError).field).toBe('messages[1].role');
    }
    expect(() => dedupMessages([{ role: 'user', content: 42 as never }])).toThrow(/messages\[0\]\.content/);
    expect(() => dedupMessages([], { keep: 'x' as never })).toThrow(RangeError);
  });
});

describe('dedupMessages: Anthropic shape', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: [{ type: 'text', text: `${H1}\n\n${H2}` }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me read the report code.' },
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'report.py' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: FILE }] },
        { type: 'text', text: H2 },
        { type: 'text', text: `${H1}\n\nPlease fix the rounding.`, cache_control: { type: 'ephemeral' } },
      ],
    },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'The sum is in cents.', signature: 'sig' }, { type: 'text', text: `${FILE}\n\nRounded to dollars.` }] },
    { role: 'user', content: 'Looks good.' },
  ];

  it('dedups text parts, keeps tool_use / tool_result / thinking parts and the part fields', () => {
    const r = dedupMessages(messages);
    expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(r.messages[0]).toBe(messages[0]);
    expect(r.messages[1]).toBe(messages[1]);
    // The tool result stays untouched; the repeated text part is dropped; the other loses its repeat.
    expect(r.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: FILE }] },
      { type: 'text', text: 'Please fix the rounding.', cache_control: { type: 'ephemeral' } },
    ]);
    // Quoted tool output goes; the thinking block stays as it was.
    expect(r.messages[3]!.content).toEqual([
      { type: 'thinking', thinking: 'The sum is in cents.', signature: 'sig' },
      { type: 'text', text: 'Rounded to dollars.' },
    ]);
    expect(r.removedBlocks.find((b) => b.message === 3)!.duplicateOf).toEqual({ message: 2, part: 0, innerPart: 0, start: 0, end: FILE.length });
    expect(r.removed).toBe(3);
  });

  it('works through DeduplicateGuard.checkMessages with keep: last', () => {
    const guard = new DeduplicateGuard({ keep: 'last' });
    const msgs: ChatMessage[] = [
      { role: 'user', content: [{ type: 'text', text: `Status: ${H2}` }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Noted.' }] },
      { role: 'user', content: [{ type: 'text', text: `Status: ${H2}` }, { type: 'text', text: 'Anything new?' }] },
    ];
    const r = guard.checkMessages(msgs);
    expect(r.droppedMessages).toEqual([]); // dropping the first message would make the assistant speak first
    expect(r.messages).toEqual(msgs);
    expect(guard.lastResult).toBe(r);
  });
});
