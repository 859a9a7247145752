/**
 * Input guard speed: `deduplicate` on a 1 MB multi-agent transcript (the shared corpus transcripts,
 * concatenated and repeated — read at bench time) and `dedupMessages` on 1,000 messages.
 * A TextEncoder row gives the machine's speed for comparison (shared machines vary a lot).
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dedupMessages, deduplicate, initDedupWasm, type ChatMessage } from '../dist/index.js';
import { locateCorpus } from '../eval/corpus.js';

type Report = (row: { name: string; value: number; unit: string; target?: string }) => void;


function transcripts(): { text: string; source: string } {
  const corpus = locateCorpus();
  const dir = corpus ? join(corpus, 'transcripts') : null;
  if (dir) {
    const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();
    return { text: files.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n\n'), source: 'corpus' };
  }
  // No corpus: a synthetic pipeline history, so the bench still runs (rows are marked).
  const turns: string[] = [];
  for (let i = 0; i < 400; i++) {
    turns.push(`[Turn ${i}] Agent ${i % 7}: step ${i} of the plan, status ${i % 3 === 0 ? 'done' : 'pending'}, notes on item ${i * 13}.`);
    if (i % 5 === 0) turns.push(...turns.slice(Math.max(0, turns.length - 6), turns.length - 1));
  }
  return { text: turns.join('\n'), source: 'synthetic' };
}

/** `text` repeated and cut at a line break to about `size` UTF-16 units. */
function ofSize(text: string, size: number): string {
  let out = '';
  while (out.length < size) out += `${text}\n\n`;
  const cut = out.lastIndexOf('\n', size);
  return out.slice(0, cut > 0 ? cut : size);
}

function median(f: () => void, runs: number): number {
  for (let i = 0; i < 3; i++) f();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** A pipeline conversation: each message is a paragraph of the transcript, and every fourth user message re-pastes the last three messages. */
function conversation(text: string, count: number): ChatMessage[] {
  const paragraphs = text.split(/\n\s*\n/).filter((p) => p.trim().length > 0);
  const messages: ChatMessage[] = [];
  for (let i = 0; messages.length < count; i++) {
    const role = messages.length % 2 === 0 ? 'user' : 'assistant';
    let content = paragraphs[i % paragraphs.length]!;
    if (role === 'user' && i % 4 === 0) {
      const recent = messages.slice(-3).map((m) => m.content as string);
      content = `${recent.join('\n\n')}\n\n${content}`;
    }
    messages.push(i % 8 === 1 ? { role, content: [{ type: 'text', text: content }] } : { role, content });
  }
  return messages;
}

export async function run(report: Report): Promise<void> {
  await initDedupWasm();
  const { text, source } = transcripts();
  const tag = source === 'corpus' ? '' : ' (synthetic)';
  const mb = ofSize(text, 1_000_000);

  const enc = new TextEncoder();
  report({ name: 'guard: baseline TextEncoder.encode, 1 MB (machine speed)', value: median(() => enc.encode(mb), 11), unit: 'ms' });

  const r = deduplicate(mb);
  const ms = median(() => deduplicate(mb), 11);
  report({ name: `guard: deduplicate, 1 MB transcript${tag}`, value: ms, unit: 'ms', target: '<= 20 ms' });
  report({ name: `guard: deduplicate throughput${tag}`, value: mb.length / 1e6 / (ms / 1000), unit: 'MB/s' });
  report({ name: `guard: deduplicate exact-only, 1 MB transcript${tag}`, value: median(() => deduplicate(mb, { nearDuplicate: false }), 11), unit: 'ms' });
  report({ name: `guard: 1 MB transcript, chars removed${tag}`, value: (100 * (r.originalChars - r.cleanedChars)) / r.originalChars, unit: '%' });
  report({ name: `guard: 1 MB transcript, blocks removed${tag}`, value: r.removed, unit: 'blocks' });

  const messages = conversation(text, 1000);
  const chars = messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content).length), 0);
  const mr = dedupMessages(messages);
  report({ name: `guard: dedupMessages, 1,000 messages (${(chars / 1e6).toFixed(2)} M chars)${tag}`, value: median(() => dedupMessages(messages), 11), unit: 'ms' });
  report({ name: `guard: dedupMessages, chars removed${tag}`, value: (100 * (mr.originalChars - mr.cleanedChars)) / mr.originalChars, unit: '%' });
}

// Run directly: `tsx bench/guard.bench.ts`.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  void run((row) => console.log(`${row.name.padEnd(72)} ${row.value.toFixed(2).padStart(10)} ${row.unit}${row.target ? `  (target ${row.target})` : ''}`));
}
