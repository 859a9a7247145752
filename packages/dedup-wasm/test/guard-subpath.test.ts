/**
 * `dedup-wasm/guard` and the root share one core: initializing through either entry serves both,
 * in ESM and in CJS, and errors are the same classes.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const dist = resolve(__dirname, '../dist');
const text = JSON.stringify('A long line of agent history that repeats in the prompt.\n'.repeat(3));

function run(code: string, type: 'module' | 'commonjs'): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [type === 'module' ? '--input-type=module' : '--input-type=commonjs', '-e', code], { encoding: 'utf8', cwd: dist });
}

describe('subpath and root share the initialized core', () => {
  it('ESM: initDedupWasm from the root makes dedup-wasm/guard work, with shared error classes', () => {
    const r = run(
      `import * as root from '${dist}/index.js';
       import * as guard from '${dist}/guard.js';
       await root.initDedupWasm();
       const out = guard.deduplicate(${text});
       let same = false;
       try { guard.deduplicate('x', { keep: 'nope' }); } catch (e) { same = e instanceof root.DedupRangeError; }
       console.log(JSON.stringify({ removed: out.removed, same, fn: guard.deduplicate === root.deduplicate }));`,
      'module',
    );
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ removed: 2, same: true, fn: true });
  });

  it('CJS: require of the root and the subpath share one core too', () => {
    const r = run(
      `const root = require('${dist}/index.cjs');
       const guard = require('${dist}/guard.cjs');
       root.initDedupWasm().then(() => {
         const out = guard.deduplicate(${text});
         let same = false;
         try { guard.deduplicate('x', { keep: 'nope' }); } catch (e) { same = e instanceof root.DedupRangeError; }
         console.log(JSON.stringify({ removed: out.removed, same, fn: guard.deduplicate === root.deduplicate }));
       });`,
      'commonjs',
    );
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ removed: 2, same: true, fn: true });
  });

  it('the subpath alone throws a clear error before init', () => {
    const r = run(
      `import { deduplicate } from '${dist}/guard.js';
       try { deduplicate('x'); } catch (e) { console.log(e.name); }`,
      'module',
    );
    expect(r.stdout.trim()).toBe('DedupNotInitializedError');
  });
});
