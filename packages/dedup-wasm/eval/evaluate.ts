/**
 * The corpus evaluation: stream every file of a corpus folder through `createStreamingDedup()` with
 * default settings, in fixed-size deltas, and record the first steer and the first abort.
 * Used by `pnpm eval` (which prints it) and by the corpus test (which enforces the floors).
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createStreamingDedup, type LoopEvidence, type StreamAction } from '../dist/index.js';

export { locateCorpus } from './corpus.js';

/** The first action of each kind for one file. */
export interface FileOutcome {
  file: string;
  chars: number;
  /** First action other than none: 'abort' if it ever aborted, else 'steer' or 'none'. */
  verdict: StreamAction;
  /** Fraction of the file streamed when it first aborted (or null). */
  abortAt: number | null;
  /** Fraction of the file streamed when it first steered (or null). */
  steerAt: number | null;
  evidence: LoopEvidence | null;
}

/** Outcomes of one folder at one chunk size. */
export interface FolderOutcome {
  folder: string;
  chunk: number;
  files: FileOutcome[];
  aborted: number;
  steeredOnly: number;
  /** Median abort position over the aborted files, as a fraction of their length. */
  medianAbortAt: number | null;
}


function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Streams one text in `chunk`-char deltas (UTF-16 units, as a JS stream would deliver them). */
export function streamText(text: string, chunk: number): Omit<FileOutcome, 'file'> {
  const monitor = createStreamingDedup();
  let steerAt: number | null = null;
  let abortAt: number | null = null;
  let evidence: LoopEvidence | null = null;
  try {
    for (let i = 0; i < text.length; i += chunk) {
      const end = Math.min(text.length, i + chunk);
      const check = monitor.feedChunk(text.slice(i, end));
      if (check.action === 'steer' && steerAt === null) {
        steerAt = end / text.length;
        evidence ??= check.evidence;
      }
      if (check.action === 'abort') {
        abortAt = end / text.length;
        evidence = check.evidence;
        break;
      }
    }
  } finally {
    monitor.dispose();
  }
  return { chars: text.length, verdict: abortAt !== null ? 'abort' : steerAt !== null ? 'steer' : 'none', abortAt, steerAt, evidence };
}

/** Streams every file of `folder` at one chunk size. */
export function evaluateFolder(folder: string, chunk: number): FolderOutcome {
  const names = readdirSync(folder).filter((n) => n.endsWith('.txt')).sort();
  const files = names.map((file) => ({ file, ...streamText(readFileSync(join(folder, file), 'utf8'), chunk) }));
  const aborted = files.filter((f) => f.abortAt !== null);
  return {
    folder,
    chunk,
    files,
    aborted: aborted.length,
    steeredOnly: files.filter((f) => f.verdict === 'steer').length,
    medianAbortAt: median(aborted.map((f) => f.abortAt!)),
  };
}
