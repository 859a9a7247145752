/**
 * Properties of `deduplicate` on generated texts (fast-check): it only removes whole blocks with
 * their separators, never loses a word, keeps every distinct block, and is idempotent.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { deduplicate, initDedupWasm, splitBlocks, tokenize, type DeduplicateOptions } from '../dist/index.js';
import { breakCores, nonWs, norm } from './guard-helpers.js';

beforeAll(async () => {
  await initDedupWasm();
});

const LINES = [
  'Build step 4 of the nightly pipeline: tests PASSED',
  'Build step 4 of the nightly pipeline: tests FAILED',
  'build step 4 of the nightly pipeline:  Tests passed!',
  'Q3 revenue was $4.2M according to finance',
  'Q3 revenue was $4.7M according to finance',
  '[Turn 1] User: summarise the report please',
  '[Turn 2] Assistant: the report says revenue grew',
  '    return None',
  '```',
  '```python',
  '根据新用户的任务和我们的软件设计编写代码',
  '根据新用户的任务和我们的软件设计编写代码，共3个文件',
  '😀 emoji line with a 👍🏽 modifier',
  'ΣΊΣΥΦΟΣ και ο βράχος',
  'x',
  '',
  '   ',
  '\uD800 lone high surrogate',
  'lone low \uDC00 surrogate',
];

const SEPS = ['\n', '\n\n', '\r\n', '\n \n', '\n\n\n', ' '];

/**
 * Texts built from a few lines of a small pool (plus random ones), mostly with one kind of
 * separator, so repeats, near-repeats and collapses are frequent.
 */
const structured = fc
  .tuple(
    fc.subarray([...LINES], { minLength: 1, maxLength: 5 }),
    fc.array(fc.string({ maxLength: 12 }), { maxLength: 2 }),
    fc.constantFrom(...SEPS),
  )
  .chain(([pool, random, sep]) => {
    const all = [...pool, ...random];
    return fc
      .array(fc.tuple(fc.nat(all.length - 1), fc.oneof({ weight: 4, arbitrary: fc.constant(sep) }, { weight: 1, arbitrary: fc.constantFrom(...SEPS) })), {
        minLength: 1,
        maxLength: 16,
      })
      .map((parts) => parts.map(([i, s]) => all[i]! + s).join(''));
  });

const options: fc.Arbitrary<DeduplicateOptions> = fc.record({
  minBlockChars: fc.constantFrom(0, 5, 40),
  similarityChars: fc.constantFrom(1, 10, 60),
  keep: fc.constantFrom('first' as const, 'last' as const),
  nearDuplicate: fc.constantFrom(true, false, 0.5, 1),
});

function tokens(s: string): Set<string> {
  return new Set(tokenize(s));
}

/** Checks every property of one run; throws with a message on failure. */
const stats = { runs: 0, removing: 0, near: 0, refined: 0 };

function checkAll(text: string, opts: DeduplicateOptions): void {
  const r = deduplicate(text, opts);
  stats.runs++;
  if (r.removed > 0) stats.removing++;
  if (r.removedBlocks.some((b) => norm(text.slice(b.start, b.end)) !== norm(text.slice(b.duplicateOf.start, b.duplicateOf.end)))) stats.near++;
  // Byte-identical when nothing was removed.
  if (r.removed === 0) expect(r.text).toBe(text);
  expect(r.removedBlocks).toHaveLength(r.removed);
  expect(r.cleanedChars).toBe(r.text.length);
  expect(r.originalChars).toBe(text.length);

  // Only whole removed blocks and whitespace separators go.
  const sorted = [...r.removedBlocks].sort((a, b) => a.start - b.start);
  let rest = '';
  let at = 0;
  for (const b of sorted) {
    expect(b.start).toBeGreaterThanOrEqual(at);
    rest += text.slice(at, b.start);
    at = b.end;
  }
  rest += text.slice(at);
  expect(nonWs(r.text)).toBe(nonWs(rest));

  // Separators preserved: every line-break run of the output is one of the input's.
  const inputBreaks = new Set(breakCores(text));
  for (const core of breakCores(r.text)) expect(inputBreaks.has(core), JSON.stringify(core)).toBe(true);

  // No word or number is lost.
  const before = tokens(text);
  const after = tokens(r.text);
  for (const t of before) expect(after.has(t), t).toBe(true);

  // Removed blocks repeat a block that is still in the output (normalized).
  const out = norm(r.text);
  for (const b of r.removedBlocks) {
    const removed = text.slice(b.start, b.end);
    const original = text.slice(b.duplicateOf.start, b.duplicateOf.end);
    if (opts.nearDuplicate === false) expect(norm(removed)).toBe(norm(original));
    for (const t of tokens(removed)) expect(tokens(original).has(t)).toBe(true);
  }

  // Every distinct normalized line of the input is still present (exact mode).
  if (opts.nearDuplicate === false) {
    for (const line of text.split(/\r\n|\n|\r/)) expect(out.includes(norm(line)), line).toBe(true);
  }

  // Output blocks are a subsequence of input blocks.
  const inSplit = splitBlocks(text);
  const outSplit = splitBlocks(r.text);
  const inBlocks = inSplit.blocks.map((b) => text.slice(b.start, b.end));
  const outBlocks = outSplit.blocks.map((b) => r.text.slice(b.start, b.end));
  if (inSplit.mode !== outSplit.mode && r.removed > 0) stats.refined++;
  if (inSplit.mode === outSplit.mode) {
    let i = 0;
    for (const ob of outBlocks) {
      while (i < inBlocks.length && inBlocks[i] !== ob) i++;
      expect(i < inBlocks.length, `block ${JSON.stringify(ob)} is not an input block in order`).toBe(true);
      i++;
    }
  } else {
    // The text collapsed to one block (split further, or not at all): the content of each of its
    // blocks is still input text, in order.
    let pos = 0;
    for (const ob of outBlocks.map((b) => b.trim()).filter((b) => b.length > 0)) {
      const found = text.indexOf(ob, pos);
      expect(found, JSON.stringify(ob)).toBeGreaterThanOrEqual(0);
      pos = found + ob.length;
    }
  }

  // Idempotent.
  const again = deduplicate(r.text, opts);
  expect(again.removed).toBe(0);
  expect(again.text).toBe(r.text);
}

describe('deduplicate properties', () => {
  it('only removes repeated blocks, keeps words, separators and order, and is idempotent', () => {
    fc.assert(
      fc.property(structured, options, (text, opts) => {
        checkAll(text, opts);
      }),
      { numRuns: 400 },
    );
    // The generator is not vacuous: removals, near-duplicate removals and re-splits all happen.
    expect(stats.removing).toBeGreaterThan(stats.runs / 5);
    expect(stats.near).toBeGreaterThan(0);
    expect(stats.refined).toBeGreaterThan(0);
  });

  it('holds with the default options too', () => {
    fc.assert(
      fc.property(structured, (text) => {
        checkAll(text, {});
      }),
      { numRuns: 200 },
    );
  });

  it('never throws on any string, lone surrogates included, and keeps its length bookkeeping', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'binary-ascii', maxLength: 50 }), (a, b) => {
        const text = `${a}\n${b}\n${a}\n\n${a}`;
        const r = deduplicate(text, { minBlockChars: 0 });
        expect(typeof r.text).toBe('string');
        expect(r.cleanedChars).toBe(r.text.length);
        for (const blk of r.removedBlocks) expect(norm(text.slice(blk.start, blk.end)).length).toBeGreaterThan(0);
        expect(deduplicate(r.text, { minBlockChars: 0 }).removed).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('does not merge blocks that differ only in which lone surrogate they hold', () => {
    const a = 'the same words around a lone surrogate \uD800 here';
    const b = 'the same words around a lone surrogate \uD801 here';
    expect(deduplicate(`${a}\n${b}`, { nearDuplicate: false }).removed).toBe(0);
    expect(deduplicate(`${a}\n${a}`).text).toBe(a);
  });
});
