/**
 * A LanceDB store for memory dedup (`dedup-wasm/lancedb`): entries, embeddings and hashes persist
 * in a LanceDB table, and similarity queries are answered by LanceDB's vector search with cosine
 * distance. Needs the optional peer dependencies `@lancedb/lancedb` (0.31) and `apache-arrow`.
 * @module
 */
import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Float64, Schema, Utf8 } from 'apache-arrow';
import { DedupRangeError, DedupTypeError } from '../errors.js';
import { toEmbedding } from '../memory/core.js';
import type { EmbeddingVector, MemoryEntry, StoreBackend, StoreMatch } from '../memory/types.js';

/** Options of {@link createLanceDbStore}. */
export interface LanceDbStoreOptions {
  /** Where the database lives (a directory, or any URI LanceDB accepts). Ignored when `connection` is given. */
  uri?: string;
  /** An open LanceDB connection to use instead of `uri`. */
  connection?: lancedb.Connection;
  /** Table name (default `memories`). Created on the first add when it does not exist. */
  tableName?: string;
}

interface Cached {
  entry: MemoryEntry;
  hash: string;
  seq: number;
}

interface Row {
  id: string;
  content: string;
  metadata: string | null;
  hash: string;
  seq: number;
  vector: ArrayLike<number> | { toArray(): ArrayLike<number> };
}

/** A SQL string literal for LanceDB filters. */
function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function vectorOf(v: Row['vector']): Float32Array {
  const arr = typeof (v as { toArray?: unknown }).toArray === 'function' ? (v as { toArray(): ArrayLike<number> }).toArray() : (v as ArrayLike<number>);
  return arr instanceof Float32Array ? arr : Float32Array.from(arr);
}

function schemaFor(dim: number): Schema {
  return new Schema([
    new Field('id', new Utf8(), false),
    new Field('content', new Utf8(), false),
    new Field('metadata', new Utf8(), true),
    new Field('hash', new Utf8(), false),
    new Field('seq', new Float64(), false),
    new Field('vector', new FixedSizeList(dim, new Field('item', new Float32(), true)), false),
  ]);
}

/**
 * A {@link StoreBackend} over a LanceDB table. Open it with {@link createLanceDbStore}.
 *
 * Entries (id, content, metadata as JSON), their content hash, their insertion order and their
 * embedding are rows of the table; `search` is LanceDB's vector search with cosine distance
 * (similarity = 1 − distance). Ids, contents and hashes are also kept in memory for synchronous
 * reads; embeddings stay in LanceDB.
 */
export class LanceDbStore implements StoreBackend {
  private table: lancedb.Table | null;
  private readonly cache = new Map<string, Cached>();
  private readonly byHash = new Map<string, Set<string>>();
  private nextSeq = 0;
  /** Dimension of the table's vectors, or null before the table exists. */
  dimension: number | null = null;

  /** @internal Use {@link createLanceDbStore}. */
  constructor(
    private readonly db: lancedb.Connection,
    private readonly tableName: string,
    table: lancedb.Table | null,
  ) {
    this.table = table;
  }

  /** @internal Loads ids, contents and hashes of an existing table. */
  async load(): Promise<void> {
    if (!this.table) return;
    const schema = await this.table.schema();
    const vf = schema.fields.find((f) => f.name === 'vector');
    const type = vf?.type as { listSize?: number } | undefined;
    if (!vf || typeof type?.listSize !== 'number') {
      throw new DedupTypeError('tableName', 'must name a table with a fixed-size vector column', `table '${this.tableName}' has no fixed-size 'vector' column`);
    }
    this.dimension = type.listSize;
    const rows = (await this.table.query().select(['id', 'content', 'metadata', 'hash', 'seq']).toArray()) as Row[];
    rows.sort((a, b) => a.seq - b.seq);
    for (const r of rows) this.remember(this.toEntry(r), r.hash, r.seq);
  }

  private toEntry(r: Row): MemoryEntry {
    const entry: MemoryEntry = { id: r.id, content: r.content };
    if (r.metadata !== null && r.metadata !== undefined) entry.metadata = JSON.parse(r.metadata) as Record<string, unknown>;
    return entry;
  }

  private remember(entry: MemoryEntry, hash: string, seq: number): void {
    this.forget(entry.id);
    this.cache.set(entry.id, { entry, hash, seq });
    let ids = this.byHash.get(hash);
    if (!ids) this.byHash.set(hash, (ids = new Set()));
    ids.add(entry.id);
    this.nextSeq = Math.max(this.nextSeq, seq + 1);
  }

  private forget(id: string): void {
    const old = this.cache.get(id);
    if (!old) return;
    this.cache.delete(id);
    const ids = this.byHash.get(old.hash);
    ids?.delete(id);
    if (ids && ids.size === 0) this.byHash.delete(old.hash);
  }

  async add(entry: MemoryEntry, embedding: EmbeddingVector, hash: string): Promise<void> {
    const vector = toEmbedding(embedding, 'embedding', this.dimension ?? undefined);
    const seq = this.nextSeq;
    const row = {
      id: entry.id,
      content: entry.content,
      metadata: entry.metadata === undefined ? null : JSON.stringify(entry.metadata),
      hash,
      seq,
      vector: Array.from(vector),
    };
    if (!this.table) {
      this.table = await this.db.createEmptyTable(this.tableName, schemaFor(vector.length), { existOk: true });
      this.dimension = vector.length;
    }
    await this.table.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute([row]);
    this.remember(entry, hash, seq);
  }

  get(id: string): MemoryEntry | null {
    return this.cache.get(id)?.entry ?? null;
  }

  async remove(id: string): Promise<void> {
    if (!this.cache.has(id) || !this.table) return;
    await this.table.delete(`id = ${literal(id)}`);
    this.forget(id);
  }

  /** Entries in insertion order. */
  all(): MemoryEntry[] {
    return [...this.cache.values()].sort((a, b) => a.seq - b.seq).map((c) => c.entry);
  }

  async getEmbedding(id: string): Promise<Float32Array | null> {
    if (!this.cache.has(id) || !this.table) return null;
    const rows = (await this.table.query().where(`id = ${literal(id)}`).select(['vector']).limit(1).toArray()) as Row[];
    return rows[0] ? vectorOf(rows[0].vector) : null;
  }

  getHash(hash: string): string | null {
    const ids = this.byHash.get(hash);
    return ids && ids.size > 0 ? ids.values().next().value! : null;
  }

  size(): number {
    return this.cache.size;
  }

  async clear(): Promise<void> {
    if (this.table) await this.table.delete('true');
    this.cache.clear();
    this.byHash.clear();
  }

  /** The `k` nearest entries by cosine distance, through LanceDB's vector search. */
  async search(embedding: Float32Array, k: number): Promise<StoreMatch[]> {
    if (!this.table || this.cache.size === 0) return [];
    const rows = (await this.table.vectorSearch(Array.from(embedding)).distanceType('cosine').select(['id', '_distance']).limit(k).toArray()) as Array<{ id: string; _distance: number }>;
    return rows.map((r) => ({ id: r.id, similarity: 1 - r._distance }));
  }

  /** Every stored embedding in one query (used by sweep and compact). */
  async allEmbeddings(): Promise<Array<{ id: string; embedding: Float32Array }>> {
    if (!this.table) return [];
    const rows = (await this.table.query().select(['id', 'vector']).toArray()) as Row[];
    return rows.map((r) => ({ id: r.id, embedding: vectorOf(r.vector) }));
  }

  /** Closes the table (the connection is the caller's when it was passed in). */
  close(): void {
    this.table?.close();
  }
}

/**
 * Opens (or prepares) a LanceDB-backed store. The table is created on the first add, with the
 * dimension of that embedding; an existing table is loaded, so a deduplicator over it sees every
 * entry stored before a restart.
 *
 * ```ts
 * const store = await createLanceDbStore({ uri: './memory-db' });
 * const dedup = createDeduplicator({ store, embedder });
 * ```
 */
export async function createLanceDbStore(options: LanceDbStoreOptions): Promise<LanceDbStore> {
  if (typeof options !== 'object' || options === null) throw new DedupTypeError('options', 'must be an object');
  const tableName = options.tableName ?? 'memories';
  if (typeof tableName !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(tableName)) {
    throw new DedupRangeError('tableName', 'must be letters, digits, _, - or .', `invalid tableName ${JSON.stringify(tableName)}`);
  }
  let db = options.connection;
  if (!db) {
    if (typeof options.uri !== 'string' || options.uri.length === 0) throw new DedupTypeError('uri', 'must be a non-empty string when no connection is given');
    db = await lancedb.connect(options.uri);
  }
  const names = await db.tableNames();
  const table = names.includes(tableName) ? await db.openTable(tableName) : null;
  const store = new LanceDbStore(db, tableName, table);
  await store.load();
  return store;
}
