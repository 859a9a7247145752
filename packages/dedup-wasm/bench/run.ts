/**
 * Runs every `bench/*.bench.ts` (each exports `run(report)`) and prints the rows as a table:
 * `name | value | unit | target`. Numbers are printed, never asserted.
 *
 * `pnpm bench` (from the repository root) builds everything first; `pnpm exec tsx bench/run.ts`
 * runs just this. Pass file name fragments to run only some: `tsx bench/run.ts core`.
 *
 * Each file runs in a process of its own: a bench that follows another in the same process inherits
 * its heap, its grown wasm memory and its compiled code, and measured up to a third slower for it.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';

/** One printed row. */
export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  target?: string;
}

/** What a bench file exports. */
export type BenchRun = (report: (row: BenchRow) => void) => Promise<void>;

const here = fileURLToPath(new URL('.', import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

function format(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const abs = Math.abs(v);
  if (abs >= 1000) return v.toFixed(0);
  if (abs >= 100) return v.toFixed(1);
  if (abs >= 1) return v.toFixed(2);
  return v.toFixed(4);
}

const widths = [46, 12, 10];
const line = (cells: string[]): string =>
  cells.map((c, i) => (i === 1 ? c.padStart(widths[i]!) : i < widths.length ? c.padEnd(widths[i]!) : c)).join(' | ');

/** Set in the child process that runs one file. */
const ONE_FILE = 'DEDUP_BENCH_ONE_FILE';

if (process.env[ONE_FILE]) {
  await runFile(process.env[ONE_FILE]);
} else {
  console.log(line(['name', 'value', 'unit', 'target']));
  console.log('-'.repeat(widths.reduce((a, b) => a + b + 3, 0) + 12));
  for (const file of files) {
    // The same node, with the same loader flags (tsx's), so the child can import TypeScript.
    execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      stdio: 'inherit',
      env: { ...process.env, [ONE_FILE]: file },
    });
  }
}

async function runFile(file: string): Promise<void> {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { run?: BenchRun };
  if (typeof mod.run !== 'function') {
    console.log(`(${file}: no run() export, skipped)`);
    return;
  }
  await mod.run((row) => console.log(line([row.name, format(row.value), row.unit, row.target ?? ''])));
}
