/**
 * The core over wasm: batch checks of 10 KB, 100 KB and 1 MB (and of 10 KB, a different text each
 * time); streaming throughput over 1 MB in 4- and 64-char chunks; per-chunk cost early (10 KB in)
 * and late (1 MB in); wasm size; init time.
 * Text: the corpus (`../shared/corpus` from the repository root, or `DEDUP_CORPUS`) interleaved with
 * synthetic prose; synthetic prose alone when the corpus is absent. Medians of several runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkRepetition, createStreamingDedup, initDedupWasm } from '../dist/index.js';
import type { BenchRow } from './run.js';
import { locateCorpus } from '../eval/corpus.js';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const wasmPath = join(pkgDir, 'wasm', 'dedup_wasm.wasm');
const memoryWasmPath = join(pkgDir, 'wasm', 'dedup_memory.wasm');

const corpusDir = (): string | null => locateCorpus();

/** A deterministic generator (xorshift32). */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

const NOUNS = ['server', 'cache', 'request', 'model', 'user', 'table', 'report', 'engine', 'river', 'garden', 'window', 'letter', 'market', 'teacher', 'village', 'signal', 'theory', 'budget', 'harbor', 'console', 'library', 'kernel', 'pipeline', 'forest', 'museum', 'protocol', 'summary', 'contract', 'station', 'journey'];
const VERBS = ['reads', 'writes', 'checks', 'moves', 'builds', 'measures', 'explains', 'ignores', 'follows', 'repairs', 'expects', 'describes', 'replaces', 'collects', 'shows', 'keeps', 'opens', 'compares', 'predicts', 'records'];
const ADJS = ['quiet', 'large', 'recent', 'broken', 'careful', 'strange', 'bright', 'narrow', 'useful', 'ancient', 'simple', 'hidden', 'steady', 'urgent', 'gentle', 'remote'];
const DETS = ['the', 'a', 'every', 'one', 'that', 'this', 'each', 'another'];

/** Synthetic prose of about `chars` chars: varied sentences in paragraphs. */
export function syntheticProse(seed: number, chars: number): string {
  const r = rng(seed);
  const pick = (a: string[]): string => a[r() % a.length]!;
  const phrase = (): string => `${pick(DETS)} ${r() % 2 ? `${pick(ADJS)} ` : ''}${pick(NOUNS)}`;
  let out = '';
  while (out.length < chars) {
    const n = 3 + (r() % 4);
    for (let i = 0; i < n; i++) {
      let s = `${phrase()} ${pick(VERBS)} ${phrase()}`;
      if (r() % 3 === 0) s += ` in ${2 + (r() % 97)} minutes`;
      if (r() % 2 === 0) s += `, while ${phrase()} ${pick(VERBS)} ${phrase()}`;
      out += `${s[0]!.toUpperCase()}${s.slice(1)}. `;
    }
    out += '\n\n';
  }
  return out;
}

/**
 * Synthetic CJK text of `chars` chars: sentences of 8-30 ideographs drawn from 3,000, each ending with
 * 。. Every char is a token here, so the table of seen bigrams holds about one entry per char.
 */
function syntheticCjk(seed: number, chars: number): string {
  const r = rng(seed);
  let out = '';
  while (out.length < chars) {
    const n = 8 + (r() % 23);
    for (let i = 0; i < n; i++) out += String.fromCharCode(0x4e00 + (r() % 3000));
    out += '。';
  }
  return out.slice(0, chars);
}

/**
 * Mixed realistic text of `chars` UTF-16 units: corpus files (normal + loops) between prose. A shorter
 * text is a prefix of a longer one.
 */
function mixedText(chars: number): string {
  const dir = corpusDir();
  const files: string[] = [];
  if (dir) {
    for (const sub of ['normal', 'loops']) {
      const d = join(dir, sub);
      if (!existsSync(d)) continue;
      for (const f of readdirSync(d).sort()) files.push(readFileSync(join(d, f), 'utf8'));
    }
  }
  let out = '';
  for (let i = 0; out.length < chars; i++) {
    out += syntheticProse(i + 1, 4096);
    if (files.length) out += `${files[i % files.length]}\n\n`;
  }
  return out.slice(0, chars);
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Median of `runs` timed calls of `f`, after untimed calls for at least `warmMs`. The engine swaps in
 * optimized code for a function only at its next call, compiling it in the background, so the first
 * calls after a single long one can still run baseline code; warming by time rather than by a call
 * count lets that finish whatever the size of the input.
 */
function timeMs(runs: number, f: () => void, warmMs = 250): number {
  const warmUntil = performance.now() + warmMs;
  do f();
  while (performance.now() < warmUntil);
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    t.push(performance.now() - t0);
  }
  return median(t);
}

function chunks(text: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += n) out.push(text.slice(i, i + n));
  return out;
}

/** Runs the core benchmark. */
export async function run(report: (row: BenchRow) => void): Promise<void> {
  if (!corpusDir()) console.log('(corpus not found: synthetic prose only; set DEDUP_CORPUS)');
  await initDedupWasm();
  // Streams run without the hard cap, so the whole megabyte goes through every pass.
  const uncapped = { loop: { maxChars: 0 } };
  // Steady state, as in a long-running host: the engine first runs wasm from its baseline compiler and
  // swaps in optimized code once a function is hot, which takes a megabyte or so of text (and each
  // case below warms up on its own input before it is timed).
  const mb = mixedText(1_000_000);
  checkRepetition(mb);

  for (const [label, size, target] of [['10 KB', 10_000, '<= 0.5 ms'], ['100 KB', 100_000, ''], ['1 MB', 1_000_000, '<= 50 ms']] as const) {
    const text = mb.slice(0, size);
    const ms = timeMs(size >= 1_000_000 ? 9 : size >= 100_000 ? 41 : 101, () => checkRepetition(text));
    report({ name: `wasm batch check ${label}`, value: ms, unit: 'ms', target });
  }

  // The rows above check one text again and again, and a CPU's branch predictor learns a text it has
  // seen; a host checks texts it has not. Here each check is of another 10 KB of the megabyte.
  const slices = chunks(mb, 10_000);
  const checkEach = (): number[] =>
    slices.map((s) => {
      const t0 = performance.now();
      checkRepetition(s);
      return performance.now() - t0;
    });
  checkEach();
  report({ name: 'wasm batch check 10 KB, a new text each', value: median(checkEach()), unit: 'ms', target: '' });

  const cjk = syntheticCjk(7, 1_000_000);
  report({ name: 'wasm batch check 1 MB of CJK text', value: timeMs(5, () => checkRepetition(cjk)), unit: 'ms', target: '' });

  for (const [n, target] of [[64, '>= 20'], [4, '>= 5']] as const) {
    const pieces = chunks(mb, n);
    const ms = timeMs(5, () => {
      using m = createStreamingDedup(uncapped);
      for (const p of pieces) m.feedChunk(p);
    });
    report({ name: `wasm stream ${n}-char chunks`, value: mb.length / (ms / 1e3) / 1e6, unit: 'M chars/s', target });
  }

  // Per-chunk cost 10 KB into a stream and ~1 MB into it: 2000 chunks of 64 chars each. Prose only:
  // a latched loop verdict (the corpus has loops) makes later chunks cheaper and the ratio meaningless.
  const pieces = chunks(syntheticProse(99, 1_000_000), 64);
  const perChunk = (skipChars: number): number => {
    const samples: number[] = [];
    for (let r = 0; r < 5; r++) {
      using m = createStreamingDedup(uncapped);
      const skip = Math.floor(skipChars / 64);
      for (let i = 0; i < skip; i++) m.feedChunk(pieces[i]!);
      const t0 = performance.now();
      for (let i = 0; i < 2000; i++) m.feedChunk(pieces[(skip + i) % pieces.length]!);
      samples.push(((performance.now() - t0) * 1000) / 2000);
    }
    return median(samples);
  };
  const early = perChunk(10_000);
  const late = perChunk(pieces.length * 64 - 2000 * 64);
  report({ name: 'wasm per-chunk cost early (10 KB in)', value: early, unit: 'us', target: '' });
  report({ name: 'wasm per-chunk cost late (~1 MB in)', value: late, unit: 'us', target: '' });
  report({ name: 'wasm late / early', value: late / early, unit: 'x', target: '<= 2' });

  report({ name: 'wasm size (detection module)', value: statSync(wasmPath).size / 1024, unit: 'KB', target: '<= 300 KB' });
  report({ name: 'wasm size (memory-dedup module, loaded for memory dedup only)', value: statSync(memoryWasmPath).size / 1024, unit: 'KB', target: '' });

  // Init: a fresh process each time (read + compile + instantiate + first call), median of 5. With no
  // argument initDedupWasm loads both modules, so this is the cost of the whole package.
  const entry = new URL('../dist/index.js', import.meta.url).href;
  const initMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', `const t0 = performance.now(); const api = await import(${JSON.stringify(entry)}); const t1 = performance.now(); await api.initDedupWasm(); api.tokenize('x'); console.log(performance.now() - t1);`], { encoding: 'utf8' });
    initMs.push(Number(out.trim()));
  }
  report({ name: 'wasm init, both modules (fresh process: compile+instantiate)', value: median(initMs), unit: 'ms', target: '<= 30 ms' });
  const bytes = readFileSync(wasmPath);
  const inProcess = timeMs(9, () => {
    new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
  });
  report({ name: 'wasm compile+instantiate, detection module (warm process)', value: inProcess, unit: 'ms', target: '<= 30 ms' });
}
