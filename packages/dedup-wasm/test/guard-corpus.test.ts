/**
 * The input guard on the real multi-agent transcripts of the shared corpus: what it removes, and
 * proof that no distinct block (and no word) was lost.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { deduplicate, initDedupWasm, splitBlocks, tokenize } from '../dist/index.js';
import { norm } from './guard-helpers.js';
import { withCorpus } from './helpers/corpus.js';

beforeAll(async () => {
  await initDedupWasm();
});

function isSubsequence(needle: string[], hay: string[]): boolean {
  let i = 0;
  for (const h of hay) if (i < needle.length && needle[i] === h) i++;
  return i === needle.length;
}

withCorpus('guard-corpus', (corpus) => {
  const dir = join(corpus, 'transcripts');
  const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();

  describe('deduplicate on the corpus transcripts', () => {
    it('finds the transcripts', () => {
      expect(files.length).toBeGreaterThanOrEqual(4);
    });

    it('removes repeats and loses no distinct block or word (default and exact-only)', () => {
      const rows: string[] = [];
      let totalBefore = 0;
      let totalAfter = 0;
      for (const f of files) {
        const text = readFileSync(join(dir, f), 'utf8');
        for (const nearDuplicate of [true, false]) {
          const r = deduplicate(text, { nearDuplicate });
          const out = norm(r.text);
          const removedAt = new Map(r.removedBlocks.map((b) => [b.start, b]));
          // Every distinct block is still there: verbatim (normalized), or, for a near-duplicate,
          // every word of it occurs in order in the block that stayed.
          for (const b of splitBlocks(text).blocks) {
            const block = text.slice(b.start, b.end);
            if (out.includes(norm(block))) continue;
            const rb = removedAt.get(b.start);
            expect(rb, `${f}: block at ${b.start} vanished without being reported`).toBeDefined();
            expect(nearDuplicate, `${f}: exact-only mode lost ${JSON.stringify(block.slice(0, 80))}`).toBe(true);
            const original = text.slice(rb!.duplicateOf.start, rb!.duplicateOf.end);
            expect(out.includes(norm(original))).toBe(true);
            expect(isSubsequence(tokenize(block), tokenize(original)), `${f}: ${JSON.stringify(block.slice(0, 80))}`).toBe(true);
          }
          const words = new Set(tokenize(r.text));
          for (const w of new Set(tokenize(text))) expect(words.has(w), `${f}: lost word ${w}`).toBe(true);
          expect(deduplicate(r.text, { nearDuplicate }).removed).toBe(0);
          if (nearDuplicate) {
            expect(r.removed, `${f} has repeated blocks`).toBeGreaterThan(0);
            totalBefore += r.originalChars;
            totalAfter += r.cleanedChars;
            const pct = ((1 - r.cleanedChars / r.originalChars) * 100).toFixed(1);
            rows.push(`${f.padEnd(66)} ${String(r.originalChars).padStart(7)} ${String(r.cleanedChars).padStart(7)} ${`-${pct}%`.padStart(7)} ${String(r.removed).padStart(5)}`);
          }
        }
      }
      const pct = ((1 - totalAfter / totalBefore) * 100).toFixed(1);
      console.log(
        [
          `${'file'.padEnd(66)} ${'before'.padStart(7)} ${'after'.padStart(7)} ${'saved'.padStart(7)} ${'blocks'.padStart(5)}`,
          ...rows,
          `${'total'.padEnd(66)} ${String(totalBefore).padStart(7)} ${String(totalAfter).padStart(7)} ${`-${pct}%`.padStart(7)}`,
        ].join('\n'),
      );
    });
  });
});
