/**
 * The acceptance floors of the loop detector on the shared corpus (real model loops and real,
 * legitimately repetitive text), with default settings, at every chunk size the eval uses.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { initDedupWasm } from '../dist/index.js';
import { evaluateFolder } from '../eval/evaluate.js';
import { withCorpus } from './helpers/corpus.js';

beforeAll(async () => {
  await initDedupWasm();
});

withCorpus('corpus-loops', (corpus) => {
  describe.each([4, 17, 64])('corpus at %i-char deltas', (chunk) => {
    it('aborts at least 26 of the 27 loops, early (median <= 35% of the text)', () => {
      const loops = evaluateFolder(join(corpus, 'loops'), chunk);
      const missed = loops.files.filter((f) => f.verdict !== 'abort').map((f) => f.file);
      expect(loops.files.length).toBeGreaterThanOrEqual(27);
      expect(missed.length, `loops not aborted: ${missed.join(', ')}`).toBeLessThanOrEqual(1);
      expect(loops.medianAbortAt).not.toBeNull();
      expect(loops.medianAbortAt!).toBeLessThanOrEqual(0.35);
    });

    it('aborts none of the legitimately repetitive texts', () => {
      const normal = evaluateFolder(join(corpus, 'normal'), chunk);
      expect(normal.files.length).toBeGreaterThanOrEqual(28);
      const aborted = normal.files.filter((f) => f.verdict === 'abort').map((f) => `${f.file} (${f.evidence?.rule})`);
      expect(aborted).toEqual([]);
    });
  });
});
