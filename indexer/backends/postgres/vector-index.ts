import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { NotaryError } from '../../../core/index.js';
import type { Storage, Database } from '../../../storage/index.js';
import { selectPerPage } from '../../page-cap.js';
import type { PassageVector, VectorHit, VectorIndex, VectorIndexStats, VectorSearchOptions } from '../../vector-index.js';
import { checkedVectors, checkVector, vectorSearchBounds } from '../../vector-input.js';
import { dot, widenedSearch } from '../shared.js';
import { collectionCondition, domainAndDateConditions, publishedValue, WRITE_CHUNK } from './rows.js';
import { hostOf } from '../../filter-facts.js';
import { requirePostgres, withSchemaLock } from './schema.js';

/** pgvector's text form of a vector. */
function vectorLiteral(v: Float32Array): string {
  return `[${Array.from(v).join(',')}]`;
}

/**
 * A vector in pgvector's binary form (`vector_send`: dimensions and a reserved word as int16, then float4s, big-endian):
 * no float printed as text by the server and parsed back here (a search reads a few hundred of them).
 */
function parseVector(bytes: Buffer, dimensions: number): Float32Array | null {
  if (bytes.length !== 4 + 4 * dimensions || bytes.readInt16BE(0) !== dimensions) return null;
  const out = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) out[i] = bytes.readFloatBE(4 + 4 * i);
  return out;
}

/** HNSW's candidate list: at least the number of rows asked for, at most pgvector's ceiling. */
const MAX_EF_SEARCH = 1000;

/**
 * Passage vectors in PostgreSQL with pgvector: one row per passage (whichever model wrote it last), an HNSW index per
 * model (a partial expression index on `embedding::vector(d)` with inner-product operators: the vectors are unit
 * length, so inner product is cosine). Rows cascade away with their passages. Candidates come from the HNSW index
 * (approximate; hnsw.ef_search follows the number asked, iterative scans fill filtered lists) and are rescored
 * exactly from their stored vectors.
 */
export class PgVectorIndex implements VectorIndex {
  readonly name = 'pgvector-hnsw';
  readonly model: string;
  readonly dimensions: number;
  private readonly db: Kysely<Database>;

  private constructor(storage: Storage, options: { model: string; dimensions: number }) {
    this.db = requirePostgres(storage, 'the pgvector index');
    if (!options.model) throw new NotaryError('invalid_config', 'vector index needs a model name');
    if (!Number.isInteger(options.dimensions) || options.dimensions <= 0 || options.dimensions > 2000) {
      throw new NotaryError('invalid_config', `vector dimensions must be an integer from 1 to 2000 (pgvector's HNSW limit), got ${options.dimensions}`);
    }
    this.model = options.model;
    this.dimensions = options.dimensions;
  }

  static async open(storage: Storage, options: { model: string; dimensions: number }): Promise<PgVectorIndex> {
    const index = PgVectorIndex.attach(storage, options);
    await index.ensureSchema();
    return index;
  }

  /** The table as it is, making nothing (no extension, table or index): for reading what it holds. */
  static attach(storage: Storage, options: { model: string; dimensions: number }): PgVectorIndex {
    return new PgVectorIndex(storage, options);
  }

  private get typed() {
    return sql.raw(`vector(${this.dimensions})`);
  }

  private async ensureSchema(): Promise<void> {
    const hnswName = `passage_embeddings_hnsw_${createHash('sha256').update(`${this.model}|${this.dimensions}`).digest('hex').slice(0, 16)}`;
    const modelLiteral = `'${this.model.replace(/'/g, "''")}'`;
    await withSchemaLock(this.db, 'notary-schema:passage_embeddings', async (trx) => {
      try {
        await sql`create extension if not exists vector`.execute(trx);
      } catch (err) {
        throw new NotaryError('invalid_config', `pgvector is not available in this PostgreSQL (${err instanceof Error ? err.message : String(err)}): install it, or keep the vectors in the service's SQL vector store (indexer.postgres.vectors service)`);
      }
      await sql`create table if not exists passage_embeddings (
        passage_id integer primary key references passages(id) on delete cascade,
        page_id integer not null,
        model text not null,
        dimensions integer not null,
        embedding vector not null
      )`.execute(trx);
      await sql`create index if not exists passage_embeddings_model on passage_embeddings (model, dimensions, passage_id)`.execute(trx);
      // What domain and date filters read (null until the passage is embedded again).
      await sql`alter table passage_embeddings add column if not exists host text`.execute(trx);
      await sql`alter table passage_embeddings add column if not exists published_at timestamptz`.execute(trx);
      // Collections (issue 33): null is the default collection (rows stored before them).
      await sql`alter table passage_embeddings add column if not exists collections text[]`.execute(trx);
      await sql`create index if not exists ${sql.raw(hnswName)} on passage_embeddings
        using hnsw ((embedding::${this.typed}) vector_ip_ops)
        where model = ${sql.raw(modelLiteral)} and dimensions = ${sql.raw(String(this.dimensions))}`.execute(trx);
    });
  }

  private ofThisModel() {
    return sql`model = ${this.model} and dimensions = ${this.dimensions}`;
  }

  async upsert(items: readonly PassageVector[]): Promise<void> {
    const unique = checkedVectors(items, this.dimensions);
    if (unique.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < unique.length; i += WRITE_CHUNK) {
        const values = sql.join(
          unique
            .slice(i, i + WRITE_CHUNK)
            .map(
              (item) =>
                sql`(${item.id}, ${item.pageId}, ${this.model}, ${this.dimensions}, ${vectorLiteral(item.vector)}::vector, ${item.url ? hostOf(item.url) : null}, ${publishedValue(item.publishedAt)}, ${item.collections && item.collections.length > 0 ? sql`${[...item.collections]}::text[]` : sql`null::text[]`})`,
            ),
        );
        await sql`insert into passage_embeddings (passage_id, page_id, model, dimensions, embedding, host, published_at, collections) values ${values}
          on conflict (passage_id) do update set page_id = excluded.page_id, model = excluded.model,
            dimensions = excluded.dimensions, embedding = excluded.embedding, host = excluded.host, published_at = excluded.published_at, collections = excluded.collections`.execute(trx);
      }
    });
  }

  async delete(ids: readonly number[]): Promise<void> {
    for (const id of ids) if (!Number.isSafeInteger(id)) throw new NotaryError('invalid_request', `passage id must be an integer, got ${id}`);
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += WRITE_CHUNK) {
      await sql`delete from passage_embeddings where passage_id = any(${unique.slice(i, i + WRITE_CHUNK)}::int[])`.execute(this.db);
    }
  }

  async vectors(ids: readonly number[]): Promise<Map<number, Float32Array>> {
    for (const id of ids) if (!Number.isSafeInteger(id)) throw new NotaryError('invalid_request', `passage id must be an integer, got ${id}`);
    const unique = [...new Set(ids)];
    const out = new Map<number, Float32Array>();
    for (let i = 0; i < unique.length; i += WRITE_CHUNK) {
      const rows = await sql<{ passage_id: number; embedding: Buffer }>`select passage_id, vector_send(embedding) as embedding from passage_embeddings
        where passage_id = any(${unique.slice(i, i + WRITE_CHUNK)}::int[]) and ${this.ofThisModel()}`.execute(this.db);
      for (const r of rows.rows) {
        const v = parseVector(r.embedding, this.dimensions);
        if (v) out.set(Number(r.passage_id), v);
      }
    }
    return out;
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]> {
    const query = checkVector(vector, this.dimensions, 'query vector');
    const { limit, perPage } = vectorSearchBounds(options);
    if (limit <= 0) return [];
    const facts = sql.join([sql`true`, ...domainAndDateConditions(options.filter), ...collectionCondition(options.filter?.collections)], sql` and `);
    if (options.pageIds) {
      // Every passage of these pages scored exactly (the pipeline asks for a few pages' passages at a time).
      const pageIds = options.pageIds.filter((id) => Number.isSafeInteger(id));
      if (pageIds.length === 0) return [];
      const rows = await sql<{ passage_id: number; page_id: number; embedding: Buffer }>`
        select passage_id, page_id, vector_send(embedding) as embedding from passage_embeddings
        where ${this.ofThisModel()} and page_id = any(${pageIds}::bigint[]) and ${facts}`.execute(this.db);
      const hits: VectorHit[] = [];
      for (const r of rows.rows) {
        const v = parseVector(r.embedding, this.dimensions);
        if (v) hits.push({ id: Number(r.passage_id), pageId: Number(r.page_id), score: dot(v, query) });
      }
      return selectPerPage(hits.sort((a, b) => b.score - a.score || a.id - b.id), limit, perPage, (hit) => hit.pageId);
    }
    const literal = vectorLiteral(query);
    // One connection, two round trips: the scan's settings (for this session: every HNSW search sets them first), then
    // the scan. A transaction with SET LOCAL took five (begin, two settings, the scan, commit).
    return widenedSearch(limit, perPage, 100_000, async (k) =>
      this.db.connection().execute(async (trx) => {
        await sql`select set_config('hnsw.ef_search', ${String(Math.min(MAX_EF_SEARCH, Math.max(40, k)))}, false),
          set_config('hnsw.iterative_scan', 'relaxed_order', false)`.execute(trx);
        const rows = await sql<{ passage_id: number; page_id: number; embedding: Buffer }>`
          select passage_id, page_id, vector_send(embedding) as embedding from passage_embeddings
          where ${this.ofThisModel()} and ${facts}
          order by embedding::${this.typed} <#> ${literal}::${this.typed}
          limit ${k}`.execute(trx);
        const candidates: VectorHit[] = [];
        for (const r of rows.rows) {
          const v = parseVector(r.embedding, this.dimensions);
          if (v) candidates.push({ id: Number(r.passage_id), pageId: Number(r.page_id), score: dot(v, query) });
        }
        return { candidates, exhausted: rows.rows.length < k };
      }),
    );
  }

  async missing(limit: number): Promise<number[]> {
    const n = Math.floor(limit);
    if (Number.isNaN(n)) throw new NotaryError('invalid_request', `limit must be a number, got ${limit}`);
    if (n <= 0) return [];
    const rows = await sql<{ id: number }>`select p.id from passages p
      left join passage_embeddings v on v.passage_id = p.id and v.model = ${this.model} and v.dimensions = ${this.dimensions}
      where v.passage_id is null order by p.id limit ${n}`.execute(this.db);
    return rows.rows.map((r) => Number(r.id));
  }

  async stats(): Promise<VectorIndexStats> {
    const rows = await sql<{ mine: string; total: string }>`select count(*) filter (where ${this.ofThisModel()}) as mine, count(*) as total from passage_embeddings`.execute(this.db);
    const mine = Number(rows.rows[0]?.mine ?? 0);
    return { backend: this.name, model: this.model, dimensions: this.dimensions, vectors: mine, stale: Number(rows.rows[0]?.total ?? 0) - mine };
  }

  async close(): Promise<void> {}
}
