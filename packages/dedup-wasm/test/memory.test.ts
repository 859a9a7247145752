import { beforeAll, describe, expect, it } from 'vitest';
import * as root from '../dist/index.js';
import {
  cosineSimilarity,
  createDeduplicator,
  createInMemoryStore,
  createLexicalEmbedder,
  normalizeMemoryText,
  type EvictedEvent,
  type MemoryEntry,
  type StoreBackend,
} from '../dist/memory.js';

beforeAll(async () => {
  // Initializing through the root entry must make the subpath work (one shared core).
  await root.initDedupWasm();
});

/** An embedder from a table of text -> vector (unknown texts get a fresh orthogonal-ish vector). */
function tableEmbedder(table: Record<string, number[]>, dims = 8) {
  let calls = 0;
  let next = 0;
  const fresh = new Map<string, number[]>();
  const f = async (text: string): Promise<number[]> => {
    calls++;
    if (table[text]) return table[text]!;
    if (!fresh.has(text)) {
      const v = Array.from({ length: dims }, (_, j) => Math.sin(97.31 * (next + 1) * (j + 1)) + (j === next % dims ? 3 : 0));
      next++;
      fresh.set(text, v);
    }
    return fresh.get(text)!;
  };
  return Object.assign(f, { calls: () => calls });
}

const deg = (d: number): number[] => [Math.cos((d * Math.PI) / 180), Math.sin((d * Math.PI) / 180)];

/** The seed's example store, with every method async. */
class AsyncMapStore implements StoreBackend {
  entries = new Map<string, MemoryEntry>();
  embeddings = new Map<string, number[] | Float32Array>();
  hashes = new Map<string, string>();
  async add(entry: MemoryEntry, embedding: number[] | Float32Array, hash: string) {
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
    this.embeddings.set(entry.id, Array.from(embedding));
    this.hashes.set(hash, entry.id);
  }
  async get(id: string) {
    return this.entries.get(id) ?? null;
  }
  async remove(id: string) {
    this.entries.delete(id);
    this.embeddings.delete(id);
  }
  async all() {
    return [...this.entries.values()];
  }
  async getEmbedding(id: string) {
    return this.embeddings.get(id) ?? null;
  }
  async getHash(hash: string) {
    return this.hashes.get(hash) ?? null;
  }
  async size() {
    return this.entries.size;
  }
  async clear() {
    this.entries.clear();
    this.embeddings.clear();
    this.hashes.clear();
  }
}

describe('options', () => {
  it('validates thresholds with a RangeError naming the field', () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ threshold: Number.NaN }, 'threshold'],
      [{ threshold: 1.5 }, 'threshold'],
      [{ exactThreshold: 0 }, 'exactThreshold'],
      [{ relatedThreshold: -0.1 }, 'relatedThreshold'],
      [{ relatedThreshold: 0.95 }, 'relatedThreshold'],
      [{ threshold: 0.99, exactThreshold: 0.98 }, 'threshold'],
      [{ threshold: 0.98 }, 'threshold'],
    ];
    for (const [o, field] of bad) {
      let err: unknown;
      try {
        createDeduplicator(o);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(o)).toBeInstanceOf(RangeError);
      expect((err as root.DedupRangeError).field).toBe(field);
      expect((err as Error).message).toContain(field);
    }
    expect(() => createDeduplicator({ threshold: '0.9' as unknown as number })).toThrow(TypeError);
    expect(() => createDeduplicator({ mergePolicy: 'keep-best' as never })).toThrow(/mergePolicy/);
    expect(() => createDeduplicator({ store: { add() {} } as never })).toThrow(/missing: get/);
    expect(() => createDeduplicator({ threshold: 0.85, exactThreshold: 0.99, relatedThreshold: 0.6 })).not.toThrow();
  });

  it('rejects malformed entries naming the field', async () => {
    const d = createDeduplicator();
    expect(() => d.add({ id: '', content: 'x' })).toThrow(/entry\.id/);
    expect(() => d.add({ id: 'a', content: 42 as never })).toThrow(/entry\.content/);
    expect(() => d.addBatch([{ id: 'a', content: 'x' }, { id: 'b' } as never])).toThrow(/entries\[1\]\.content/);
    expect(d.size()).toBe(0);
  });
});

describe('normalization and the exact tier', () => {
  it('keeps every script, so different non-Latin memories never collide', async () => {
    const texts = ['用户住在北京', '用户住在上海', '用户喜欢喝茶', 'Пользователь живёт в Москве', 'Пользователь живёт в Казани', 'المستخدم يعيش في القاهرة', 'المستخدم يعيش في دبي'];
    const norms = texts.map((t) => normalizeMemoryText(t));
    expect(new Set(norms.map((n) => n.text)).size).toBe(texts.length);
    expect(new Set(norms.map((n) => n.hash)).size).toBe(texts.length);
    expect(norms.every((n) => n.text.length > 0)).toBe(true);
    const emb = tableEmbedder({});
    const d = createDeduplicator({ embedder: emb });
    for (const [i, t] of texts.entries()) {
      const r = await d.add({ id: `m${i}`, content: t });
      expect(r.hashMatch).not.toBe(true);
      expect(r.action).toBe('added');
    }
    expect(d.size()).toBe(texts.length);
  });

  it('does not equate "$3.50" with "3 50", but does equate case, spacing and edge punctuation', async () => {
    expect(normalizeMemoryText('Price is $3.50').text).not.toBe(normalizeMemoryText('Price is 3 50').text);
    expect(normalizeMemoryText('ＵＳＥＲ likes  coffee!').text).toBe('user likes coffee');
    const emb = tableEmbedder({});
    const d = createDeduplicator({ embedder: emb });
    await d.add({ id: 'a', content: 'Price is $3.50' });
    const r = await d.check({ id: 'b', content: 'Price is 3 50' });
    expect(r.hashMatch).not.toBe(true);
    const calls = emb.calls();
    const same = await d.add({ id: 'c', content: '  PRICE is $3.50.' });
    expect(same).toMatchObject({ classification: 'exact_duplicate', hashMatch: true, similarity: 1, matchId: 'a' });
    expect(emb.calls()).toBe(calls); // a confirmed hash match needs no embedding
  });

  it('re-adding an id replaces its content and hash, leaving nothing stale', async () => {
    const d = createDeduplicator({ embedder: tableEmbedder({}) });
    const evicted: EvictedEvent[] = [];
    d.on('evicted', (e) => evicted.push(e));
    await d.add({ id: 'x', content: 'User likes green tea' });
    const r = await d.add({ id: 'x', content: 'Deploys run on Fridays' });
    expect(r.action).toBe('added');
    expect(d.getEntries()).toEqual([{ id: 'x', content: 'Deploys run on Fridays' }]);
    expect(evicted).toMatchObject([{ id: 'x', reason: 'replaced', survivorId: 'x' }]);
    // The old text is no longer known: a new entry with it is unique, not a duplicate of x.
    const again = await d.add({ id: 'y', content: 'User likes green tea' });
    expect(again.classification).toBe('unique');
    expect(again.hashMatch).not.toBe(true);
    expect(d.size()).toBe(2);
  });
  it('a store that keeps stale hashes (as the seed example does) cannot cause a false exact match', async () => {
    const store = new AsyncMapStore();
    const d = createDeduplicator({ store, embedder: tableEmbedder({}) });
    await d.add({ id: 'x', content: 'User likes green tea' });
    await d.add({ id: 'x', content: 'Deploys run on Fridays' });
    const oldHash = normalizeMemoryText('User likes green tea').hash;
    expect(await store.getHash(oldHash)).toBe('x'); // stale in the store
    const r = await d.add({ id: 'y', content: 'user likes green tea' });
    expect(r.hashMatch).not.toBe(true);
    expect(r.classification).toBe('unique');
    expect(d.getEntries().map((e) => e.content)).toEqual(['Deploys run on Fridays', 'user likes green tea']);
  });
});

describe('concurrency and failures', () => {
  it('serializes mutations: two concurrent adds of duplicates store one', async () => {
    const slow = async (text: string): Promise<number[]> => {
      await new Promise((r) => setTimeout(r, text.includes('tea') ? 30 : 1));
      return text.includes('tea') ? [1, 0, 0] : [0.999, 0.04, 0];
    };
    const d = createDeduplicator({ embedder: slow, mergePolicy: 'keep-oldest' });
    const [a, b] = await Promise.all([d.add({ id: 'a', content: 'User likes tea' }), d.add({ id: 'b', content: 'The user is fond of a cup of tea' })]);
    expect(d.size()).toBe(1);
    expect(a.action).toBe('added');
    expect(b.classification).toMatch(/duplicate/);
    expect(b.action).toBe('skipped');
    expect(d.getEntries()[0]!.id).toBe('a');
  });

  it('an embedder failure leaves the index and stats as they were', async () => {
    let fail = false;
    const emb = async (t: string): Promise<number[]> => {
      if (fail) throw new Error('embedding service down');
      return t.startsWith('first') ? [1, 0] : [0, 1];
    };
    const d = createDeduplicator({ embedder: emb });
    await d.add({ id: 'x', content: 'first version' });
    const before = { entries: d.getEntries(), stats: d.stats() };
    fail = true;
    await expect(d.add({ id: 'x', content: 'second version!' })).rejects.toThrow('embedding service down');
    await expect(d.add({ id: 'y', content: 'other' })).rejects.toThrow('embedding service down');
    await expect(d.addBatch([{ id: 'z', content: 'batch' }])).rejects.toThrow('embedding service down');
    expect(d.getEntries()).toEqual(before.entries);
    expect(d.stats()).toEqual(before.stats);
    fail = false;
    expect((await d.add({ id: 'y', content: 'other' })).action).toBe('added');
  });

  it('a failing store call rolls the whole operation back', async () => {
    const store = new AsyncMapStore();
    let failAdd = false;
    const add = store.add.bind(store);
    store.add = async (e, v, h) => {
      if (failAdd) throw new Error('disk full');
      return add(e, v, h);
    };
    const d = createDeduplicator({ store, embedder: async (t) => (t.startsWith('tea') ? [1, 0] : [0, 1]) });
    await d.add({ id: 'a', content: 'tea one' });
    failAdd = true;
    // keep-newest: b would replace a, so a is removed and b added; the add fails and a comes back.
    await expect(d.add({ id: 'b', content: 'tea two' })).rejects.toThrow('disk full');
    expect(d.getEntries().map((e) => e.id)).toEqual(['a']);
    expect([...store.entries.keys()]).toEqual(['a']);
  });

  it('rejects an embedding of another dimension, a zero vector and non-finite values', async () => {
    const vecs: Record<string, number[]> = { a: [1, 0, 0], b: [1, 0, 0, 0], z: [0, 0, 0], n: [1, Number.NaN, 0], i: [Infinity, 0, 0] };
    const d = createDeduplicator({ embedder: async (t) => vecs[t]! });
    await d.add({ id: '1', content: 'a' });
    for (const [t, rule] of [
      ['b', /dimension/],
      ['z', /zero/],
      ['n', /finite/],
      ['i', /finite/],
    ] as const) {
      const err = await d.add({ id: t, content: t }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RangeError);
      expect((err as root.DedupRangeError).field).toBe('embedding');
      expect((err as Error).message).toMatch(rule);
    }
    expect(d.size()).toBe(1);
  });
});

describe('merge policies', () => {
  const twin = { 'fact A': [1, 0], 'fact A, longer version': [0.999, 0.03] };

  it('keep-newest / keep-oldest follow timestamp or createdAt, then insertion order', async () => {
    const mk = (policy: 'keep-newest' | 'keep-oldest') => createDeduplicator({ embedder: tableEmbedder(twin, 2), mergePolicy: policy });
    // Timestamps say the first-inserted entry is the newer one.
    let d = mk('keep-newest');
    await d.add({ id: 'late', content: 'fact A', metadata: { timestamp: 2000 } });
    let r = await d.add({ id: 'early', content: 'fact A, longer version', metadata: { createdAt: 1000 } });
    expect(r.survivorId).toBe('late');
    d = mk('keep-oldest');
    await d.add({ id: 'late', content: 'fact A', metadata: { timestamp: 2000 } });
    r = await d.add({ id: 'early', content: 'fact A, longer version', metadata: { timestamp: 1000 } });
    expect(r.survivorId).toBe('early');
    expect(d.getEntries().map((e) => e.id)).toEqual(['early']);
    // Without timestamps: insertion order.
    d = mk('keep-newest');
    await d.add({ id: 'first', content: 'fact A' });
    r = await d.add({ id: 'second', content: 'fact A, longer version' });
    expect(r).toMatchObject({ action: 'merged', survivorId: 'second', evictedId: 'first' });
    d = mk('keep-oldest');
    await d.add({ id: 'first', content: 'fact A' });
    r = await d.add({ id: 'second', content: 'fact A, longer version' });
    expect(r).toMatchObject({ action: 'skipped', survivorId: 'first', evictedId: 'second' });
  });

  it('keep-longest, keep-highest-confidence and merge', async () => {
    let d = createDeduplicator({ embedder: tableEmbedder(twin, 2), mergePolicy: 'keep-longest' });
    await d.add({ id: 'long', content: 'fact A, longer version' });
    expect((await d.add({ id: 'short', content: 'fact A' })).survivorId).toBe('long');

    d = createDeduplicator({ embedder: tableEmbedder(twin, 2), mergePolicy: 'keep-highest-confidence' });
    await d.add({ id: 'sure', content: 'fact A', metadata: { confidence: 0.9 } });
    expect((await d.add({ id: 'unsure', content: 'fact A, longer version', metadata: { confidence: 0.4 } })).survivorId).toBe('sure');

    d = createDeduplicator({ embedder: tableEmbedder(twin, 2), mergePolicy: 'merge' });
    await d.add({ id: 'a', content: 'fact A, longer version', metadata: { tags: ['x', 'y'], confidence: 0.5, source: 'chat-1', n: 3 } });
    const r = await d.add({ id: 'b', content: 'fact A', metadata: { tags: ['y', 'z'], confidence: 0.8, source: 'chat-2', n: 1 } });
    expect(r).toMatchObject({ action: 'merged', survivorId: 'a', evictedId: 'b' });
    expect(d.getEntries()).toEqual([{ id: 'a', content: 'fact A, longer version', metadata: { tags: ['x', 'y', 'z'], confidence: 0.8, source: 'chat-2', n: 3 } }]);
  });

  it('a custom function decides, and must return one of the two ids', async () => {
    const d = createDeduplicator({
      embedder: tableEmbedder(twin, 2),
      mergePolicy: (cand, match) => ({ ...match, metadata: { mergedFrom: cand.id } }),
    });
    await d.add({ id: 'a', content: 'fact A' });
    const r = await d.add({ id: 'b', content: 'fact A, longer version' });
    expect(r).toMatchObject({ action: 'merged', survivorId: 'a', evictedId: 'b' });
    expect(d.getEntries()).toEqual([{ id: 'a', content: 'fact A', metadata: { mergedFrom: 'b' } }]);
    const bad = createDeduplicator({ embedder: tableEmbedder(twin, 2), mergePolicy: () => ({ id: 'other', content: 'x' }) });
    await bad.add({ id: 'a', content: 'fact A' });
    await expect(bad.add({ id: 'b', content: 'fact A, longer version' })).rejects.toThrow(/mergePolicy/);
    expect(bad.getEntries().map((e) => e.id)).toEqual(['a']);
  });
});

describe('events and stats', () => {
  it('every entry that disappears is reported as evicted with its survivor', async () => {
    const d = createDeduplicator({ embedder: tableEmbedder({ p: [1, 0], q: [0.999, 0.02], r: [0, 1] }, 2) });
    const events: Array<[string, unknown]> = [];
    for (const name of ['duplicate-found', 'merged', 'evicted', 'added'] as const) d.on(name, (p) => events.push([name, p]));
    await d.add({ id: '1', content: 'p' });
    await d.add({ id: '2', content: 'q' });
    await d.add({ id: '3', content: 'r' });
    await d.remove('3');
    expect(events.map((e) => e[0])).toEqual(['added', 'duplicate-found', 'evicted', 'merged', 'added', 'evicted']);
    expect(events[2]![1]).toMatchObject({ id: '1', survivorId: '2', reason: 'duplicate', wasStored: true });
    expect(events[5]![1]).toMatchObject({ id: '3', survivorId: null, reason: 'removed' });
    const unsub = d.on('added', () => events.push(['extra', null]));
    unsub();
    await d.add({ id: '4', content: 'r' });
    expect(events.some((e) => e[0] === 'extra')).toBe(false);
    expect(() => d.on('nope' as never, () => {})).toThrow(/event/);
  });

  it('check() changes neither the index nor the stats', async () => {
    const d = createDeduplicator({ embedder: tableEmbedder({ p: [1, 0], q: [0.999, 0.02] }, 2) });
    await d.add({ id: '1', content: 'p' });
    const before = d.stats();
    const r = await d.check({ id: '2', content: 'q' });
    expect(r.classification).toBe('exact_duplicate');
    expect(r.matchId).toBe('1');
    expect(d.stats()).toEqual(before);
    expect(d.size()).toBe(1);
    expect(before).toMatchObject({ totalEntries: 1, totalChecks: 1, uniqueEntries: 1, exactDuplicates: 0 });
  });

  it('classifies the four tiers at 0.98 / 0.90 / 0.75', async () => {
    const d = createDeduplicator({ embedder: tableEmbedder({ base: deg(0), exact: deg(5), semantic: deg(20), related: deg(35), unique: deg(60) }, 2) });
    await d.add({ id: 'b', content: 'base' });
    expect((await d.check({ id: 'x', content: 'exact' })).classification).toBe('exact_duplicate');
    expect((await d.check({ id: 'x', content: 'semantic' })).classification).toBe('semantic_duplicate');
    expect((await d.check({ id: 'x', content: 'related' })).classification).toBe('related');
    expect((await d.check({ id: 'x', content: 'unique' })).classification).toBe('unique');
    const rel = await d.add({ id: 'r', content: 'related' });
    expect(rel).toMatchObject({ action: 'added', classification: 'related', matchId: 'b' });
  });
});

describe('batch, sweep and compact', () => {
  it('addBatch embeds through embedMany in a few calls', async () => {
    let single = 0;
    let many = 0;
    const lex = createLexicalEmbedder({ dims: 64 });
    const emb = Object.assign(
      async (t: string) => {
        single++;
        return lex(t);
      },
      {
        embedMany: async (ts: string[]) => {
          many++;
          return lex.embedMany(ts);
        },
      },
    );
    const d = createDeduplicator({ embedder: emb });
    const entries = Array.from({ length: 600 }, (_, i) => ({ id: `e${i}`, content: `memory number ${i} about topic ${i * 7919}` }));
    entries.push({ id: 'dup', content: 'Memory number 5 about topic 39595.' });
    const r = await d.addBatch(entries);
    expect(single).toBe(0);
    expect(many).toBe(3);
    expect(r.totalProcessed).toBe(601);
    expect(r.results[600]).toMatchObject({ classification: 'exact_duplicate', hashMatch: true });
    expect(r.uniqueAdded + r.duplicatesFound).toBe(601);
    expect(d.size()).toBe(r.uniqueAdded);
  });

  it('sweep finds duplicates loaded from an async store and evicts them with events', async () => {
    const store = new AsyncMapStore();
    const v = (d: number) => deg(d);
    await store.add({ id: 'a', content: 'A' }, v(0), 'h1');
    await store.add({ id: 'b', content: 'B' }, v(3), 'h2');
    await store.add({ id: 'c', content: 'C' }, v(90), 'h3');
    const d = createDeduplicator({ store, embedder: async () => v(45) });
    await d.ready();
    expect(d.size()).toBe(3);
    const evicted: EvictedEvent[] = [];
    d.on('evicted', (e) => evicted.push(e));
    const r = await d.sweep();
    expect(r).toMatchObject({ duplicatePairs: [['b', 'a']], duplicateCount: 1, evictedCount: 1, evictedIds: ['a'], totalScanned: 3 });
    expect(evicted).toMatchObject([{ id: 'a', survivorId: 'b', reason: 'sweep' }]);
    expect([...store.entries.keys()].sort()).toEqual(['b', 'c']);
  });

  it('compact clusters without chaining: every member is within the threshold of its survivor', async () => {
    const angles: Record<string, number> = { a: 0, b: 20, c: 40, d: 100, e: 115, f: 200 };
    const vectors = Object.fromEntries(Object.entries(angles).map(([k, a]) => [k, deg(a)]));
    const d = createDeduplicator({ embedder: tableEmbedder(vectors, 2), threshold: 0.97, exactThreshold: 0.99, relatedThreshold: 0.5, mergePolicy: 'keep-oldest' });
    for (const k of Object.keys(angles)) await d.add({ id: k, content: k });
    expect(d.size()).toBe(6);
    const evicted: EvictedEvent[] = [];
    d.on('evicted', (e) => evicted.push(e));
    const r = await d.compact({ threshold: 0.9 });
    for (const e of evicted) {
      const sim = cosineSimilarity(vectors[e.id]!, vectors[e.survivorId!]!);
      expect(sim, `${e.id} -> ${e.survivorId}`).toBeGreaterThanOrEqual(0.9);
    }
    // a ~ b ~ c but a !~ c: c must survive on its own.
    const left = d.getEntries().map((x) => x.id);
    expect(left).toContain('c');
    expect(left).toContain('f');
    expect(r.clustersFound).toBeGreaterThanOrEqual(2);
    expect(r.mergedCount).toBe(evicted.length);
    expect(left.length + evicted.length).toBe(6);
  });

  it('sweep at scale goes through the graph and finds every planted duplicate', async () => {
    const dims = 32;
    let s = 7;
    const rnd = () => {
      s ^= s << 13;
      s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      return s / 4294967296 - 0.5;
    };
    const table: Record<string, number[]> = {};
    const entries: MemoryEntry[] = [];
    for (let i = 0; i < 2500; i++) {
      table[`t${i}`] = Array.from({ length: dims }, rnd);
      entries.push({ id: `e${i}`, content: `t${i}` });
    }
    for (let i = 0; i < 40; i++) {
      const base = table[`t${i * 50}`]!;
      table[`d${i}`] = base.map((x) => x + 0.02 * rnd());
    }
    // Thresholds so high that add() merges nothing; the sweep (at 0.999) must find the planted pairs.
    const d = createDeduplicator({ embedder: tableEmbedder(table, dims), threshold: 0.99999, exactThreshold: 0.999999, relatedThreshold: 0.9999, store: createInMemoryStore({ annThreshold: 500 }) });
    await d.addBatch(entries);
    for (let i = 0; i < 40; i++) {
      const r = await d.add({ id: `dup${i}`, content: `d${i}` });
      expect(r.action).toBe('added');
      expect(r.matchId).toBe(`e${i * 50}`);
    }
    expect(d.size()).toBe(2540);
    const r = await d.sweep({ threshold: 0.999 });
    expect(r.duplicateCount).toBe(40);
    const pairs = new Set(r.duplicatePairs.map(([a, b]) => [a, b].sort().join('|')));
    for (let i = 0; i < 40; i++) expect(pairs.has([`dup${i}`, `e${i * 50}`].sort().join('|'))).toBe(true);
    expect(d.size()).toBe(2500);
  });
});

describe('lexical embedder', () => {
  it('is the default, deterministic, and honest about paraphrase', async () => {
    const lex = createLexicalEmbedder({ dims: 384 });
    const a = await lex('User lives in Berlin and works as a nurse');
    expect(a).toBeInstanceOf(Float32Array);
    expect(a.length).toBe(384);
    expect(Array.from(a)).toEqual(Array.from(await lex('User lives in Berlin and works as a nurse')));
    expect(cosineSimilarity(a, await lex('User works as a nurse and lives in Berlin'))).toBeGreaterThan(0.8);
    expect(cosineSimilarity(a, await lex('The deploy pipeline failed on step three'))).toBeLessThan(0.3);
    // Not a model: paraphrase with different words is not recognized.
    expect(cosineSimilarity(await lex('User lives in NYC'), await lex("User's home is New York City"))).toBeLessThan(0.6);
    expect(() => createLexicalEmbedder({ dims: 0 })).toThrow(RangeError);

    const d = createDeduplicator();
    await d.add({ id: '1', content: 'The user prefers dark mode in every editor' });
    const r = await d.add({ id: '2', content: 'the user prefers dark mode in every editor.' });
    expect(r).toMatchObject({ classification: 'exact_duplicate', hashMatch: true });
  });
});
