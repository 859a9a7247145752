import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ContentGuard,
  DedupRangeError,
  DedupTypeError,
  DeduplicateGuard,
  GuardChain,
  deduplicate,
  initDedupWasm,
  splitBlocks,
  type GuardAction,
} from '../dist/index.js';
import { norm } from './guard-helpers.js';

beforeAll(async () => {
  await initDedupWasm();
});

describe('deduplicate: the seed examples', () => {
  it('removes a re-pasted [Turn N] history without doubling newlines', () => {
    const history = [
      '[Turn 1] User: Summarise the report.',
      '[Turn 2] Assistant: The report says…',
      '[Turn 1] User: Summarise the report.',
      '[Turn 2] Assistant: The report says…',
      '[Turn 3] Supervisor: Refine the summary.',
    ].join('\n');
    expect(splitBlocks(history).mode).toBe('turn');
    // Each turn is 36 chars: below the default minBlockChars (40, measured on the original block).
    expect(deduplicate(history).removed).toBe(0);
    const r = deduplicate(history, { minBlockChars: 20 });
    expect(r.text).toBe('[Turn 1] User: Summarise the report.\n[Turn 2] Assistant: The report says…\n[Turn 3] Supervisor: Refine the summary.');
    expect(r.removed).toBe(2);
    expect(r.text).not.toContain('\n\n');
  });

  it("reproduces the seed's deduplicate() example", () => {
    const r = deduplicate('[Turn 1] Hello\n[Turn 1] Hello\n[Turn 2] World', { similarityChars: 60, minBlockChars: 0 });
    expect(r.text).toBe('[Turn 1] Hello\n[Turn 2] World');
    expect(r.removed).toBe(1);
    expect(r.removedBlocks).toEqual([{ start: 15, end: 29, duplicateOf: { start: 0, end: 14 } }]);
  });

  it('cleans the supervisor chain: the repeated research turn goes, the new turn stays', () => {
    const history = [
      '[Turn 1] User: Summarise Q3 sales.',
      '[Turn 2] Researcher: Q3 revenue was $4.2M…',
      '[Turn 1] User: Summarise Q3 sales.',
      '[Turn 2] Researcher: Q3 revenue was $4.2M…',
    ].join('\n');
    const input = `${history}\n[Turn 3] Supervisor: Refine this summary.`;
    const r = deduplicate(input);
    // The 42-char research turn is removed; the 34-char user turn is below minBlockChars.
    expect(r.removed).toBe(1);
    expect(r.text).toBe(
      '[Turn 1] User: Summarise Q3 sales.\n[Turn 2] Researcher: Q3 revenue was $4.2M…\n[Turn 1] User: Summarise Q3 sales.\n[Turn 3] Supervisor: Refine this summary.',
    );
    const both = deduplicate(input, { minBlockChars: 30 });
    expect(both.removed).toBe(2);
    expect(both.text).toBe('[Turn 1] User: Summarise Q3 sales.\n[Turn 2] Researcher: Q3 revenue was $4.2M…\n[Turn 3] Supervisor: Refine this summary.');
    expect(both.originalChars).toBe(input.length);
    expect(both.cleanedChars).toBe(both.text.length);
  });
});

describe('deduplicate: never loses information', () => {
  const cases: Array<[string, string, string]> = [
    ['PASSED / FAILED', 'Build step 4 of the nightly release pipeline finished: tests PASSED', 'Build step 4 of the nightly release pipeline finished: tests FAILED'],
    ['$4.2M / $4.7M', 'Q3 revenue was $4.2M according to the finance team quarterly summary.', 'Q3 revenue was $4.7M according to the finance team quarterly summary.'],
    ['shipped / delivered', 'Order 1182 for the customer in Lisbon has been shipped by the main warehouse.', 'Order 1182 for the customer in Lisbon has been delivered by the main warehouse.'],
    ['-5 / 5', 'The overnight low at the weather station near the harbour will be -5 degrees.', 'The overnight low at the weather station near the harbour will be 5 degrees.'],
    ['added clause', 'The deployment to the staging cluster finished without errors at noon today.', 'The deployment to the staging cluster finished without errors at noon today, but rollback failed.'],
  ];
  it.each(cases)('%s: both blocks stay (lines, paragraphs, turns)', (_name, a, b) => {
    for (const sep of ['\n', '\n\n']) {
      const text = `${a}${sep}${b}`;
      expect(deduplicate(text).text).toBe(text);
      expect(deduplicate(text, { keep: 'last' }).text).toBe(text);
      expect(deduplicate(text, { nearDuplicate: 0.01, similarityChars: 10 }).text).toBe(text);
    }
    const turns = `[Turn 1] ${a}\n[Turn 2] ${b}`;
    expect(deduplicate(turns).removed).toBe(0);
  });

  it('removes a near-duplicate that adds nothing (punctuation, case, spacing), only when enabled', () => {
    const a = 'The deployment of version 2.3 to the staging cluster finished without errors, all checks green.';
    const b = 'the deployment of version 2.3 to the staging cluster finished without errors; ALL checks   green!';
    const text = `${a}\n\n${b}\n\nNext paragraph.`;
    const r = deduplicate(text);
    expect(r.text).toBe(`${a}\n\nNext paragraph.`);
    expect(r.removedBlocks).toEqual([{ start: a.length + 2, end: a.length + 2 + b.length, duplicateOf: { start: 0, end: a.length } }]);
    expect(deduplicate(text, { nearDuplicate: false }).text).toBe(text);
  });

  it('removes a truncated re-paste but not an extended one', () => {
    const full = 'The researcher reported that Q3 revenue was 4.2 million, driven by the new subscription tier and renewals.';
    const cut = 'The researcher reported that Q3 revenue was 4.2 million, driven by the new subscription tier';
    expect(deduplicate(`${full}\n${cut}`).text).toBe(full);
    expect(deduplicate(`${cut}\n${full}`).text).toBe(`${cut}\n${full}`);
  });

  it("keep: 'last' keeps the newest occurrence", () => {
    const status = 'Status of the nightly import job: running, owner on call, no errors.';
    const text = `${status}\nother line\n${status}\n`;
    const r = deduplicate(text, { keep: 'last' });
    expect(r.text).toBe(`other line\n${status}\n`);
    expect(r.removedBlocks[0]).toEqual({ start: 0, end: status.length, duplicateOf: { start: status.length + 12, end: 2 * status.length + 12 } });
  });

  it('is byte-identical when nothing repeats, and keeps CRLF and trailing newlines', () => {
    const text = 'alpha\r\nbeta\r\n\r\ngamma\r\n';
    const r = deduplicate(text);
    expect(r.text).toBe(text);
    expect(r.removed).toBe(0);
    const line = 'A line long enough to be a block of its own, repeated below.';
    expect(deduplicate(`${line}\r\n${line}\r\nend\r\n`).text).toBe(`${line}\r\nend\r\n`);
  });
});

describe('deduplicate: CJK and code', () => {
  it('removes repeated CJK paragraphs, keeps ones with different numbers, UTF-16 offsets with emoji', () => {
    const p = '😀 根据新用户的任务和我们的软件设计，请编写完整的代码并确保所有功能都能正常运行。';
    const q = '😀 根据新用户的任务和我们的软件设计，请编写完整的代码并确保所有功能都能正常运行，共3个文件。';
    const q2 = '😀 根据新用户的任务和我们的软件设计，请编写完整的代码并确保所有功能都能正常运行，共5个文件。';
    const text = `${p}\n\n${q}\n\n${p}\n\n${q2}`;
    const r = deduplicate(text, { minBlockChars: 20 });
    expect(r.text).toBe(`${p}\n\n${q}\n\n${q2}`);
    expect(r.removedBlocks).toHaveLength(1);
    const rb = r.removedBlocks[0]!;
    expect(text.slice(rb.start, rb.end)).toBe(p);
    expect(text.slice(rb.duplicateOf.start, rb.duplicateOf.end)).toBe(p);
  });

  it('does not remove short repeated code lines such as `return None`', () => {
    const code = [
      'def find_user(users, name):',
      '    for u in users:',
      '        if u.name == name:',
      '            return u',
      '    return None',
      'def find_order(orders, oid):',
      '    for o in orders:',
      '        if o.id == oid:',
      '            return o',
      '    return None',
    ].join('\n');
    expect(splitBlocks(code).mode).toBe('line');
    expect(deduplicate(code).text).toBe(code);
  });

  it('treats a fenced code block as one block: removed whole when re-pasted, never split inside', () => {
    const fence = '```python\ndef add(a, b):\n\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n```';
    const text = `Here is the code:\n\n${fence}\n\nReview it.\n\n${fence}\n`;
    const split = splitBlocks(text);
    expect(split.mode).toBe('paragraph');
    expect(split.blocks.map((b) => text.slice(b.start, b.end))).toContain(fence);
    const r = deduplicate(text);
    expect(r.text).toBe(`Here is the code:\n\n${fence}\n\nReview it.\n`);
  });
});

describe('deduplicate: options are checked', () => {
  it.each([
    [{ keep: 'newest' }, DedupRangeError, 'keep'],
    [{ similarityChars: 0 }, DedupRangeError, 'similarityChars'],
    [{ minBlockChars: -1 }, DedupRangeError, 'minBlockChars'],
    [{ minBlockChars: 2.5 }, DedupRangeError, 'minBlockChars'],
    [{ minBlockChars: Number.NaN }, DedupRangeError, 'minBlockChars'],
    [{ nearDuplicate: 1.5 }, DedupRangeError, 'nearDuplicate'],
    [{ nearDuplicate: 0 }, DedupRangeError, 'nearDuplicate'],
    [{ nearDuplicate: Number.NaN }, DedupRangeError, 'nearDuplicate'],
    [{ nearDuplicate: 'yes' }, DedupTypeError, 'nearDuplicate'],
    [{ similarityChars: '60' }, DedupTypeError, 'similarityChars'],
    [{ keep: 1 }, DedupTypeError, 'keep'],
    [{ minBlokChars: 3 }, DedupTypeError, 'options'],
  ])('%o throws naming the field', (options, cls, field) => {
    try {
      deduplicate('text', options as never);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(cls);
      expect((e as DedupRangeError).field).toBe(field);
    }
  });

  it('rejects a non-string text and non-object options', () => {
    expect(() => deduplicate(42 as never)).toThrow(DedupTypeError);
    expect(() => deduplicate('x', null as never)).toThrow(DedupTypeError);
    expect(() => deduplicate('x', [] as never)).toThrow(DedupTypeError);
  });
});

describe('guards', () => {
  const history = 'A long line of history that the pipeline pasted into the prompt.\n'.repeat(3);

  it('DeduplicateGuard cleans input, passes output through, logs only when verbose', () => {
    const lines: string[] = [];
    const quiet = new DeduplicateGuard({ logger: (l) => lines.push(l) });
    expect(quiet.checkInput(history)).toEqual({ allowed: true, modifiedText: 'A long line of history that the pipeline pasted into the prompt.\n' });
    expect(quiet.checkInput('nothing repeats here')).toEqual({ allowed: true });
    expect(quiet.checkOutput(history)).toEqual({ allowed: true });
    expect(lines).toEqual([]);
    const loud = new DeduplicateGuard({ verbose: true, logger: (l) => lines.push(l) });
    loud.checkInput(history);
    expect(lines).toEqual(['[DeduplicateGuard] removed 2 block(s) — 195 → 65 chars (-67%)']);
  });

  it('DeduplicateGuard never writes to stdout, and checks its options', () => {
    const spy = vi.spyOn(process.stdout, 'write');
    try {
      new DeduplicateGuard().checkInput(history);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
    expect(() => new DeduplicateGuard({ verbose: 'yes' } as never)).toThrow(DedupTypeError);
    expect(() => new DeduplicateGuard({ keep: 'middle' } as never)).toThrow(DedupRangeError);
    expect(() => new DeduplicateGuard({ colour: true } as never)).toThrow(DedupTypeError);
  });

  const noPii = (text: string): GuardAction =>
    /[\w.+-]+@[\w-]+\.[\w.-]+/.test(text) ? { allowed: false, message: 'Remove email addresses.' } : { allowed: true };

  it('GuardChain passes the cleaned text on and stops at the first refusal (sync)', () => {
    const seen: string[] = [];
    const chain = new GuardChain(
      new DeduplicateGuard(),
      new ContentGuard({
        inputFn: (t) => {
          seen.push(t);
          return noPii(t);
        },
      }),
    );
    const ok = chain.checkInput(history) as GuardAction;
    expect(ok).toEqual({ allowed: true, modifiedText: 'A long line of history that the pipeline pasted into the prompt.\n' });
    expect(seen).toEqual(['A long line of history that the pipeline pasted into the prompt.\n']);
    const after = vi.fn((): GuardAction => ({ allowed: true }));
    const refusing = new GuardChain(new ContentGuard({ inputFn: noPii }), new ContentGuard({ inputFn: after }));
    expect(refusing.checkInput('mail me at a@b.example')).toEqual({ allowed: false, message: 'Remove email addresses.' });
    expect(after).not.toHaveBeenCalled();
    expect(refusing.checkOutput('a@b.example')).toEqual({ allowed: true });
  });

  it('GuardChain awaits async guards in order', async () => {
    const order: string[] = [];
    const chain = new GuardChain(
      new ContentGuard({
        inputFn: async (t) => {
          order.push('a');
          return { allowed: true, modifiedText: `${t}!` };
        },
      }),
      new ContentGuard({
        inputFn: (t) => {
          order.push('b');
          return { allowed: true, modifiedText: t.toUpperCase() };
        },
      }),
      new ContentGuard({
        inputFn: async (t) => {
          order.push('c');
          return t.includes('STOP') ? { allowed: false, message: 'stopped' } : { allowed: true };
        },
      }),
    );
    const r = chain.checkInput('go');
    expect(r).toBeInstanceOf(Promise);
    expect(await r).toEqual({ allowed: true, modifiedText: 'GO!' });
    expect(await chain.checkInput('stop')).toEqual({ allowed: false, message: 'stopped' });
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('GuardChain and ContentGuard reject malformed guards and actions', () => {
    expect(() => new GuardChain({} as never)).toThrow(DedupTypeError);
    expect(() => new ContentGuard({ inputFn: 'no' as never })).toThrow(DedupTypeError);
    const bad = new GuardChain(new ContentGuard({ inputFn: () => ({ ok: true }) as never }));
    expect(() => bad.checkInput('x')).toThrow(/GuardAction/);
  });
});

describe('CLI: dedup guard', () => {
  const cli = resolve(__dirname, '../dist/cli.js');
  const line = 'The same long history line pasted by every agent in the chain.';
  const input = `${line}\nnew line\n${line}\n`;

  it('writes cleaned text to stdout and a summary to stderr (file and stdin)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dedup-guard-'));
    const file = join(dir, 'in.txt');
    writeFileSync(file, input);
    const a = spawnSync(process.execPath, [cli, 'guard', file], { encoding: 'utf8' });
    expect(a.status).toBe(0);
    expect(a.stdout).toBe(`${line}\nnew line\n`);
    expect(a.stderr).toMatch(/^\[DeduplicateGuard\] removed 1 block\(s\) — \d+ → \d+ chars \(-\d+%\)\n$/);
    const b = spawnSync(process.execPath, [cli, 'guard', '-', '--keep', 'last', '--json'], { input, encoding: 'utf8' });
    expect(b.status).toBe(0);
    const json = JSON.parse(b.stdout) as { text: string; removed: number };
    expect(json.text).toBe(`new line\n${line}\n`);
    expect(json.removed).toBe(1);
  });

  it('reports usage errors in one line with exit code 1', () => {
    const r = spawnSync(process.execPath, [cli, 'guard', '--keep', 'middle'], { input: 'x', encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--keep/);
  });
});

describe('splitBlocks', () => {
  it('blocks and separators alternate and cover the text', () => {
    const text = '\n\nfirst para\nline two\n\n  second\n';
    const s = splitBlocks(text);
    expect(s.mode).toBe('paragraph');
    const parts: string[] = [];
    s.blocks.forEach((b, i) => {
      parts.push(text.slice(b.start, b.end));
      const sep = s.separators[i];
      if (sep) parts.push(text.slice(sep.start, sep.end));
    });
    expect(parts.join('')).toBe(text);
    expect(s.blocks.map((b) => norm(text.slice(b.start, b.end)))).toEqual(['', 'first para line two', 'second', '']);
  });
});
