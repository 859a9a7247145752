/**
 * The ESM build in a real browser: headless Chromium (Debian's, installed by scripts/setup.sh)
 * loads a page from a localhost server started here, which imports `dist/index.js`, initializes
 * the detection module from a URL and then the memory module, runs `checkRepetition` and a streaming
 * monitor, and starts a module Web Worker that initializes the core from bytes (and both modules
 * from their packaged URLs) and runs a monitor there. Playwright only drives the
 * browser over the DevTools protocol; it never downloads one.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CHROMIUM = process.env.DEDUP_CHROMIUM ?? '/usr/bin/chromium';
const PKG = resolve(__dirname, '..');
const haveChromium = existsSync(CHROMIUM);

if (!haveChromium) {
  const reason = `headless Chromium not found at ${CHROMIUM} (scripts/setup.sh installs Debian's chromium when run as root; or set DEDUP_CHROMIUM)`;
  if (process.env.CI) throw new Error(reason);
  console.warn(`[browser test] todo: ${reason}`);
}

const LOOP_JS = `const loop = 'I should retry the request because it failed. '.repeat(40);
const prose = 'Rust compiles to WebAssembly. The package wraps the exports with typed functions. Streaming keeps a bounded window, so memory stays flat. Each chunk costs time in proportion to its length.';
const chunksOf = (t) => t.match(/[\\s\\S]{1,16}/g);`;

const PAGE = `<!doctype html><meta charset="utf-8"><title>dedup-wasm</title>
<script type="module">
import { initDedupWasm, checkRepetition, monitorStream, RepetitionAbortError, normalizeMemoryText } from '/pkg/dist/index.js';
${LOOP_JS}
try {
  await initDedupWasm(new URL('/pkg/wasm/dedup_wasm.wasm', import.meta.url));
  const result = { repeated: checkRepetition(loop).repeated, clean: checkRepetition(prose).repeated };
  // Memory dedup needs its own module; until it is loaded its calls say so.
  try { normalizeMemoryText('x'); result.memoryBefore = 'loaded'; } catch (e) { result.memoryBefore = e.name; }
  await initDedupWasm({ memory: new URL('/pkg/wasm/dedup_memory.wasm', import.meta.url) });
  result.memoryAfter = normalizeMemoryText('User LIKES coffee.').text;
  const chunks = chunksOf(loop);
  const state = { pulled: 0, cancelled: false };
  let i = 0;
  const source = new ReadableStream({
    pull(c) { if (i >= chunks.length) return c.close(); state.pulled++; c.enqueue(chunks[i++]); },
    cancel() { state.cancelled = true; },
  }, { highWaterMark: 0 });
  const reader = monitorStream(source).getReader();
  let delivered = 0;
  try {
    for (;;) { const r = await reader.read(); if (r.done) break; delivered += r.value.length; }
    result.stream = 'ended';
  } catch (e) {
    result.stream = e instanceof RepetitionAbortError ? 'aborted:' + e.evidence.rule : 'other:' + e;
  }
  Object.assign(result, { cancelled: state.cancelled, pulled: state.pulled, total: chunks.length, delivered });
  const worker = new Worker('/worker.js', { type: 'module' });
  worker.postMessage({ url: '/model' });
  result.worker = await new Promise((res) => {
    worker.onmessage = (e) => res(e.data);
    worker.onerror = (e) => res({ error: 'worker failed: ' + (e.message || 'load error') });
  });
  window.__result = result;
} catch (e) {
  window.__result = { error: String((e && e.stack) || e) };
}
</script>`;

const WORKER = `import { initDedupWasm, checkRepetition, monitorStream, RepetitionAbortError, cosineSimilarity } from '/pkg/dist/index.js';
${LOOP_JS}
// The INTEGRATION.md worker recipe: init from bytes, then watch a streamed HTTP response.
const ready = fetch('/pkg/wasm/dedup_wasm.wasm').then((r) => r.arrayBuffer()).then((bytes) => initDedupWasm(bytes));
onmessage = async ({ data: { url } }) => {
  try {
    await ready;
    const out = { repeated: checkRepetition(loop).repeated, inWorker: typeof window === 'undefined' };
    // With no argument, both modules load from next to the package's code.
    await initDedupWasm();
    out.cosine = cosineSimilarity([1, 0], [1, 0]);
    const response = await fetch(url);
    const text = response.body.pipeThrough(new TextDecoderStream());
    const reader = monitorStream(text, { onAbort: (e) => { out.stream = 'aborted:' + e.evidence.rule; } }).getReader();
    let received = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) received += r.value;
    out.cut = received.length > 0 && received.length < loop.length && loop.startsWith(received);
    let clean = '';
    for await (const c of monitorStream((async function* () { yield* chunksOf(prose); })())) clean += c;
    out.cleanPassed = clean === prose;
    postMessage(out);
  } catch (e) {
    postMessage({ error: String((e && e.stack) || e) });
  }
};`;

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.map': 'application/json', '.html': 'text/html' };

let server: Server;
/** What the streamed "model" endpoint saw: chunks written, and whether the client hung up early. */
const model = { written: 0, total: 0, closedEarly: false };
let base: string;
let profile: string;

function serve(): Promise<void> {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (url.pathname === '/') return send(200, TYPES['.html']!, PAGE);
    if (url.pathname === '/worker.js') return send(200, TYPES['.js']!, WORKER);
    if (url.pathname === '/model') {
      // A slow "model" streaming a loop: one 16-char chunk every 10 ms, until done or the client hangs up.
      const text = 'I should retry the request because it failed. '.repeat(40);
      const chunks = text.match(/[\s\S]{1,16}/g)!;
      model.total = chunks.length;
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      const timer = setInterval(() => {
        if (model.written >= chunks.length) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(chunks[model.written++]);
      }, 10);
      res.on('close', () => {
        clearInterval(timer);
        if (model.written < chunks.length) model.closedEarly = true;
      });
      return;
    }
    if (url.pathname.startsWith('/pkg/')) {
      const file = normalize(join(PKG, decodeURIComponent(url.pathname.slice('/pkg/'.length))));
      const allowed = [join(PKG, 'dist') + sep, join(PKG, 'wasm') + sep].some((dir) => file.startsWith(dir));
      if (allowed && existsSync(file)) return send(200, TYPES[extname(file)] ?? 'application/octet-stream', readFileSync(file));
    }
    send(404, 'text/plain', 'not found');
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok()));
}

const browserSuite = (): void => {
  beforeAll(async () => {
    await serve();
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    profile = mkdtempSync(join(tmpdir(), 'dedup-wasm-chromium-'));
  });

  afterAll(async () => {
    await new Promise((ok) => server?.close(ok));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('imports the ESM build, checks text, cuts a looping stream, and runs in a module worker', async () => {
    process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
    const { chromium } = await import('playwright-core');
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const consoleErrors: string[] = [];
      page.on('pageerror', (e) => consoleErrors.push(String(e)));
      await page.goto(base + '/');
      await page.waitForFunction(() => (window as unknown as { __result?: unknown }).__result !== undefined, null, { timeout: 30_000 });
      const result = (await page.evaluate(() => (window as unknown as { __result: unknown }).__result)) as Record<string, unknown>;
      expect(consoleErrors).toEqual([]);
      expect(result.error).toBeUndefined();
      expect(result).toMatchObject({ repeated: true, clean: false, cancelled: true, memoryBefore: 'DedupNotInitializedError', memoryAfter: 'user likes coffee' });
      expect(result.stream).toMatch(/^aborted:\S+/);
      expect(result.pulled as number).toBeLessThan(result.total as number);
      expect(result.worker).toMatchObject({ repeated: true, inWorker: true, cut: true, cleanPassed: true, cosine: 1 });
      expect((result.worker as Record<string, unknown>).stream).toMatch(/^aborted:\S+/);
      // Cancelling the monitored stream reached the network: the server saw the client hang up.
      await expect.poll(() => model.closedEarly, { timeout: 10_000 }).toBe(true);
      expect(model.written).toBeLessThan(model.total);
      console.log(`[browser test] model endpoint: ${model.written}/${model.total} chunks written before the client hung up`);
    } finally {
      await context.close();
    }
  });
};

if (haveChromium) describe('in headless Chromium (recipe: browser and worker)', browserSuite);
else it.todo('in headless Chromium: needs Debian chromium (see the warning printed above)');
