import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initDedupWasm } from '../dist/index.js';
import { createLanceDbStore } from '../dist/lancedb.js';
import { createDeduplicator, createLexicalEmbedder, type EvictedEvent } from '../dist/memory.js';

const dir = mkdtempSync(join(tmpdir(), 'dedup-lancedb-'));
const embedder = createLexicalEmbedder({ dims: 128 });

beforeAll(async () => {
  await initDedupWasm();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const facts = [
  { id: 'f1', content: 'The user lives in Lisbon and works remotely', metadata: { timestamp: 1000, tags: ['home'] } },
  { id: 'f2', content: 'The user prefers dark mode in every editor', metadata: { timestamp: 2000 } },
  { id: 'f3', content: '用户喜欢喝绿茶', metadata: { timestamp: 3000 } },
  { id: 'f4', content: 'Deploys to production happen on Tuesdays', metadata: { timestamp: 4000 } },
];

describe('LanceDB store', () => {
  it('persists entries, embeddings and hashes; answers search with cosine', async () => {
    const store = await createLanceDbStore({ uri: dir });
    const dedup = createDeduplicator({ store, embedder });
    for (const f of facts) expect((await dedup.add(f)).action).toBe('added');
    // An exact duplicate (case and punctuation) merges; keep-newest keeps the later one.
    const dup = await dedup.add({ id: 'f5', content: 'the user prefers DARK MODE in every editor.', metadata: { timestamp: 5000 } });
    expect(dup).toMatchObject({ classification: 'exact_duplicate', hashMatch: true, action: 'merged', survivorId: 'f5', evictedId: 'f2' });
    expect(store.size()).toBe(4);
    const v = await embedder('Deploys to production happen on Tuesdays');
    const hits = await store.search(v, 2);
    expect(hits[0]!.id).toBe('f4');
    expect(hits[0]!.similarity).toBeGreaterThan(0.999);
    // A reordered near-duplicate is found through LanceDB's vector search.
    const near = await dedup.check({ id: 'q', content: 'Production deploys happen on Tuesdays' });
    expect(near.matchId).toBe('f4');
    expect(near.hashMatch).not.toBe(true);
    store.close();
  });

  it('survives a restart in a new process: nothing lost, check and sweep work', () => {
    const script = `
      import { initDedupWasm } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
      import { createLanceDbStore } from ${JSON.stringify(new URL('../dist/lancedb.js', import.meta.url).href)};
      import { createDeduplicator, createLexicalEmbedder } from ${JSON.stringify(new URL('../dist/memory.js', import.meta.url).href)};
      await initDedupWasm();
      const store = await createLanceDbStore({ uri: ${JSON.stringify(dir)} });
      const dedup = createDeduplicator({ store, embedder: createLexicalEmbedder({ dims: 128 }) });
      await dedup.ready();
      const entries = dedup.getEntries();
      const exact = await dedup.check({ id: 'q', content: 'The user lives in Lisbon and works remotely!' });
      const cjk = await dedup.check({ id: 'q2', content: '用户喜欢喝红茶' });
      const sweep = await dedup.sweep();
      const emb = await store.getEmbedding('f1');
      console.log(JSON.stringify({ entries, exact, cjkHash: cjk.hashMatch ?? false, sweep, dims: emb && emb.length, size: dedup.size() }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').pop()!);
    expect(r.entries.map((e: { id: string }) => e.id)).toEqual(['f1', 'f3', 'f4', 'f5']);
    expect(r.entries[0]).toEqual(facts[0]);
    expect(r.exact).toMatchObject({ classification: 'exact_duplicate', hashMatch: true, matchId: 'f1' });
    expect(r.cjkHash).toBe(false);
    expect(r.sweep).toMatchObject({ duplicateCount: 0, totalScanned: 4 });
    expect(r.dims).toBe(128);
    expect(r.size).toBe(4);
  });

  it('a new connection sees the same entries, and sweep merges duplicates stored by another writer', async () => {
    const store = await createLanceDbStore({ uri: dir });
    expect(store.size()).toBe(4);
    // Another writer stores a near-duplicate directly, bypassing dedup.
    const text = 'The user lives in Lisbon, and works remotely';
    await store.add({ id: 'w1', content: text, metadata: { timestamp: 9000 } }, await embedder(text), 'external');
    const dedup = createDeduplicator({ store, embedder, threshold: 0.8, relatedThreshold: 0.5 });
    const evicted: EvictedEvent[] = [];
    dedup.on('evicted', (e) => evicted.push(e));
    const r = await dedup.sweep();
    expect(r.duplicatePairs).toEqual([['w1', 'f1']]);
    expect(evicted).toMatchObject([{ id: 'f1', survivorId: 'w1', reason: 'sweep' }]);
    store.close();
    const reopened = await createLanceDbStore({ uri: dir });
    expect(reopened.all().map((e) => e.id)).toEqual(['f3', 'f4', 'f5', 'w1']);
    await reopened.clear();
    expect(reopened.size()).toBe(0);
    reopened.close();
    expect((await createLanceDbStore({ uri: dir })).size()).toBe(0);
  });
});
