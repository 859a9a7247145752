/**
 * `dedup loop` and `dedup check`, run as a user would: the built CLI in a child process.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = join(__dirname, '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'dedup-cli-'));

function run(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const prose =
  'The committee met on Tuesday to review the budget. Two proposals were discussed: a new library wing and ' +
  'repairs to the community pool. After a long debate, members voted to fund the repairs first and revisit ' +
  'the library in spring, when the grant decision is known.\n';
const looping = `${prose}${'I need to verify the output again.\n'.repeat(20)}`;

describe('dedup loop', () => {
  it('exits 2 on a loop and names the rule and where it began', () => {
    const r = run(['loop', file('loop.txt', looping)]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^loop: (tight-period-loop|unit-loop) at (1:26\d|2:\d+) — /);
    expect(r.stdout).toContain('sample:');
  });

  it('exits 0 on clean text', () => {
    const r = run(['loop', file('clean.txt', prose)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^clean/);
  });

  it('reads stdin with - and prints JSON with --json', () => {
    const r = run(['loop', '-', '--json'], looping);
    expect(r.code).toBe(2);
    const j = JSON.parse(r.stdout) as { loop: boolean; chars: number; hit: { rule: string; start: number } };
    expect(j.loop).toBe(true);
    expect(j.chars).toBe(looping.length);
    expect(looping.slice(j.hit.start)).toMatch(/verify the output again/);
  });

  it('judges reasoning text on its own channel with --reasoning', () => {
    const r = run(['loop', '--reasoning', '--json', file('r.txt', looping)]);
    expect(r.code).toBe(2);
    expect((JSON.parse(r.stdout) as { hit: { channel: string } }).hit.channel).toBe('reasoning');
  });

  it('passes its self-test', () => {
    const r = run(['loop', '--self-test']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('self-test passed');
  });

  it('exits 1 with a one-line reason on usage errors', () => {
    for (const args of [['loop', '--bogus'], ['loop', join(dir, 'missing.txt')], ['loop', 'a', 'b'], ['nope']]) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

describe('dedup check', () => {
  it('prints every repeated section with line:column', () => {
    const text = `${prose}Status: all checks passed on the staging cluster tonight.\n${prose}`;
    const r = run(['check', file('check.txt', text)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+ repeated section\(s\), ratio 0\.\d{3}/);
    expect(r.stdout).toMatch(/ 3:1 repeats 1:1 \[ngram, 1\.00\]/);
  });

  it('prints the result as JSON with --json and accepts a preset', () => {
    const r = run(['check', '--preset', 'sensitive', '--json', file('check2.txt', looping)]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { repeated: boolean; sections: Array<{ repeatStart: number; repeatEnd: number }> };
    expect(j.repeated).toBe(true);
    for (const s of j.sections) expect(s.repeatEnd).toBeLessThanOrEqual(looping.length);
  });

  it('rejects an unknown preset with the rule', () => {
    const r = run(['check', '--preset', 'strict', file('c3.txt', prose)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/preset.*one of default, relaxed, sensitive/);
  });
});
