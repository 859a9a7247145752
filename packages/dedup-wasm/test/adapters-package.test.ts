/**
 * The published artifact: `pnpm pack`, installed with npm into an empty project outside the
 * workspace (offline: the package needs nothing from the registry), then used from ESM, CJS and
 * TypeScript exactly as a user would.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PKG = resolve(__dirname, '..');
let work: string;
let project: string;

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
}

const SCRIPT_BODY = `
  await initDedupWasm();
  const loop = 'I should retry the request because it failed. '.repeat(40);
  const out = {};
  out.repeated = checkRepetition(loop).repeated;
  out.clean = checkRepetition('One sentence here. Another, entirely different one follows it.').repeated;
  const chunks = loop.match(/[\\s\\S]{1,16}/g);
  let passed = 0;
  try {
    for await (const c of monitorStream((async function* () { yield* chunks; })())) passed += c.length;
    out.stream = 'ended';
  } catch (e) {
    out.stream = e instanceof RepetitionAbortError ? 'aborted:' + e.evidence.rule : 'other:' + e;
  }
  out.cut = passed < loop.length;
  const tools = createToolCallMonitor();
  out.tools = [1, 2, 3, 4, 5].map(() => tools.record({ name: 'ls', args: { dir: '.' } }).action).join(',');
  const mw = repetitionMiddleware();
  out.middleware = mw.specificationVersion + ':' + typeof mw.wrapStream + ':' + typeof mw.wrapGenerate;
  out.sameError = SubError === RepetitionAbortError;
  // The subpath uses the core the root initialized (it would throw DedupNotInitializedError otherwise).
  const doGenerate = async () => ({ content: [{ type: 'text', text: loop }], finishReason: { unified: 'stop', raw: 'stop' }, usage: {}, warnings: [] });
  const generated = await mw.wrapGenerate({ doGenerate, doStream: doGenerate, params: {}, model: {} });
  out.generate = generated.providerMetadata.dedupWasm.action;
  console.log(JSON.stringify(out));
`;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'dedup-wasm-pack-'));
  run('pnpm', ['pack', '--pack-destination', work], PKG);
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('pnpm pack produced no tarball');
  project = join(work, 'app');
  run('mkdir', ['-p', project], work);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  // A plain install, as a user runs it. (With --offline npm cannot read the metadata of optional peers
  // missing from its cache, such as apache-arrow for the LanceDB store, and refuses the install.)
  run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', join(work, tarball)], project);
}, 180_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the wasm, both module formats and types for every subpath', () => {
    const root = join(project, 'node_modules', 'dedup-wasm');
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(existsSync(join(root, 'wasm', 'dedup_wasm.wasm'))).toBe(true);
    expect(existsSync(join(root, 'wasm', 'dedup_memory.wasm'))).toBe(true);
    for (const [subpath, entry] of Object.entries(manifest.exports)) {
      if (typeof entry === 'string') {
        expect(existsSync(join(root, entry)), `${subpath} -> ${entry}`).toBe(true);
        continue;
      }
      const e = entry as Record<string, Record<string, string>>;
      for (const kind of ['import', 'require'] as const) {
        for (const field of ['types', 'default'] as const) {
          const file = e[kind]?.[field];
          expect(file, `${subpath} ${kind}.${field}`).toBeTruthy();
          expect(existsSync(join(root, file!)), `${subpath} ${kind}.${field} -> ${file}`).toBe(true);
        }
      }
    }
    expect(Object.keys(manifest.exports)).toContain('./ai-sdk');
    // No source, tests or node_modules in the tarball.
    expect(existsSync(join(root, 'src'))).toBe(false);
    expect(existsSync(join(root, 'test'))).toBe(false);
  });

  it('works from an ESM script with no bundler or loader configuration', () => {
    writeFileSync(
      join(project, 'check.mjs'),
      `import { initDedupWasm, checkRepetition, monitorStream, createToolCallMonitor, RepetitionAbortError } from 'dedup-wasm';
import { repetitionMiddleware, RepetitionAbortError as SubError } from 'dedup-wasm/ai-sdk';
${SCRIPT_BODY}`,
    );
    const out = JSON.parse(run('node', ['check.mjs'], project)) as Record<string, unknown>;
    expect(out).toMatchObject({ repeated: true, clean: false, cut: true, tools: 'none,none,steer,steer,abort', middleware: 'v3:function:function', sameError: true, generate: 'abort' });
    expect(out.stream).toMatch(/^aborted:\S+/);
  });

  it('works from a CommonJS script, with the subpath sharing the root core', () => {
    writeFileSync(
      join(project, 'check.cjs'),
      `const { initDedupWasm, checkRepetition, monitorStream, createToolCallMonitor, RepetitionAbortError } = require('dedup-wasm');
const { repetitionMiddleware, RepetitionAbortError: SubError } = require('dedup-wasm/ai-sdk');
(async () => {
${SCRIPT_BODY}
})().catch((e) => { console.error(e); process.exit(1); });`,
    );
    const out = JSON.parse(run('node', ['check.cjs'], project)) as Record<string, unknown>;
    expect(out).toMatchObject({ repeated: true, clean: false, cut: true, tools: 'none,none,steer,steer,abort', middleware: 'v3:function:function', sameError: true, generate: 'abort' });
    expect(out.stream).toMatch(/^aborted:\S+/);
  });

  it('resolves its types from TypeScript in ESM and CJS projects (node16 resolution)', () => {
    const tsc = join(PKG, 'node_modules', 'typescript', 'bin', 'tsc');
    writeFileSync(
      join(project, 'types.mts'),
      `import { monitorStream, createToolCallMonitor, type StreamCheck, type ToolCallVerdict } from 'dedup-wasm';
const v: ToolCallVerdict = createToolCallMonitor().record({ name: 'x', args: {} });
const s: AsyncGenerator<string, void, undefined> = monitorStream((async function* () { yield 'a'; })());
const f = (c: StreamCheck): number => c.ratio;
// @ts-expect-error: the action is a closed union
const bad: ToolCallVerdict['action'] = 'explode';
export { v, s, f, bad };
`,
    );
    writeFileSync(
      join(project, 'types.cts'),
      `import { checkRepetition, type RepetitionResult } from 'dedup-wasm';
const r: RepetitionResult = checkRepetition('x');
export = r;
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: [], lib: ['es2022', 'dom', 'esnext.disposable'] }, files: ['types.mts', 'types.cts'] }),
    );
    expect(() => run('node', [tsc, '-p', 'tsconfig.json'], project)).not.toThrow();
  });
});
