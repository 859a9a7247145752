/**
 * Adapter overhead: what `monitorStream` costs on top of the raw streaming monitor, and how fast
 * the tool-call monitor records calls. Numbers are printed, never asserted.
 */
import { createStreamingDedup, createToolCallMonitor, initDedupWasm, monitorStream } from '../dist/index.js';

type Report = (row: { name: string; value: number; unit: string; target?: string }) => void;

function prose(chars: number): string {
  const words = ['stream', 'window', 'chunk', 'bounded', 'memory', 'latency', 'token', 'model', 'output', 'rule', 'period', 'core'];
  let s = '';
  let i = 0;
  while (s.length < chars) {
    // A deterministic, non-repeating word walk: varied enough never to look like a loop.
    const n = 5 + ((i * 7) % 9);
    const sentence: string[] = [];
    for (let k = 0; k < n; k++) sentence.push(`${words[(i * 31 + k * 17 + (i >> 3)) % words.length]}${(i * 13 + k) % 97}`);
    s += sentence.join(' ') + '. ';
    i++;
  }
  return s.slice(0, chars);
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function chunksOf(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export async function run(report: Report): Promise<void> {
  await initDedupWasm();
  const text = prose(200_000);
  const chunks = chunksOf(text, 16);
  // Warm-up, so neither measurement pays for JIT compilation.
  const warm = createStreamingDedup();
  for (const c of chunks.slice(0, 2000)) warm.feedChunk(c);
  warm.dispose();
  for await (const _ of monitorStream((async function* () { yield* chunks.slice(0, 2000); })(), { onAbort: () => {} }));

  // The two are timed in alternation, five rounds each, and compared by their medians: one run of
  // each, back to back, showed more of the machine's drift than of the adapter.
  const rawRuns: number[] = [];
  const iterRuns: number[] = [];
  let n = 0;
  for (let round = 0; round < 5; round++) {
    let t0 = performance.now();
    const raw = createStreamingDedup();
    for (const c of chunks) raw.feedChunk(c);
    raw.dispose();
    rawRuns.push(performance.now() - t0);

    t0 = performance.now();
    n = 0;
    for await (const c of monitorStream((async function* () { yield* chunks; })(), { onAbort: () => {} })) n += c.length;
    iterRuns.push(performance.now() - t0);
  }
  const rawMs = median(rawRuns);
  const iterMs = median(iterRuns);
  report({ name: 'adapters: raw feedChunk, 200k chars of prose in 16-char chunks', value: text.length / 1e6 / (rawMs / 1000), unit: 'M chars/s' });
  report({ name: 'adapters: monitorStream(async iterable), same stream', value: n / 1e6 / (iterMs / 1000), unit: 'M chars/s' });
  report({ name: 'adapters: monitorStream overhead per chunk (difference of medians)', value: ((iterMs - rawMs) * 1000) / chunks.length, unit: 'µs/chunk' });

  let t = performance.now();
  let i = 0;
  const source = new ReadableStream<string>({ pull(ctl) { if (i < chunks.length) ctl.enqueue(chunks[i++]!); else ctl.close(); } }, { highWaterMark: 0 });
  const reader = monitorStream(source, { onAbort: () => {} }).getReader();
  for (;;) if ((await reader.read()).done) break;
  const rsMs = performance.now() - t;
  report({ name: 'adapters: monitorStream(ReadableStream), same stream', value: text.length / 1e6 / (rsMs / 1000), unit: 'M chars/s' });

  const tools = createToolCallMonitor();
  const calls = 20_000;
  t = performance.now();
  for (let k = 0; k < calls; k++) {
    tools.record({ name: `tool${k % 7}`, args: { path: `src/file${k}.ts`, options: { recursive: k % 2 === 0, depth: k % 5 }, at: '2025-01-01T00:00:00Z' } });
  }
  const toolMs = performance.now() - t;
  tools.dispose();
  report({ name: 'adapters: toolCallMonitor.record (args with 4 fields)', value: (toolMs * 1000) / calls, unit: 'µs/call' });
}
