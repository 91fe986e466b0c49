import { endianness } from 'node:os';
import type { Kysely, Transaction } from 'kysely';
import { VectorMatrix } from './wasm/dot-scanner.js';
import { NotaryError } from '../core/errors.js';
import type { Storage } from '../storage/db.js';
import type { Database } from '../storage/schema.js';
import { ApproximateSearch, type ApproximateSearchOptions } from './ann-search.js';
import type { PassageVector, VectorHit, VectorIndex, VectorIndexStats, VectorSearchOptions } from './vector-index.js';

export interface SqlVectorIndexOptions {
  /** Embedding model name; rows written by another model (or with other dimensions) are stale to this index. */
  model: string;
  dimensions: number;
  /**
   * Approximate search (HNSW) from `above` vectors on (indexer/ann-search.ts); absent or above 0: exact only.
   * `directory`: the graph of this model is saved there and loaded at the next start instead of built.
   */
  ann?: Omit<ApproximateSearchOptions, 'dimensions' | 'persist'> & { directory?: string };
}

/** Rows per INSERT and ids per IN list: well under SQLite's and PostgreSQL's bound-parameter limits. */
const WRITE_CHUNK = 500;
const ID_CHUNK = 1000;
/** Vectors fetched per query while (re)loading the cache. */
const LOAD_CHUNK = 2000;

const LITTLE_ENDIAN = endianness() === 'LE';

type Db = Kysely<Database> | Transaction<Database>;

/** Little-endian float32 bytes of a vector (a copy: the caller may reuse its array). */
export function encodeVector(vector: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength));
  const out = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i]!, i * 4);
  return out;
}

/** Decodes `dimensions` little-endian float32 values from `bytes` into `target` starting at element `offset`. */
function decodeInto(bytes: Uint8Array, target: Float32Array, offset: number, dimensions: number): void {
  if (bytes.byteLength !== dimensions * 4) {
    throw new NotaryError('internal_error', `stored vector has ${bytes.byteLength} bytes, expected ${dimensions * 4}`);
  }
  if (LITTLE_ENDIAN) {
    new Uint8Array(target.buffer, target.byteOffset + offset * 4, bytes.byteLength).set(bytes);
    return;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < dimensions; i++) target[offset + i] = view.getFloat32(i * 4, true);
}

export function decodeVector(bytes: Uint8Array, dimensions: number): Float32Array {
  const out = new Float32Array(dimensions);
  decodeInto(bytes, out, 0, dimensions);
  return out;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/**
 * This model's vectors in memory: row i is matrix[i*d .. (i+1)*d), with its passage id, page id and the write
 * generation (seq) that stored it. `maxSeq` and `size` are what the database said when the cache was last known
 * to equal it; every database row with seq <= maxSeq is in the cache with the same content.
 */
class VectorCache {
  readonly store: VectorMatrix;
  ids: Float64Array;
  pageIds: Float64Array;
  seqs: Float64Array;
  size = 0;
  maxSeq = 0;
  /** passage_vector_changes when the cache was last known current (SQLite); null: unknown, check the rows. */
  stamp: number | null = null;
  readonly position = new Map<number, number>();

  constructor(
    readonly dimensions: number,
    capacity: number,
  ) {
    const cap = Math.max(16, capacity);
    this.store = new VectorMatrix(dimensions, cap);
    this.ids = new Float64Array(cap);
    this.pageIds = new Float64Array(cap);
    this.seqs = new Float64Array(cap);
  }

  private grow(): void {
    const cap = this.ids.length * 2;
    this.store.reserve(cap);
    for (const key of ['ids', 'pageIds', 'seqs'] as const) {
      const next = new Float64Array(cap);
      next.set(this[key]);
      this[key] = next;
    }
  }

  /** Row i is matrix[i*d .. (i+1)*d); a new view after the cache grows. */
  get matrix(): Float32Array {
    return this.store.matrix;
  }

  /** Inserts or overwrites; returns the row. */
  put(id: number, pageId: number, seq: number): number {
    let row = this.position.get(id);
    if (row === undefined) {
      if (this.size === this.ids.length) this.grow();
      row = this.size++;
      this.position.set(id, row);
      this.ids[row] = id;
    }
    this.pageIds[row] = pageId;
    this.seqs[row] = seq;
    return row;
  }

  /** Removes by moving the last row into the hole; returns whether the id was present. */
  remove(id: number): boolean {
    const row = this.position.get(id);
    if (row === undefined) return false;
    const last = this.size - 1;
    if (row !== last) {
      const d = this.dimensions;
      this.matrix.copyWithin(row * d, last * d, last * d + d);
      const lastId = this.ids[last]!;
      this.ids[row] = lastId;
      this.pageIds[row] = this.pageIds[last]!;
      this.seqs[row] = this.seqs[last]!;
      this.position.set(lastId, row);
    }
    this.position.delete(id);
    this.size = last;
    return true;
  }

  highestSeq(): number {
    let max = 0;
    for (let i = 0; i < this.size; i++) if (this.seqs[i]! > max) max = this.seqs[i]!;
    return max;
  }
}

/**
 * Candidate rows ordered best first: higher score, then lower id. A bounded binary heap keeps the best `k` while
 * scanning, so a search costs O(N log k) rather than sorting all N scores.
 */
function topK(scores: Float32Array, ids: Float64Array, n: number, k: number): number[] {
  const heap = new Int32Array(Math.min(k, n));
  let size = 0;
  // "a is worse than b": the heap root is the worst kept candidate.
  const worse = (a: number, b: number): boolean => {
    const sa = scores[a]!;
    const sb = scores[b]!;
    return sa < sb || (sa === sb && ids[a]! > ids[b]!);
  };
  const siftDown = (start: number): void => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) return;
      const right = left + 1;
      const worst = right < size && worse(heap[right]!, heap[left]!) ? right : left;
      if (!worse(heap[worst]!, heap[i]!)) return;
      const tmp = heap[i]!;
      heap[i] = heap[worst]!;
      heap[worst] = tmp;
      i = worst;
    }
  };
  for (let row = 0; row < n; row++) {
    if (size < heap.length) {
      let i = size++;
      heap[i] = row;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[parent]!)) break;
        const tmp = heap[i]!;
        heap[i] = heap[parent]!;
        heap[parent] = tmp;
        i = parent;
      }
    } else if (size > 0) {
      const root = heap[0]!;
      const s = scores[row]!;
      const rs = scores[root]!;
      if (s > rs || (s === rs && ids[row]! < ids[root]!)) {
        heap[0] = row;
        siftDown(0);
      }
    }
  }
  const out = Array.from(heap.subarray(0, size));
  out.sort((a, b) => scores[b]! - scores[a]! || ids[a]! - ids[b]!);
  return out;
}

/** Dot product of the query with every cached row (a view valid until the next scan). */
function scoreAll(cache: VectorCache, query: Float32Array): Float32Array {
  return cache.store.scores(query, cache.size);
}

/**
 * Passage embeddings in the `passage_vectors` table (SQLite or PostgreSQL), searched by exact brute force over an
 * in-memory copy of this model's vectors. The copy is loaded on the first search and re-validated before every
 * search with one query (`count(*)`, `max(seq)` of this model): every write bumps a generation counter in the same
 * transaction and stamps its rows with it, so any insert or replacement raises max(seq), and any deletion —
 * including ON DELETE CASCADE from passages, which runs none of this code — lowers the count. When either differs,
 * only the ids and the vectors written since are read again.
 */
export class SqlVectorIndex implements VectorIndex {
  readonly name = 'sql-exact';
  readonly model: string;
  readonly dimensions: number;
  private readonly db: Kysely<Database>;
  private cache: VectorCache | null = null;
  /** passage_vector_changes is kept by triggers (SQLite only). */
  private readonly countsChanges: boolean;
  /** Serialises this instance's operations so the cache is only ever changed by one of them at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** The approximate path: null when exact only. */
  readonly approximate: ApproximateSearch | null;

  constructor(storage: Storage, options: SqlVectorIndexOptions) {
    if (!options.model) throw new NotaryError('invalid_config', 'vector index needs a model name');
    if (!Number.isInteger(options.dimensions) || options.dimensions <= 0) {
      throw new NotaryError('invalid_config', `vector dimensions must be a positive integer, got ${options.dimensions}`);
    }
    this.db = storage.db;
    this.countsChanges = storage.dialect === 'sqlite';
    this.model = options.model;
    this.dimensions = options.dimensions;
    const { directory, ...ann } = options.ann ?? { above: 0 };
    this.approximate =
      ann.above > 0
        ? new ApproximateSearch({ ...ann, dimensions: options.dimensions, ...(directory ? { persist: { directory, model: options.model } } : {}) })
        : null;
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new NotaryError('internal_error', 'vector index is closed');
      return fn();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private checkVector(vector: unknown, what: string): Float32Array {
    if (!(vector instanceof Float32Array)) throw new NotaryError('invalid_request', `${what} is not a Float32Array`);
    if (vector.length !== this.dimensions) {
      throw new NotaryError('invalid_request', `${what} has ${vector.length} dimensions, expected ${this.dimensions}`);
    }
    for (let i = 0; i < vector.length; i++) {
      if (!Number.isFinite(vector[i])) throw new NotaryError('invalid_request', `${what} has a non-finite value at ${i}`);
    }
    return vector;
  }

  private checkIds(ids: readonly number[]): void {
    for (const id of ids) {
      if (!Number.isSafeInteger(id)) throw new NotaryError('invalid_request', `passage id must be an integer, got ${id}`);
    }
  }

  /** Increments the write generation; holding its row lock until commit orders concurrent writers. */
  private async bumpGeneration(trx: Transaction<Database>): Promise<number> {
    const row = await trx
      .updateTable('passage_vector_generation')
      .set((eb) => ({ generation: eb('generation', '+', 1) }))
      .where('id', '=', 1)
      .returning('generation')
      .executeTakeFirstOrThrow();
    return Number(row.generation);
  }

  private async fingerprint(db: Db): Promise<{ count: number; maxSeq: number }> {
    const row = await db
      .selectFrom('passage_vectors')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.max('seq').as('m')])
      .where('model', '=', this.model)
      .where('dimensions', '=', this.dimensions)
      .executeTakeFirstOrThrow();
    return { count: Number(row.n), maxSeq: row.m === null ? 0 : Number(row.m) };
  }

  /**
   * SQLite: the count of rows ever inserted, updated or deleted in passage_vectors (any model, by triggers), read
   * from one row; equal counts mean nothing changed in between. Null on PostgreSQL (no triggers: see the migration).
   */
  private async writeStamp(db: Db): Promise<number | null> {
    if (!this.countsChanges) return null;
    const row = await db.selectFrom('passage_vector_changes').select('changes').where('id', '=', 1).executeTakeFirstOrThrow();
    return Number(row.changes);
  }

  private async cacheIsCurrent(db: Db): Promise<boolean> {
    const cache = this.cache;
    if (!cache) return false;
    const { count, maxSeq } = await this.fingerprint(db);
    return count === cache.size && maxSeq === cache.maxSeq;
  }

  async upsert(items: readonly PassageVector[]): Promise<void> {
    const byId = new Map<number, PassageVector>();
    items.forEach((item, i) => {
      if (!Number.isSafeInteger(item.id) || !Number.isSafeInteger(item.pageId)) {
        throw new NotaryError('invalid_request', `vector ${i}: id and pageId must be integers`);
      }
      this.checkVector(item.vector, `vector for passage ${item.id}`);
      byId.set(item.id, item);
    });
    if (byId.size === 0) return;
    const unique = [...byId.values()];
    await this.exclusive(async () => {
      const { seq, inSync, stamp } = await this.db.transaction().execute(async (trx) => {
        const seq = await this.bumpGeneration(trx);
        const inSync = await this.cacheIsCurrent(trx);
        for (const chunk of chunks(unique, WRITE_CHUNK)) {
          await trx
            .insertInto('passage_vectors')
            .values(
              chunk.map((item) => ({
                passage_id: item.id,
                page_id: item.pageId,
                model: this.model,
                dimensions: this.dimensions,
                seq,
                vector: encodeVector(item.vector),
              })),
            )
            .onConflict((oc) =>
              oc.column('passage_id').doUpdateSet((eb) => ({
                page_id: eb.ref('excluded.page_id'),
                model: eb.ref('excluded.model'),
                dimensions: eb.ref('excluded.dimensions'),
                seq: eb.ref('excluded.seq'),
                vector: eb.ref('excluded.vector'),
              })),
            )
            .execute();
        }
        // SQLite has one writer: the count after this write is exact for the cache updated below.
        return { seq, inSync, stamp: await this.writeStamp(trx) };
      });
      const cache = this.cache;
      if (!cache) return;
      if (!inSync) return; // Someone else changed the table too: the next search reloads what changed.
      const d = this.dimensions;
      for (const item of unique) {
        const row = cache.put(item.id, item.pageId, seq);
        cache.matrix.set(item.vector, row * d);
      }
      cache.maxSeq = seq;
      cache.stamp = stamp;
      this.approximate?.upserted(cache, unique.map((item) => item.id));
    });
  }

  /** Removes the vectors of these passages, whichever model wrote them. */
  async delete(ids: readonly number[]): Promise<void> {
    this.checkIds(ids);
    const unique = [...new Set(ids)];
    if (unique.length === 0) return;
    await this.exclusive(async () => {
      const { inSync, stamp } = await this.db.transaction().execute(async (trx) => {
        await this.bumpGeneration(trx);
        const inSync = await this.cacheIsCurrent(trx);
        for (const chunk of chunks(unique, ID_CHUNK)) {
          await trx.deleteFrom('passage_vectors').where('passage_id', 'in', chunk).execute();
        }
        return { inSync, stamp: await this.writeStamp(trx) };
      });
      const cache = this.cache;
      if (!cache || !inSync) return;
      let removedNewest = false;
      for (const id of unique) {
        const row = cache.position.get(id);
        if (row !== undefined && cache.seqs[row] === cache.maxSeq) removedNewest = true;
        cache.remove(id);
      }
      if (removedNewest) cache.maxSeq = cache.highestSeq();
      cache.stamp = stamp;
      this.approximate?.removed(cache, unique);
    });
  }

  async vectors(ids: readonly number[]): Promise<Map<number, Float32Array>> {
    this.checkIds(ids);
    const unique = [...new Set(ids)];
    // A process that searches holds every vector already: copies from the cache, once it is known current.
    if (this.cache) {
      return this.exclusive(async () => {
        const cache = await this.refresh();
        const d = this.dimensions;
        const out = new Map<number, Float32Array>();
        for (const id of unique) {
          const row = cache.position.get(id);
          if (row !== undefined) out.set(id, cache.matrix.slice(row * d, row * d + d));
        }
        return out;
      });
    }
    const out = new Map<number, Float32Array>();
    for (const chunk of chunks(unique, ID_CHUNK)) {
      const rows = await this.db
        .selectFrom('passage_vectors')
        .select(['passage_id', 'vector'])
        .where('passage_id', 'in', chunk)
        .where('model', '=', this.model)
        .where('dimensions', '=', this.dimensions)
        .execute();
      for (const row of rows) out.set(Number(row.passage_id), decodeVector(row.vector, this.dimensions));
    }
    return out;
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]> {
    const query = this.checkVector(vector, 'query vector');
    const limit = Math.floor(options.limit);
    if (Number.isNaN(limit)) throw new NotaryError('invalid_request', `search limit must be a number, got ${options.limit}`);
    let perPage = Infinity;
    if (options.perPageLimit !== undefined) {
      perPage = Math.floor(options.perPageLimit);
      if (Number.isNaN(perPage)) throw new NotaryError('invalid_request', `perPageLimit must be a number, got ${options.perPageLimit}`);
      perPage = Math.max(1, perPage);
    }
    if (limit <= 0) return [];
    return this.exclusive(async () => {
      const cache = await this.refresh();
      if (cache.size === 0) return [];
      if (!options.pageIds && this.approximate) {
        const hits = await this.approximate.search(cache, query, limit, perPage);
        if (hits) return hits;
      }
      const scores = scoreAll(cache, query);
      if (options.pageIds) {
        // Every passage of these pages, best first (the scan scores all of them anyway).
        const pages = new Set(options.pageIds);
        const rows: number[] = [];
        for (let row = 0; row < cache.size; row++) if (pages.has(cache.pageIds[row]!)) rows.push(row);
        rows.sort((a, b) => scores[b]! - scores[a]! || cache.ids[a]! - cache.ids[b]!);
        const perPageCount = new Map<number, number>();
        const out: VectorHit[] = [];
        for (const row of rows) {
          const pageId = cache.pageIds[row]!;
          const used = perPageCount.get(pageId) ?? 0;
          if (used >= perPage) continue;
          perPageCount.set(pageId, used + 1);
          out.push({ id: cache.ids[row]!, pageId, score: scores[row]! });
          if (out.length === limit) break;
        }
        return out;
      }
      return selectHits(cache, scores, limit, perPage);
    });
  }

  /** Brings the cache up to date with the table (one query when nothing changed). */
  private async refresh(): Promise<VectorCache> {
    const cache = this.cache;
    if (cache) {
      // The stamp first: a write after it changes the stamp the next search reads, whatever the rows say now.
      const stamp = await this.writeStamp(this.db);
      if (stamp !== null && cache.stamp === stamp) return cache;
      if (await this.cacheIsCurrent(this.db)) {
        cache.stamp = stamp;
        return cache;
      }
    }
    const next = (await this.load(this.cache)) ?? (await this.load(null));
    if (!next) throw new NotaryError('internal_error', 'vector index could not load a consistent snapshot');
    await this.approximate?.reloaded(this.cache, next);
    this.cache = next;
    return next;
  }

  /**
   * Reads the table into a new cache, reusing the vectors of `previous` for rows not rewritten since it was loaded.
   * Null when `previous` turns out to lack such a row (only possible if rows were written bypassing this class).
   */
  private async load(previous: VectorCache | null): Promise<VectorCache | null> {
    const known = previous ? previous.maxSeq : -1;
    // One snapshot for the id list and the vector chunks (SQLite: a read transaction; PostgreSQL: repeatable read).
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const stamp = await this.writeStamp(trx);
        const rows = await trx
          .selectFrom('passage_vectors')
          .select(['passage_id', 'page_id', 'seq'])
          .where('model', '=', this.model)
          .where('dimensions', '=', this.dimensions)
          .orderBy('passage_id')
          .execute();
        const cache = new VectorCache(this.dimensions, rows.length);
        const d = this.dimensions;
        let fetch = 0;
        for (const row of rows) {
          const id = Number(row.passage_id);
          const seq = Number(row.seq);
          const at = cache.put(id, Number(row.page_id), seq);
          if (seq > cache.maxSeq) cache.maxSeq = seq;
          if (seq > known) {
            fetch++;
            continue;
          }
          // Unchanged since the previous load: rows with seq <= its maxSeq are in it with the same content.
          const from = previous?.position.get(id);
          if (previous === null || from === undefined) return null;
          cache.matrix.set(previous.matrix.subarray(from * d, from * d + d), at * d);
        }
        let after = 0;
        // Most rows to read (a first load): walk the primary key and skip other rows here. Filtering on the
        // (model, dimensions, seq) index instead makes each chunk sort every remaining row with its vector, which is
        // quadratic (11 minutes for a million vectors on SQLite in bench:scale).
        const walkPrimaryKey = fetch > rows.length / 4;
        while (fetch > 0) {
          let query = trx
            .selectFrom('passage_vectors')
            .select(['passage_id', 'model', 'dimensions', 'seq', 'vector'])
            .where('passage_id', '>', after);
          if (!walkPrimaryKey) {
            query = query.where('model', '=', this.model).where('dimensions', '=', this.dimensions).where('seq', '>', known);
          }
          const batch = await query.orderBy('passage_id').limit(LOAD_CHUNK).execute();
          if (batch.length === 0) break;
          for (const row of batch) {
            const id = Number(row.passage_id);
            after = id;
            if (row.model !== this.model || Number(row.dimensions) !== this.dimensions || Number(row.seq) <= known) continue;
            const at = cache.position.get(id);
            if (at === undefined) throw new NotaryError('internal_error', `passage ${id} appeared mid-snapshot`);
            decodeInto(row.vector, cache.matrix, at * d, d);
            fetch--;
          }
        }
        cache.stamp = stamp;
        return cache;
      });
  }

  async missing(limit: number): Promise<number[]> {
    const n = Math.floor(limit);
    if (Number.isNaN(n)) throw new NotaryError('invalid_request', `limit must be a number, got ${limit}`);
    if (n <= 0) return [];
    const rows = await this.db
      .selectFrom('passages')
      .leftJoin('passage_vectors as v', (join) =>
        join
          .onRef('v.passage_id', '=', 'passages.id')
          .on('v.model', '=', this.model)
          .on('v.dimensions', '=', this.dimensions),
      )
      .select('passages.id')
      .where('v.passage_id', 'is', null)
      .orderBy('passages.id')
      .limit(n)
      .execute();
    return rows.map((r) => Number(r.id));
  }

  async stats(): Promise<VectorIndexStats> {
    const total = await this.db
      .selectFrom('passage_vectors')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const { count } = await this.fingerprint(this.db);
    return {
      backend: this.name,
      model: this.model,
      dimensions: this.dimensions,
      vectors: count,
      stale: Number(total.n) - count,
    };
  }

  async close(): Promise<void> {
    await this.queue;
    this.closed = true;
    this.cache = null;
    await this.approximate?.close();
  }
}

/** The best `limit` rows, at most `perPage` of them from one page, best first (ties: lower id). */
function selectHits(cache: VectorCache, scores: Float32Array, limit: number, perPage: number): VectorHit[] {
  const n = cache.size;
  const hit = (row: number): VectorHit => ({ id: cache.ids[row]!, pageId: cache.pageIds[row]!, score: scores[row]! });
  if (perPage >= limit) return topK(scores, cache.ids, n, limit).map(hit);
  // Take candidates best first, skipping pages already full. When the best `k` candidates do not fill `limit`
  // slots, the answer may lie deeper: widen k and select again (at most log2(N / limit) rounds).
  for (let k = limit * 4; ; k *= 2) {
    const candidates = topK(scores, cache.ids, n, k);
    const perPageCount = new Map<number, number>();
    const out: VectorHit[] = [];
    for (const row of candidates) {
      const pageId = cache.pageIds[row]!;
      const used = perPageCount.get(pageId) ?? 0;
      if (used >= perPage) continue;
      perPageCount.set(pageId, used + 1);
      out.push(hit(row));
      if (out.length === limit) return out;
    }
    if (k >= n) return out;
  }
}
