import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'dedup-memory-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[], input?: string) => spawnSync(process.execPath, [cli, 'memory', ...args], { encoding: 'utf8', input });

const lines = [
  JSON.stringify({ id: 'a', content: 'User likes green tea', metadata: { timestamp: 1 } }),
  JSON.stringify({ id: 'b', content: 'user likes GREEN tea!', metadata: { timestamp: 2 } }),
  '{"id": "broken", ',
  '',
  JSON.stringify({ id: 'c' }),
  JSON.stringify(['not', 'an', 'object']),
  JSON.stringify({ id: 'd', content: '用户住在北京' }),
  JSON.stringify({ id: 'e', content: '用户住在上海' }),
];

describe('dedup memory', () => {
  it('reports every malformed line with its number and writes the deduplicated entries', () => {
    const file = join(dir, 'in.jsonl');
    const out = join(dir, 'out.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = run([file, '--out', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('line 3: invalid JSON');
    expect(r.stderr).toContain('line 5: content must be a string');
    expect(r.stderr).toContain('line 6: not a JSON object');
    expect(r.stderr).toMatch(/4 entries, 1 exact .* 3 kept; 3 malformed/);
    const kept = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string });
    expect(kept.map((e) => e.id)).toEqual(['b', 'd', 'e']);
  });

  it('prints a JSON summary with --json and checks its flags', () => {
    const r = run(['-', '--json', '--policy', 'keep-oldest', '--threshold', '0.85', '--compact'], `${lines[0]}\n${lines[1]}\n`);
    expect(r.status).toBe(0);
    const s = JSON.parse(r.stdout) as { entries: number; exactDuplicates: number; kept: number; malformed: unknown[]; compact: unknown; result: Array<{ id: string }> };
    expect(s).toMatchObject({ entries: 2, exactDuplicates: 1, kept: 1, malformed: [] });
    expect(s.compact).toMatchObject({ evictedCount: 0 });
    expect(s.result.map((e) => e.id)).toEqual(['a']);
    expect(run(['-', '--sweep', '--compact'], '').status).toBe(1);
    expect(run(['-', '--policy', 'newest'], '').stderr).toMatch(/--policy must be one of/);
    expect(run(['-', '--threshold', 'high'], '').stderr).toMatch(/--threshold/);
  });
});
