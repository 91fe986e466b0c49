import type { Kysely, Transaction } from 'kysely';
import './sql-vector-migrations.js'; // its tables exist wherever it is used, with or without the plug-in lists
import { NotaryError } from '../core/index.js';
import { QueryShape, type Storage, type Database } from '../storage/index.js';
import { ApproximateSearch, type ApproximateSearchOptions } from './ann-search.js';
import { dotAt, exactSearch, factsAllow, VectorCache } from './vector-cache.js';
import { hasFactFilter, hostOf, publishedMs } from './filter-facts.js';
import { decodeInto, decodeVector, encodeVector } from './vector-encoding.js';
import type { PassageVector, VectorHit, VectorIndex, VectorIndexStats, VectorSearchOptions } from './vector-index.js';
import { checkedVectors, checkVector, vectorSearchBounds } from './vector-input.js';

export interface SqlVectorIndexOptions {
  /** Embedding model name; rows written by another model (or with other dimensions) are stale to this index. */
  model: string;
  dimensions: number;
  /** Approximate search (HNSW, indexer/ann-search.ts) from `above` vectors on (absent or 0: exact only); its graph is saved
   * in `directory` and loaded at the next start instead of built. */
  ann?: Omit<ApproximateSearchOptions, 'dimensions' | 'persist'> & { directory?: string };
}

/** Rows per INSERT and ids per IN list: well under SQLite's and PostgreSQL's bound-parameter limits. */
const WRITE_CHUNK = 500;
const ID_CHUNK = 1000;
const LOAD_CHUNK = 2000; // vectors fetched per query while (re)loading the cache

type Db = Kysely<Database> | Transaction<Database>;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
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
  /** writeStamp's query, read before every search: compiled once (storage/query-shape.ts). */
  private readonly stampQuery = new QueryShape(0, () => this.db.selectFrom('passage_vector_changes').select('changes').where('id', '=', 1));

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
    const row = await this.stampQuery.first(db);
    if (!row) throw new NotaryError('internal_error', 'passage_vector_changes has no row');
    return Number(row.changes);
  }

  private async cacheIsCurrent(db: Db): Promise<boolean> {
    const cache = this.cache;
    if (!cache) return false;
    const { count, maxSeq } = await this.fingerprint(db);
    return count === cache.size && maxSeq === cache.maxSeq;
  }

  async upsert(items: readonly PassageVector[]): Promise<void> {
    const unique = checkedVectors(items, this.dimensions);
    if (unique.length === 0) return;
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
                host: item.url ? hostOf(item.url) : null,
                published: publishedMs(item.publishedAt),
                collections: storedCollections(item.collections),
              })),
            )
            .onConflict((oc) =>
              oc.column('passage_id').doUpdateSet((eb) => ({
                page_id: eb.ref('excluded.page_id'),
                model: eb.ref('excluded.model'),
                dimensions: eb.ref('excluded.dimensions'),
                seq: eb.ref('excluded.seq'),
                vector: eb.ref('excluded.vector'),
                host: eb.ref('excluded.host'),
                published: eb.ref('excluded.published'),
                collections: eb.ref('excluded.collections'),
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
        const row = cache.put(item.id, item.pageId, seq, item.url ? hostOf(item.url) : '', publishedMs(item.publishedAt), item.collections?.length ? item.collections : undefined);
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

  /**
   * dot(vector, vectors(ids)[id]) for each id with a vector, bit for bit: a process that searches computes them on the
   * cache's rows in place, without copying each row out (a depth-1 search asks this for every passage it scores).
   */
  async similarities(vector: Float32Array, ids: readonly number[]): Promise<Map<number, number>> {
    const query = checkVector(vector, this.dimensions, 'query vector');
    this.checkIds(ids);
    if (!this.cache) {
      const out = new Map<number, number>();
      for (const [id, stored] of await this.vectors(ids)) out.set(id, dotAt(query, stored, 0));
      return out;
    }
    return this.exclusive(async () => {
      const cache = await this.refresh();
      const out = new Map<number, number>();
      for (const id of ids) {
        const similarity = cache.similarity(query, id);
        if (similarity !== undefined) out.set(id, similarity);
      }
      return out;
    });
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]> {
    const query = checkVector(vector, this.dimensions, 'query vector');
    const { limit, perPage } = vectorSearchBounds(options);
    if (limit <= 0) return [];
    return this.exclusive(async () => {
      const cache = await this.refresh();
      if (cache.size === 0) return [];
      // Domain, date and collection filters: every vector that passes is scored (the graph would drop the ones it skips).
      const filtered = hasFactFilter(options.filter);
      if (!options.pageIds && !filtered && this.approximate) {
        const hits = await this.approximate.search(cache, query, limit, perPage);
        if (hits) return hits;
      }
      return exactSearch(cache, query, limit, perPage, options.pageIds, factsAllow(cache, options.filter));
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
          .select(['passage_id', 'page_id', 'seq', 'host', 'published', 'collections'])
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
          const at = cache.put(id, Number(row.page_id), seq, row.host ?? '', row.published === null ? null : Number(row.published), parseCollections(row.collections));
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

/** A vector's collection ids as passage_vectors.collections holds them: a JSON array, or null for the default collection. */
function storedCollections(collections: readonly string[] | undefined): string | null {
  return collections && collections.length > 0 ? JSON.stringify([...collections]) : null;
}

/** passage_vectors.collections read back (null or unreadable: the default collection). */
function parseCollections(stored: string | null): readonly string[] | undefined {
  if (!stored) return undefined;
  try {
    const value: unknown = JSON.parse(stored);
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;
  } catch {
    return undefined;
  }
}
