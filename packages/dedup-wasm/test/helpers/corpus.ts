/**
 * Corpus tests that say plainly when the corpus is absent: under CI that is a failure, elsewhere a
 * todo with a printed reason — never a silent pass.
 */
import { it } from 'vitest';
import { locateCorpus } from '../../eval/corpus.js';

/** Calls `body(corpusDir)` to declare the tests, or declares why they cannot run. */
export function withCorpus(label: string, body: (corpus: string) => void): void {
  const corpus = locateCorpus();
  if (corpus) {
    body(corpus);
    return;
  }
  const reason = 'shared corpus not found (set DEDUP_CORPUS or place it at ../shared/corpus beside the repo)';
  if (process.env.CI) {
    it(`${label}: finds the shared corpus`, () => {
      throw new Error(reason);
    });
  } else {
    console.warn(`${label}: ${reason}; these checks were NOT run`);
    it.todo(`${label}: ${reason}`);
  }
}
