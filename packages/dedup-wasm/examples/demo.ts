/**
 * The README's first command. Streams a real degenerate model output through the monitor and prints
 * the none → steer → abort timeline, then checks a whole text in batch and prints its repeated
 * sections. Uses the shared corpus when it is there, a built-in sample otherwise.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkRepetition, createStreamingDedup, initDedupWasm, type StreamAction } from '../dist/index.js';
import { locateCorpus } from '../eval/evaluate.js';

await initDedupWasm();
const corpus = locateCorpus(process.argv[2]);

const BUILT_IN =
  'To fix the failing build, first clear the cache, then rerun the tests with the verbose flag. ' +
  'If the tests still fail, check the lockfile. '.repeat(2) +
  'I will check the lockfile again. '.repeat(12);

function load(folder: string, file: string): { name: string; text: string } {
  if (!corpus) return { name: 'built-in sample', text: BUILT_IN };
  return { name: `${folder}/${file}`, text: readFileSync(join(corpus, folder, file), 'utf8') };
}

const oneLine = (s: string, n = 70) => JSON.stringify(s.replace(/\s+/g, ' ').slice(0, n));

// 1. Streaming: a model that restarts its answer (Gemini CLI issue 4807) and one stuck on a phrase.
for (const [folder, file] of [
  ['loops', 'en_bio_question_loop_carol_chell.txt'],
  ['loops', 'zh_chat_question_loop_sunxiaochuan_295.txt'],
] as const) {
  const { name, text } = load(folder, file);
  console.log(`\n▶ streaming ${name} (${text.length} chars) in 17-char deltas`);
  using monitor = createStreamingDedup();
  let last: StreamAction = 'none';
  console.log(`  ${'0'.padStart(6)}  none`);
  for (let i = 0; i < text.length; i += 17) {
    const check = monitor.feedChunk(text.slice(i, i + 17));
    if (check.action === last) continue;
    last = check.action;
    const at = Math.min(text.length, i + 17);
    const e = check.evidence;
    console.log(`  ${String(at).padStart(6)}  ${check.action}  ${e ? `${e.rule}: ${e.detail}` : ''}`);
    if (check.action === 'abort') {
      console.log(`          loop began at char ${e?.start}: ${oneLine(text.slice(e?.start ?? 0))}`);
      console.log(`          stopping here saves ${text.length - at} of ${text.length} chars (${(((text.length - at) / text.length) * 100).toFixed(0)}%)`);
      break;
    }
  }
  if (last === 'none') console.log(corpus ? '  (no loop)' : '  (built-in sample)');
  if (!corpus) break;
}

// 2. Batch: every repeated section of a multi-agent transcript excerpt.
const { name, text } = corpus ? load('transcripts', 'en_multiagent_chatdev_codereview_loop_spritemaker.txt') : { name: 'built-in sample', text: BUILT_IN };
const result = checkRepetition(text);
console.log(`\n▶ checkRepetition on ${name}: ${result.sections.length} repeated sections, ratio ${result.ratio.toFixed(2)}`);
for (const s of result.sections.slice(0, 8)) {
  console.log(`  [${s.source.padEnd(8)}] ${String(s.repeatStart).padStart(6)}..${String(s.repeatEnd).padEnd(6)} repeats ${s.originalStart}..${s.originalEnd} (similarity ${s.similarity.toFixed(2)}) ${oneLine(text.slice(s.repeatStart, s.repeatEnd), 50)}`);
}
if (result.sections.length > 8) console.log(`  … and ${result.sections.length - 8} more`);
if (!corpus) console.log('\n(the shared corpus was not found; pass its folder as an argument to run on real text)');
