/**
 * `pnpm eval [--corpus DIR] [--chunk N]`: the loop detector on real text. Streams every loop, normal
 * text and transcript of the corpus through `createStreamingDedup()` (default settings) in 4-, 17-
 * and 64-char deltas (or just N), prints each file's first action and where it happened, then the
 * summary the acceptance targets are stated in.
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { initDedupWasm } from '../dist/index.js';
import { evaluateFolder, locateCorpus, type FolderOutcome } from './evaluate.js';

const { values } = parseArgs({ options: { corpus: { type: 'string' }, chunk: { type: 'string' } } });
const corpus = locateCorpus(values.corpus);
if (!corpus) {
  console.error('eval: corpus not found (looked at --corpus, $DEDUP_CORPUS and ../shared/corpus beside the repo)');
  process.exit(1);
}
const chunks = values.chunk ? [Number(values.chunk)] : [4, 17, 64];
if (chunks.some((c) => !Number.isInteger(c) || c < 1)) {
  console.error('eval: --chunk must be a positive integer');
  process.exit(1);
}
await initDedupWasm();

const pct = (x: number | null) => (x === null ? '   -  ' : `${(x * 100).toFixed(1).padStart(5)}%`);

function printFolder(o: FolderOutcome): void {
  console.log(`\n## ${o.folder.split('/').slice(-1)[0]} — ${o.chunk}-char deltas`);
  for (const f of o.files) {
    const what = f.verdict === 'abort' ? 'ABORT' : f.verdict === 'steer' ? 'steer' : 'none ';
    const at = f.verdict === 'abort' ? pct(f.abortAt) : f.verdict === 'steer' ? pct(f.steerAt) : '      ';
    const why = f.evidence ? `${f.evidence.rule}: ${f.evidence.detail}` : '';
    console.log(`${what} ${at}  ${f.file.padEnd(72)} ${why.slice(0, 110)}`);
  }
}

const summary: string[] = [];
for (const chunk of chunks) {
  const loops = evaluateFolder(join(corpus, 'loops'), chunk);
  const normal = evaluateFolder(join(corpus, 'normal'), chunk);
  const transcripts = evaluateFolder(join(corpus, 'transcripts'), chunk);
  [loops, normal, transcripts].forEach(printFolder);
  summary.push(
    `${String(chunk).padStart(3)}-char deltas: loops aborted ${loops.aborted}/${loops.files.length}` +
      ` (median abort at ${pct(loops.medianAbortAt).trim()} of the text)` +
      ` | normal aborted ${normal.aborted}/${normal.files.length}, steered ${normal.steeredOnly}/${normal.files.length}` +
      ` | transcripts aborted ${transcripts.aborted}/${transcripts.files.length}, steered ${transcripts.steeredOnly}/${transcripts.files.length}`,
  );
  const missed = loops.files.filter((f) => f.verdict !== 'abort').map((f) => f.file);
  if (missed.length) summary.push(`      loops not aborted: ${missed.join(', ')}`);
  const falsePositives = normal.files.filter((f) => f.verdict === 'abort').map((f) => f.file);
  if (falsePositives.length) summary.push(`      normal texts aborted: ${falsePositives.join(', ')}`);
}
console.log(`\n## Summary (targets: >= 26/27 loops aborted, 0/28 normal aborted, median abort <= 35%)\n${summary.join('\n')}`);
