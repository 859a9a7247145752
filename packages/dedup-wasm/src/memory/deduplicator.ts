/**
 * `createDeduplicator`: the memory-dedup pipeline (normalize → hash → embed → search → classify →
 * merge policy) over a pluggable store, with serialized mutations and rollback.
 * @module
 */
import { DedupRangeError, DedupTypeError } from '../errors.js';
import { initDedupWasm } from '../wasm/loader.js';
import { cosineSimilarity, normalizeMemoryText, toEmbedding, type NormalizedText } from './core.js';
import { Emitter } from './events.js';
import { IdVectorIndex } from './id-index.js';
import { createLexicalEmbedder } from './lexical.js';
import { ID_INDEX, InMemoryStore, RESERVE } from './memory-store.js';
import { resolve, sameEntry, type Ranked } from './policies.js';
import { resolveOptions, sweepThreshold, validateEntry } from './options.js';
import type {
  AddResult,
  BatchResult,
  Classification,
  CompactResult,
  DedupEvents,
  DedupOptions,
  DedupResult,
  DedupStats,
  Embedder,
  MemoryDedup,
  MemoryEntry,
  StoreBackend,
  StoreMatch,
  SweepOptions,
  SweepResult,
} from './types.js';

/** Texts per `embedMany` call in `addBatch`. */
const EMBED_BATCH = 256;

interface Slot {
  entry: MemoryEntry;
  hash: string;
  norm: string;
  seq: number;
}

type Pending = { [E in keyof DedupEvents]: [E, DedupEvents[E]] }[keyof DedupEvents];

const now = (): number => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/**
 * Creates a deduplicator for agent memory.
 *
 * ```ts
 * const dedup = createDeduplicator({ embedder: myEmbedder, threshold: 0.9, mergePolicy: 'keep-newest' });
 * const r = await dedup.add({ id: 'e1', content: 'User lives in Berlin', metadata: { timestamp: Date.now() } });
 * ```
 *
 * - **Tiers:** a confirmed hash match (same normalized text) or cosine >= `exactThreshold` is an
 *   exact duplicate; >= `threshold` a semantic duplicate; >= `relatedThreshold` related (stored);
 *   below that unique (stored).
 * - **Order:** every method that reads or changes the index runs after the ones called before it,
 *   so two concurrent `add()`s of duplicates store one and report the other as its duplicate.
 * - **Failure:** an embedder error leaves everything as it was; a store error rolls back the
 *   changes the failed call had made.
 * - **Events:** every entry that leaves the index, or loses a merge, is reported by `evicted` with
 *   its survivor.
 *
 * With no `embedder`, the lexical embedder (`createLexicalEmbedder`) is used: offline and
 * deterministic, good for near-duplicates, blind to paraphrase. With no `store`, an in-memory store
 * backed by the wasm vector index.
 *
 * @throws DedupRangeError / DedupTypeError naming the option when options are invalid
 */
export function createDeduplicator(options?: DedupOptions): MemoryDedup {
  const opts = resolveOptions(options);
  const embedder: Embedder = opts.embedder ?? createLexicalEmbedder();
  const store: StoreBackend = opts.store ?? new InMemoryStore();
  const reserving = store as { [RESERVE]?: (v: Float32Array, k: number) => StoreMatch[] };
  const indexed = store as { [ID_INDEX]?: () => IdVectorIndex };
  const fixedDim = (store as { dimension?: unknown }).dimension;
  /** For a store that cannot search: our own wasm index of its embeddings. */
  const ownIndex = typeof store.search !== 'function' && typeof indexed[ID_INDEX] !== 'function' ? new IdVectorIndex() : null;

  const mirror = new Map<string, Slot>();
  const byHash = new Map<string, Set<string>>();
  const emitter = new Emitter();
  let seq = 0;
  let dim: number | null = typeof fixedDim === 'number' ? fixedDim : null;
  const counters = { totalChecks: 0, exactDuplicates: 0, semanticDuplicates: 0, uniqueEntries: 0, durationMs: 0 };

  // ---- loading and ordering ------------------------------------------------------------------
  let loaded = false;
  let loading: Promise<void> | null = null;
  const initial = opts.store === undefined ? [] : safeSyncAll(store);
  if (initial !== null && initial.length === 0) loaded = true;

  function safeSyncAll(s: StoreBackend): MemoryEntry[] | null {
    try {
      const r = s.all();
      return Array.isArray(r) ? r : null;
    } catch {
      return null;
    }
  }

  async function load(): Promise<void> {
    await initDedupWasm();
    if (loaded) return;
    loading ??= (async () => {
      const entries = await store.all();
      const vectors: Array<{ id: string; vector: Float32Array }> = [];
      for (const entry of entries) {
        validateEntry(entry, 'stored entry');
        const n = normalizeMemoryText(entry.content);
        track({ entry, hash: n.hash, norm: n.text, seq: seq++ });
        if (ownIndex || dim === null) {
          const emb = await store.getEmbedding(entry.id);
          if (emb) {
            const v = toEmbedding(emb, 'embedding', dim ?? undefined);
            dim ??= v.length;
            if (ownIndex) vectors.push({ id: entry.id, vector: v });
          }
        }
      }
      ownIndex?.setMany(vectors);
      loaded = true;
    })().finally(() => {
      loading = null;
    });
    return loading;
  }

  function requireLoaded(what: string): void {
    if (!loaded) throw new Error(`dedup-wasm: ${what}() needs the store's entries loaded: await dedup.ready() first`);
  }

  let tail: Promise<unknown> = Promise.resolve();
  /** Runs `f` after every operation queued before it. */
  function serial<T>(f: () => Promise<T>): Promise<T> {
    const run = tail.then(async () => {
      await load();
      return f();
    });
    tail = run.catch(() => undefined);
    return run;
  }

  // ---- bookkeeping ---------------------------------------------------------------------------
  function track(slot: Slot): void {
    untrack(slot.entry.id);
    mirror.set(slot.entry.id, slot);
    let ids = byHash.get(slot.hash);
    if (!ids) byHash.set(slot.hash, (ids = new Set()));
    ids.add(slot.entry.id);
  }

  function untrack(id: string): void {
    const old = mirror.get(id);
    if (!old) return;
    mirror.delete(id);
    const ids = byHash.get(old.hash);
    ids?.delete(id);
    if (ids && ids.size === 0) byHash.delete(old.hash);
  }

  /** A stored entry with the same normalized text (hash hit confirmed by comparing texts). */
  function exactMatch(n: NormalizedText, excludeId: string): Slot | null {
    for (const id of byHash.get(n.hash) ?? []) {
      const slot = mirror.get(id);
      if (id !== excludeId && slot && slot.norm === n.text) return slot;
    }
    return null;
  }

  async function embed(text: string): Promise<Float32Array> {
    return toEmbedding(await embedder(text), 'embedding', dim ?? undefined);
  }

  async function storedEmbedding(id: string): Promise<Float32Array | null> {
    const e = await store.getEmbedding(id);
    return e ? toEmbedding(e, 'embedding') : null;
  }

  async function bestMatch(v: Float32Array, excludeId: string, forAdd: boolean): Promise<StoreMatch | null> {
    if (mirror.size === 0 || (mirror.size === 1 && mirror.has(excludeId))) return null;
    let found: StoreMatch[];
    if (forAdd && typeof reserving[RESERVE] === 'function') found = reserving[RESERVE](v, 2);
    else if (ownIndex) found = ownIndex.search(v, 2, excludeId);
    else found = await store.search!(v, 2);
    for (const m of found) if (m.id !== excludeId && mirror.has(m.id)) return m;
    return null;
  }

  function classify(similarity: number | undefined, hashMatch: boolean): Classification {
    if (hashMatch || (similarity !== undefined && similarity >= opts.exactThreshold)) return 'exact_duplicate';
    if (similarity === undefined) return 'unique';
    if (similarity >= opts.threshold) return 'semantic_duplicate';
    if (similarity >= opts.relatedThreshold) return 'related';
    return 'unique';
  }

  // ---- transactions --------------------------------------------------------------------------
  /** Store changes with their undo, so a failing store call leaves everything as it was. */
  class Tx {
    private readonly undo: Array<() => Promise<void>> = [];

    async put(entry: MemoryEntry, vector: Float32Array, n: NormalizedText, order = seq++): Promise<void> {
      const prev = mirror.get(entry.id);
      const prevVector = prev ? await storedEmbedding(entry.id) : null;
      await store.add(entry, vector, n.hash);
      track({ entry, hash: n.hash, norm: n.text, seq: order });
      ownIndex?.set(entry.id, vector);
      dim ??= vector.length;
      this.undo.push(async () => {
        untrack(entry.id);
        ownIndex?.unset(entry.id);
        await store.remove(entry.id);
        if (prev && prevVector) {
          await store.add(prev.entry, prevVector, prev.hash);
          track(prev);
          ownIndex?.set(prev.entry.id, prevVector);
        }
      });
    }

    async remove(id: string): Promise<Slot | null> {
      const prev = mirror.get(id);
      if (!prev) return null;
      const prevVector = await storedEmbedding(id);
      await store.remove(id);
      untrack(id);
      ownIndex?.unset(id);
      this.undo.push(async () => {
        if (prevVector) {
          await store.add(prev.entry, prevVector, prev.hash);
          track(prev);
          ownIndex?.set(id, prevVector);
        }
      });
      return prev;
    }

    async rollback(): Promise<void> {
      for (const u of this.undo.reverse()) {
        try {
          await u();
        } catch {
          // Best effort: the store refused to undo; later calls see what it holds.
        }
      }
    }
  }

  async function transact<T>(f: (tx: Tx, events: Pending[]) => Promise<T>): Promise<T> {
    const tx = new Tx();
    const events: Pending[] = [];
    let result: T;
    try {
      result = await f(tx, events);
    } catch (e) {
      await tx.rollback();
      throw e;
    }
    let first: unknown;
    let failed = false;
    for (const [name, payload] of events) {
      try {
        emitter.emit(name, payload as never);
      } catch (e) {
        if (!failed) first = e;
        failed = true;
      }
    }
    if (failed) throw first;
    return result;
  }

  /** The vector of `survivor`: reused from a known entry with the same normalized text, else embedded. */
  async function survivorVector(survivor: MemoryEntry, known: Array<{ norm: string; vector: () => Promise<Float32Array | null> }>): Promise<{ vector: Float32Array; n: NormalizedText }> {
    const n = normalizeMemoryText(survivor.content);
    for (const k of known) {
      if (k.norm === n.text) {
        const v = await k.vector();
        if (v) return { vector: v, n };
      }
    }
    return { vector: await embed(survivor.content), n };
  }

  // ---- check / add ---------------------------------------------------------------------------
  interface Probe {
    n: NormalizedText;
    match: Slot | null;
    similarity: number | undefined;
    hashMatch: boolean;
    vector: Float32Array | undefined;
    classification: Classification;
  }

  async function probe(entry: MemoryEntry, forAdd: boolean, pre?: Float32Array): Promise<Probe> {
    const n = normalizeMemoryText(entry.content);
    const exact = exactMatch(n, entry.id);
    if (exact) return { n, match: exact, similarity: 1, hashMatch: true, vector: pre, classification: 'exact_duplicate' };
    const vector = pre ?? (await embed(entry.content));
    const best = await bestMatch(vector, entry.id, forAdd);
    const match = best ? mirror.get(best.id) ?? null : null;
    const similarity = best ? best.similarity : undefined;
    return { n, match, similarity, hashMatch: false, vector, classification: classify(similarity, false) };
  }

  function baseResult(p: Probe, t0: number): DedupResult {
    const r: DedupResult = { classification: p.classification, durationMs: now() - t0 };
    if (p.match) r.matchId = p.match.entry.id;
    if (p.similarity !== undefined) r.similarity = p.similarity;
    if (p.hashMatch) r.hashMatch = true;
    return r;
  }

  async function addOne(entry: MemoryEntry, pre?: Float32Array): Promise<AddResult> {
    const t0 = now();
    const p = await probe(entry, true, pre);
    const result = await transact(async (tx, events): Promise<AddResult> => {
      const prev = mirror.get(entry.id) ?? null;
      const isDup = p.classification === 'exact_duplicate' || p.classification === 'semantic_duplicate';
      if (!isDup || !p.match) {
        const vector = p.vector ?? (await embed(entry.content));
        await tx.put(entry, vector, p.n);
        if (prev) events.push(['evicted', { id: entry.id, entry: prev.entry, survivorId: entry.id, reason: 'replaced', wasStored: true }]);
        const added: DedupEvents['added'] = { entry, classification: p.classification === 'related' ? 'related' : 'unique' };
        if (p.match) added.matchId = p.match.entry.id;
        if (p.similarity !== undefined) added.similarity = p.similarity;
        events.push(['added', added]);
        return { ...baseResult(p, t0), action: 'added' };
      }
      const match = p.match;
      const similarity = p.similarity ?? 1;
      const dupEvent: Pending = ['duplicate-found', { entry, matchId: match.entry.id, similarity, classification: p.classification as 'exact_duplicate', hashMatch: p.hashMatch, source: 'add' }];
      events.push(dupEvent);
      const res = resolve(opts.mergePolicy, { entry, seq }, { entry: match.entry, seq: match.seq }, similarity);
      const loser = (wasStored: boolean, e: MemoryEntry): Pending => ['evicted', { id: e.id, entry: e, survivorId: res.survivor.id, reason: 'duplicate', wasStored, similarity }];
      if (res.winner === 'match' && sameEntry(res.survivor, match.entry)) {
        // The existing entry stays as it is; the incoming one (and any older version of its id) goes.
        if (prev) await tx.remove(entry.id);
        events.push(loser(prev !== null, prev ? prev.entry : entry));
        return { ...baseResult(p, t0), action: 'skipped', survivorId: match.entry.id, evictedId: entry.id };
      }
      const { vector, n } = await survivorVector(res.survivor, [
        { norm: p.n.text, vector: async () => p.vector ?? null },
        { norm: match.norm, vector: () => storedEmbedding(match.entry.id) },
      ]);
      await tx.put(res.survivor, vector, n);
      const loserId = res.winner === 'candidate' ? match.entry.id : entry.id;
      if (res.winner === 'candidate') {
        await tx.remove(match.entry.id);
        events.push(loser(true, match.entry));
      } else {
        if (prev) await tx.remove(entry.id);
        events.push(loser(prev !== null, prev ? prev.entry : entry));
      }
      events.push(['merged', { survivorId: res.survivor.id, survivor: res.survivor, mergedIds: [loserId], similarity, source: 'add' }]);
      return { ...baseResult(p, t0), action: 'merged', survivorId: res.survivor.id, evictedId: loserId };
    });
    counters.totalChecks++;
    if (p.classification === 'exact_duplicate' && p.match) counters.exactDuplicates++;
    else if (p.classification === 'semantic_duplicate' && p.match) counters.semanticDuplicates++;
    else counters.uniqueEntries++;
    result.durationMs = now() - t0;
    counters.durationMs += result.durationMs;
    return result;
  }

  async function embedBatch(entries: MemoryEntry[]): Promise<Map<string, Float32Array>> {
    const byText = new Map<string, Float32Array>();
    const texts: string[] = [];
    const seen = new Set<string>();
    for (const e of entries) {
      const n = normalizeMemoryText(e.content);
      if (seen.has(n.text) || exactMatch(n, e.id)) continue;
      seen.add(n.text);
      texts.push(e.content);
    }
    const put = (text: string, v: unknown, i: number): void => {
      const vector = toEmbedding(v, `embeddings[${i}]`, dim ?? undefined);
      byText.set(normalizeMemoryText(text).text, vector);
    };
    if (typeof embedder.embedMany === 'function') {
      for (let i = 0; i < texts.length; i += EMBED_BATCH) {
        const chunk = texts.slice(i, i + EMBED_BATCH);
        const out = await embedder.embedMany(chunk);
        if (!Array.isArray(out) || out.length !== chunk.length) {
          throw new DedupRangeError('embedMany', 'must return one embedding per text', `embedMany returned ${Array.isArray(out) ? out.length : typeof out} embeddings for ${chunk.length} texts`);
        }
        chunk.forEach((t, j) => put(t, out[j], i + j));
      }
    } else {
      for (let i = 0; i < texts.length; i++) put(texts[i]!, await embedder(texts[i]!), i);
    }
    // All vectors of one batch must share a dimension, before anything is stored.
    const dims = new Set([...byText.values()].map((v) => v.length));
    if (dims.size > 1) throw new DedupRangeError('embedding', 'must have the same dimension as the index', `the embedder returned vectors of ${[...dims].join(' and ')} dimensions in one batch`);
    return byText;
  }

  // ---- sweep / compact -----------------------------------------------------------------------
  async function indexView(): Promise<{ index: IdVectorIndex; transient: boolean }> {
    if (typeof indexed[ID_INDEX] === 'function') return { index: indexed[ID_INDEX](), transient: false };
    if (ownIndex) return { index: ownIndex, transient: false };
    const index = new IdVectorIndex();
    const items: Array<{ id: string; vector: Float32Array }> = [];
    if (typeof store.allEmbeddings === 'function') {
      for (const { id, embedding } of await store.allEmbeddings()) {
        if (mirror.has(id)) items.push({ id, vector: toEmbedding(embedding, 'embedding', dim ?? undefined) });
      }
    } else {
      for (const id of mirror.keys()) {
        const v = await storedEmbedding(id);
        if (v) items.push({ id, vector: v });
      }
    }
    index.setMany(items);
    return { index, transient: true };
  }

  function ranked(slot: Slot): Ranked {
    return { entry: slot.entry, seq: slot.seq };
  }

  async function sweepImpl(options: SweepOptions | undefined): Promise<SweepResult> {
    const t0 = now();
    const t = sweepThreshold(options?.threshold, opts.threshold);
    const scanned = mirror.size;
    const view = await indexView();
    const result: SweepResult = { duplicatePairs: [], duplicateCount: 0, evictedCount: 0, evictedIds: [], totalScanned: scanned, durationMs: 0 };
    try {
      for (const [a, b, s] of view.index.pairs(t)) {
        const sa = mirror.get(a);
        const sb = mirror.get(b);
        if (!sa || !sb) continue;
        const [cand, match] = sa.seq > sb.seq ? [sa, sb] : [sb, sa];
        await transact(async (tx, events) => {
          const res = resolve(opts.mergePolicy, ranked(cand), ranked(match), s);
          const winner = res.winner === 'candidate' ? cand : match;
          const loserSlot = res.winner === 'candidate' ? match : cand;
          events.push(['duplicate-found', { entry: cand.entry, matchId: match.entry.id, similarity: s, classification: s >= opts.exactThreshold ? 'exact_duplicate' : 'semantic_duplicate', hashMatch: false, source: 'sweep' }]);
          if (!sameEntry(res.survivor, winner.entry)) {
            const { vector, n } = await survivorVector(res.survivor, [
              { norm: winner.norm, vector: () => storedEmbedding(winner.entry.id) },
              { norm: loserSlot.norm, vector: () => storedEmbedding(loserSlot.entry.id) },
            ]);
            await tx.put(res.survivor, vector, n, winner.seq);
          }
          await tx.remove(loserSlot.entry.id);
          events.push(['evicted', { id: loserSlot.entry.id, entry: loserSlot.entry, survivorId: winner.entry.id, reason: 'sweep', wasStored: true, similarity: s }]);
          events.push(['merged', { survivorId: winner.entry.id, survivor: res.survivor, mergedIds: [loserSlot.entry.id], similarity: s, source: 'sweep' }]);
          result.duplicatePairs.push([winner.entry.id, loserSlot.entry.id]);
          result.evictedIds.push(loserSlot.entry.id);
        });
      }
    } finally {
      if (view.transient) view.index.clear();
    }
    return finishScan(result, t0);
  }

  /** Fills the counts and timing every scan result reports. */
  function finishScan<R extends SweepResult>(result: R, t0: number): R {
    result.duplicateCount = result.duplicatePairs.length;
    result.evictedCount = result.evictedIds.length;
    result.durationMs = now() - t0;
    counters.durationMs += result.durationMs;
    return result;
  }

  async function compactImpl(options: SweepOptions | undefined): Promise<CompactResult> {
    const t0 = now();
    const t = sweepThreshold(options?.threshold, opts.threshold);
    const scanned = mirror.size;
    const view = await indexView();
    const result: CompactResult = { duplicatePairs: [], duplicateCount: 0, evictedCount: 0, evictedIds: [], totalScanned: scanned, durationMs: 0, clustersFound: 0, mergedCount: 0 };
    const score = (a: string, b: string): number => view.index.score(a, b) ?? -1;
    const fold = (members: Slot[]): Ranked => {
      let acc = ranked(members[0]!);
      for (const m of members.slice(1)) {
        const res = resolve(opts.mergePolicy, ranked(m), acc, score(m.entry.id, acc.entry.id));
        acc = { entry: res.survivor, seq: res.winner === 'candidate' ? m.seq : acc.seq };
      }
      return acc;
    };
    try {
      for (const ids of view.index.clusters(t)) {
        const members = ids.map((id) => mirror.get(id)).filter((s): s is Slot => s !== undefined).sort((x, y) => x.seq - y.seq);
        if (members.length < 2) continue;
        let folded = fold(members);
        const keeper = mirror.get(folded.entry.id)!;
        const { vector, n } = await survivorVector(folded.entry, members.map((m) => ({ norm: m.norm, vector: () => storedEmbedding(m.entry.id) })));
        const novel = n.text !== keeper.norm;
        const within = members.filter((m) => {
          if (m === keeper) return false;
          const s = novel ? cosineSimilarity(vector, view.index.get(m.entry.id) ?? vector) : score(keeper.entry.id, m.entry.id);
          return s >= t;
        });
        if (within.length === 0) continue;
        if (within.length < members.length - 1) {
          // Members too far from the survivor stay; the survivor merges only those within reach.
          const again = fold([keeper, ...within].sort((x, y) => x.seq - y.seq));
          folded = again.entry.id === keeper.entry.id && again.entry.content === folded.entry.content ? again : ranked(keeper);
        }
        await transact(async (tx, events) => {
          if (!sameEntry(folded.entry, keeper.entry)) await tx.put(folded.entry, vector, n, keeper.seq);
          for (const m of within) {
            const s = score(keeper.entry.id, m.entry.id);
            events.push(['duplicate-found', { entry: m.entry, matchId: keeper.entry.id, similarity: s, classification: s >= opts.exactThreshold ? 'exact_duplicate' : 'semantic_duplicate', hashMatch: false, source: 'compact' }]);
            await tx.remove(m.entry.id);
            events.push(['evicted', { id: m.entry.id, entry: m.entry, survivorId: keeper.entry.id, reason: 'compact', wasStored: true, similarity: s }]);
            result.duplicatePairs.push([keeper.entry.id, m.entry.id]);
            result.evictedIds.push(m.entry.id);
          }
          events.push(['merged', { survivorId: keeper.entry.id, survivor: folded.entry, mergedIds: within.map((m) => m.entry.id), similarity: Math.min(...within.map((m) => score(keeper.entry.id, m.entry.id))), source: 'compact' }]);
        });
        result.clustersFound++;
        result.mergedCount += within.length;
      }
    } finally {
      if (view.transient) view.index.clear();
    }
    return finishScan(result, t0);
  }

  // ---- the public object ---------------------------------------------------------------------
  return {
    check(entry) {
      validateEntry(entry);
      return serial(async () => {
        const t0 = now();
        return baseResult(await probe(entry, false), t0);
      });
    },
    add(entry) {
      validateEntry(entry);
      return serial(() => addOne(entry));
    },
    addBatch(entries) {
      if (!Array.isArray(entries)) throw new DedupTypeError('entries', 'must be an array of entries');
      entries.forEach((e, i) => validateEntry(e, `entries[${i}]`));
      return serial(async () => {
        const t0 = now();
        const vectors = await embedBatch(entries);
        const results: AddResult[] = [];
        for (const e of entries) {
          const pre = vectors.get(normalizeMemoryText(e.content).text);
          results.push(await addOne(e, pre));
        }
        const duplicates = results.filter((r) => r.action !== 'added').length;
        return { results, totalProcessed: results.length, uniqueAdded: results.length - duplicates, duplicatesFound: duplicates, durationMs: now() - t0 } satisfies BatchResult;
      });
    },
    sweep: (o) => serial(() => sweepImpl(o)),
    compact: (o) => serial(() => compactImpl(o)),
    getEntries() {
      requireLoaded('getEntries');
      return [...mirror.values()].sort((a, b) => a.seq - b.seq).map((s) => s.entry);
    },
    remove(id) {
      if (typeof id !== 'string') throw new DedupTypeError('id', 'must be a string');
      return serial(() =>
        transact(async (tx, events) => {
          const prev = await tx.remove(id);
          if (prev) events.push(['evicted', { id, entry: prev.entry, survivorId: null, reason: 'removed', wasStored: true }]);
        }),
      );
    },
    clear() {
      return serial(async () => {
        const gone = emitter.has('evicted') ? [...mirror.values()].map((s) => s.entry) : [];
        await store.clear();
        mirror.clear();
        byHash.clear();
        ownIndex?.clear();
        dim = typeof fixedDim === 'number' ? fixedDim : null;
        Object.assign(counters, { totalChecks: 0, exactDuplicates: 0, semanticDuplicates: 0, uniqueEntries: 0, durationMs: 0 });
        for (const entry of gone) emitter.emit('evicted', { id: entry.id, entry, survivorId: null, reason: 'cleared', wasStored: true });
      });
    },
    stats() {
      requireLoaded('stats');
      return { totalEntries: mirror.size, ...counters } satisfies DedupStats;
    },
    size() {
      requireLoaded('size');
      return mirror.size;
    },
    ready: () => serial(async () => undefined),
    on: (event, fn) => emitter.on(event, fn),
    off: (event, fn) => emitter.off(event, fn),
  };
}
