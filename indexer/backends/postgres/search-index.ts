import { sql, type Kysely } from 'kysely';
import { DEFAULT_COLLECTION_ID, NotaryError } from '../../../core/index.js';
import type { Storage, Database } from '../../../storage/index.js';
import type { IndexDoc, IndexFilter, IndexHit, IndexSearchOptions, IndexStats, PageDoc, PageHit, SearchIndex } from '../../search-index.js';
import { withFacts } from '../../hit-facts.js';
import { FTS5_COLUMN_WEIGHTS, FTS5_PAGE_WEIGHTS } from '../fts5/ranking.js';
import { pathWords } from '../url-path.js';
import { queryPhrases, queryTerms, toTsQuery } from './query.js';
import { bm25, DEFAULT_POSTGRES_RANKING, type PostgresRanking } from './ranking.js';
import { FACT_COLUMNS, FACT_UPDATES, factsOf, factValues, filterConditions, toDoc, WRITE_CHUNK, type HitRow, type PageRow } from './rows.js';
import { ensureTextSearchConfig, identifier, OLD_TS_CONFIGS, requirePostgres, TS_CONFIG, withSchemaLock } from './schema.js';
import { ensureTermStats } from './term-stats.js';

/**
 * A table whose tsvector was made with an older text search configuration gets it again with TS_CONFIG (a migration:
 * the column is dropped and added with the new expression, which rewrites the table, and BM25's tables are dropped, to
 * be counted again from the new vectors by ensureTermStats; the GIN index is made again by ensureSchema).
 */
async function reanalyseOlderTable(trx: Kysely<Database>, table: string, expression: ReturnType<typeof sql>): Promise<void> {
  const column = await sql<{ expr: string }>`select pg_get_expr(d.adbin, d.adrelid) as expr from pg_attrdef d
    join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
    where d.adrelid = to_regclass(${table}) and a.attname = 'tsv'`.execute(trx);
  const expr = column.rows[0]?.expr;
  if (expr === undefined || !OLD_TS_CONFIGS.some((old) => expr.includes(`'${old}'`))) return;
  const t = sql.raw(table);
  await sql`alter table ${t} drop column tsv`.execute(trx);
  await sql`alter table ${t} add column tsv tsvector generated always as (${expression}) stored`.execute(trx);
  for (const side of ['terms', 'stats', 'postings']) await sql`drop table if exists ${sql.raw(identifier(`${table}_${side}`))}`.execute(trx);
}

/**
 * The columns domain, date and collection filters read (a migration: an older table gets them, its hosts taken from
 * its URLs, its dates left unknown until each page is indexed again, its rows in the default collection), with their
 * indexes.
 */
async function addHostAndDate(trx: Kysely<Database>, table: string): Promise<void> {
  const t = sql.raw(table);
  const had = await sql<{ n: number }>`select count(*)::int as n from information_schema.columns where table_name = ${table} and column_name = 'host'
    and table_schema = current_schema()`.execute(trx);
  await sql`alter table ${t} add column if not exists published_at timestamptz`.execute(trx);
  // Collections (issue 33): rows indexed before them are in the default collection.
  await sql`alter table ${t} add column if not exists collections text[] not null default array[${sql.lit(DEFAULT_COLLECTION_ID)}]::text[]`.execute(trx);
  await sql`create index if not exists ${sql.raw(identifier(`${table}_collections`))} on ${t} using gin (collections)`.execute(trx);
  if ((had.rows[0]?.n ?? 0) > 0) return;
  await sql`alter table ${t} add column host text`.execute(trx);
  await sql`update ${t} set host = lower(coalesce(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^/:?#]+)'), '')) where host is null`.execute(trx);
  await sql`create index if not exists ${sql.raw(identifier(`${table}_host`))} on ${t} (host)`.execute(trx);
  await sql`create index if not exists ${sql.raw(identifier(`${table}_published`))} on ${t} (published_at)`.execute(trx);
}

/** What BM25 scores of a query: its words, and its identifiers as phrases (as FTS5 does). */
function bm25Query(query: string) {
  return { words: queryTerms(query).join(' '), phrases: queryPhrases(query) };
}

/**
 * PostgreSQL full-text search: a table of passages with a stored, weighted tsvector (title A, headings B, body C) and
 * a GIN index, ranked by ts_rank. The table and the text search configuration are created at open (idempotently,
 * under an advisory lock), so every process of a deployment may open it.
 */
export class PostgresSearchIndex implements SearchIndex {
  readonly name = 'postgres-fts';
  private readonly table: string;
  private readonly db: Kysely<Database>;

  private constructor(
    storage: Storage,
    options: { table?: string; ranking?: PostgresRanking },
    private readonly ranking: PostgresRanking = options.ranking ?? DEFAULT_POSTGRES_RANKING,
  ) {
    this.db = requirePostgres(storage, 'the postgres index backend');
    this.table = identifier(options.table ?? 'search_passages');
  }

  private get pagesTable() {
    return sql.raw(identifier(`${this.table}_pages`));
  }

  static async open(storage: Storage, options: { table?: string; ranking?: PostgresRanking } = {}): Promise<PostgresSearchIndex> {
    const index = new PostgresSearchIndex(storage, options);
    await index.ensureSchema();
    return index;
  }

  private async ensureSchema(): Promise<void> {
    const t = sql.raw(this.table);
    const cfg = sql.raw(TS_CONFIG);
    await ensureTextSearchConfig(this.db);
    await withSchemaLock(this.db, `notary-schema:${this.table}`, async (trx) => {
      await reanalyseOlderTable(trx, this.table, sql`setweight(to_tsvector('${cfg}', regexp_replace(title, '[[:punct:]]+', ' ', 'g')), 'A') ||
          setweight(to_tsvector('${cfg}', regexp_replace(heading_path, '[[:punct:]]+', ' ', 'g')), 'B') ||
          setweight(to_tsvector('${cfg}', regexp_replace(body, '[[:punct:]]+', ' ', 'g')), 'C')`);
      await reanalyseOlderTable(trx, `${this.table}_pages`, sql`setweight(to_tsvector('${cfg}', regexp_replace(title, '[[:punct:]]+', ' ', 'g')), 'A') ||
          setweight(to_tsvector('${cfg}', regexp_replace(headings, '[[:punct:]]+', ' ', 'g')), 'B') ||
          setweight(to_tsvector('${cfg}', regexp_replace(path_words, '[[:punct:]]+', ' ', 'g')), 'C') ||
          setweight(to_tsvector('${cfg}', regexp_replace(body, '[[:punct:]]+', ' ', 'g')), 'D')`);
      await sql`create table if not exists ${t} (
        id bigint primary key,
        page_id bigint not null,
        url text not null,
        title text not null,
        heading_path text not null,
        body text not null,
        tsv tsvector generated always as (
          setweight(to_tsvector('${cfg}', regexp_replace(title, '[[:punct:]]+', ' ', 'g')), 'A') ||
          setweight(to_tsvector('${cfg}', regexp_replace(heading_path, '[[:punct:]]+', ' ', 'g')), 'B') ||
          setweight(to_tsvector('${cfg}', regexp_replace(body, '[[:punct:]]+', ' ', 'g')), 'C')
        ) stored
      )`.execute(trx);
      // The page's facts (language, navigation page, translation group) that search filters on.
      for (const column of ['language text', 'language_primary text', 'navigation boolean not null default false', 'translation_key text']) {
        await sql`alter table ${t} add column if not exists ${sql.raw(column)}`.execute(trx);
      }
      await addHostAndDate(trx, this.table);
      await sql`create index if not exists ${sql.raw(`${this.table}_tsv`)} on ${t} using gin (tsv)`.execute(trx);
      await sql`create index if not exists ${sql.raw(`${this.table}_page`)} on ${t} (page_id)`.execute(trx);
      // The page-level index: whole pages, title A, headings B, URL path words C, body D.
      await sql`create table if not exists ${this.pagesTable} (
        page_id bigint primary key,
        url text not null,
        title text not null,
        headings text not null,
        path_words text not null,
        body text not null,
        language text,
        language_primary text,
        navigation boolean not null default false,
        translation_key text,
        tsv tsvector generated always as (
          setweight(to_tsvector('${cfg}', regexp_replace(title, '[[:punct:]]+', ' ', 'g')), 'A') ||
          setweight(to_tsvector('${cfg}', regexp_replace(headings, '[[:punct:]]+', ' ', 'g')), 'B') ||
          setweight(to_tsvector('${cfg}', regexp_replace(path_words, '[[:punct:]]+', ' ', 'g')), 'C') ||
          setweight(to_tsvector('${cfg}', regexp_replace(body, '[[:punct:]]+', ' ', 'g')), 'D')
        ) stored
      )`.execute(trx);
      await sql`create index if not exists ${sql.raw(`${this.table}_pages_tsv`)} on ${this.pagesTable} using gin (tsv)`.execute(trx);
      await addHostAndDate(trx, `${this.table}_pages`);
      await ensureTermStats(trx, this.table, 'id');
      await ensureTermStats(trx, `${this.table}_pages`, 'page_id');
    });
  }

  async upsert(docs: readonly IndexDoc[]): Promise<void> {
    for (const doc of docs) {
      if (!Number.isSafeInteger(doc.id)) throw new NotaryError('invalid_request', `index document id must be an integer, got ${doc.id}`);
    }
    const byId = new Map(docs.map((d) => [d.id, d]));
    const t = sql.raw(this.table);
    for (let i = 0; i < byId.size; i += WRITE_CHUNK) {
      const chunk = [...byId.values()].slice(i, i + WRITE_CHUNK);
      const values = sql.join(chunk.map((d) => sql`(${d.id}, ${d.pageId}, ${d.url}, ${d.title}, ${d.headingPath}, ${d.text}, ${factValues(d)})`));
      await sql`insert into ${t} (id, page_id, url, title, heading_path, body, ${FACT_COLUMNS}) values ${values}
        on conflict (id) do update set page_id = excluded.page_id, url = excluded.url, title = excluded.title,
          heading_path = excluded.heading_path, body = excluded.body, ${FACT_UPDATES}`.execute(this.db);
    }
  }

  async delete(ids: readonly number[]): Promise<void> {
    const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    for (let i = 0; i < unique.length; i += WRITE_CHUNK) {
      await sql`delete from ${sql.raw(this.table)} where id = any(${unique.slice(i, i + WRITE_CHUNK)}::bigint[])`.execute(this.db);
    }
  }

  /** The score of a row by one of ts_rank's variants (the rankings other than bm25). */
  private tsRankExpression() {
    const weights = sql.raw(`'{0, 0.25, 0.5, 1.0}'::float4[]`);
    switch (this.ranking) {
      case 'ts_rank_nonorm':
        return sql`ts_rank(${weights}, tsv, q, 0)`;
      case 'ts_rank_cd':
        return sql`ts_rank_cd(${weights}, tsv, q, 1)`;
      default:
        return sql`ts_rank(${weights}, tsv, q, 1)`;
    }
  }

  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const tsquery = typeof query === 'string' ? toTsQuery(query) : null;
    if (tsquery === null || limit === 0) return [];
    const perPage = options.perPageLimit === undefined ? limit : Math.max(1, Math.floor(options.perPageLimit));
    if (options.filter?.pageIds && options.filter.pageIds.length === 0) return [];
    const t = sql.raw(this.table);
    // The matching rows with their scores: BM25 from the postings, or ts_rank over each match's tsvector.
    const { title, headings, body } = FTS5_COLUMN_WEIGHTS;
    const scored =
      this.ranking === 'bm25'
        ? sql`with ${bm25(this.table, 'id', bm25Query(query), { A: title, B: headings, C: body, D: 0 }, options.filter?.pageIds ? { pageIds: options.filter.pageIds } : undefined)}
          select t.id, t.page_id, s.score from bm25_scored s join ${t} t on t.id = s.doc where ${filterConditions(options.filter)}`
        : sql`select id, page_id, ${this.tsRankExpression()} as score from ${t}, to_tsquery(${sql.raw(`'${TS_CONFIG}'`)}, ${tsquery}) q
          where tsv @@ q and ${filterConditions(options.filter)}`;
    // The best rows, at most perPage of a page, then their columns (a passage's text is read for the hits only).
    const result = await sql<HitRow>`
      with matched as (${scored}),
      top as (select id, score from (
          select id, score, row_number() over (partition by page_id order by score desc, id) as page_rank from matched
        ) paged where page_rank <= ${perPage} order by score desc, id limit ${limit})
      select t.id, t.page_id, t.url, t.title, t.heading_path, t.body, t.language, t.navigation, t.translation_key, t.published_at, top.score
      from top join ${t} t on t.id = top.id order by top.score desc, top.id`.execute(this.db);
    return result.rows.map((r) => ({ ...toDoc(r), score: Number(r.score) }));
  }

  async upsertPages(pages: readonly PageDoc[]): Promise<void> {
    for (const page of pages) {
      if (!Number.isSafeInteger(page.pageId)) throw new NotaryError('invalid_request', `page id must be an integer, got ${page.pageId}`);
    }
    await this.writePages(this.db, pages);
  }

  private async writePages(db: Kysely<Database>, pages: readonly PageDoc[]): Promise<void> {
    const byId = [...new Map(pages.map((p) => [p.pageId, p])).values()];
    for (let i = 0; i < byId.length; i += WRITE_CHUNK) {
      const values = sql.join(
        byId.slice(i, i + WRITE_CHUNK).map((p) => sql`(${p.pageId}, ${p.url}, ${p.title}, ${p.headings}, ${pathWords(p.url)}, ${p.text}, ${factValues(p)})`),
      );
      await sql`insert into ${this.pagesTable} (page_id, url, title, headings, path_words, body, ${FACT_COLUMNS})
        values ${values}
        on conflict (page_id) do update set url = excluded.url, title = excluded.title, headings = excluded.headings,
          path_words = excluded.path_words, body = excluded.body, ${FACT_UPDATES}`.execute(db);
    }
  }

  async deletePages(pageIds: readonly number[]): Promise<void> {
    const unique = [...new Set(pageIds)].filter((id) => Number.isSafeInteger(id));
    for (let i = 0; i < unique.length; i += WRITE_CHUNK) {
      await sql`delete from ${this.pagesTable} where page_id = any(${unique.slice(i, i + WRITE_CHUNK)}::bigint[])`.execute(this.db);
    }
  }

  /** Whole pages ranked by BM25 (or ts_rank) with FTS5's page weights (title 3 : headings 1 : path 1 : body 1). */
  async searchPages(query: string, options: { limit: number; filter?: IndexFilter }): Promise<PageHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const tsquery = typeof query === 'string' ? toTsQuery(query) : null;
    if (tsquery === null || limit === 0) return [];
    const w = FTS5_PAGE_WEIGHTS;
    const top = Math.max(w.title, w.headings, w.path, w.body);
    // ts_rank's weight array is {D, C, B, A}.
    const weights = `{${[w.body, w.path, w.headings, w.title].map((x) => x / top).join(', ')}}`;
    const result =
      this.ranking === 'bm25'
        ? await sql<PageRow>`
          with ${bm25(`${this.table}_pages`, 'page_id', bm25Query(query), { A: w.title, B: w.headings, C: w.path, D: w.body })},
          top as (select p.page_id, s.score from bm25_scored s join ${this.pagesTable} p on p.page_id = s.doc
            where ${filterConditions(options.filter)} order by s.score desc, p.page_id limit ${limit})
          select p.page_id, p.url, p.title, p.language, p.navigation, p.translation_key, p.published_at, top.score
          from top join ${this.pagesTable} p on p.page_id = top.page_id order by top.score desc, top.page_id`.execute(this.db)
        : await sql<PageRow>`
          select page_id, url, title, language, navigation, translation_key, published_at, ts_rank(${weights}::float4[], tsv, q, 1) as score
          from ${this.pagesTable}, to_tsquery(${sql.raw(`'${TS_CONFIG}'`)}, ${tsquery}) q
          where tsv @@ q and ${filterConditions(options.filter)}
          order by score desc, page_id limit ${limit}`.execute(this.db);
    return result.rows.map((r) => withFacts({ pageId: Number(r.page_id), url: r.url, title: r.title, score: Number(r.score) }, factsOf(r)));
  }

  async get(ids: readonly number[]): Promise<IndexDoc[]> {
    const wanted = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    if (wanted.length === 0) return [];
    const found = new Map<number, IndexDoc>();
    for (let i = 0; i < wanted.length; i += WRITE_CHUNK) {
      const rows = await sql<HitRow>`select id, page_id, url, title, heading_path, body, language, navigation, translation_key, published_at from ${sql.raw(this.table)}
        where id = any(${wanted.slice(i, i + WRITE_CHUNK)}::bigint[])`.execute(this.db);
      for (const r of rows.rows) found.set(Number(r.id), toDoc(r));
    }
    return wanted.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
  }

  async stats(): Promise<IndexStats> {
    const result = await sql<{ n: string; bytes: string }>`select count(*) as n, pg_total_relation_size(${this.table}::regclass) as bytes from ${sql.raw(this.table)}`.execute(this.db);
    const row = result.rows[0];
    return { documents: Number(row?.n ?? 0), bytes: row ? Number(row.bytes) : null, backend: this.name };
  }

  /** Replaces the whole index in one transaction: readers see the old rows until it commits, never a half-built index. */
  async rebuild(
    source: AsyncIterable<readonly IndexDoc[]>,
    onProgress?: (documents: number) => void,
    pages?: AsyncIterable<readonly PageDoc[]>,
  ): Promise<number> {
    let written = 0;
    await this.db.transaction().execute(async (trx) => {
      if (pages) {
        await sql`delete from ${this.pagesTable}`.execute(trx);
        for await (const batch of pages) await this.writePages(trx, batch);
      }
      await sql`delete from ${sql.raw(this.table)}`.execute(trx);
      for await (const batch of source) {
        for (let i = 0; i < batch.length; i += WRITE_CHUNK) {
          const values = sql.join(batch.slice(i, i + WRITE_CHUNK).map((d) => sql`(${d.id}, ${d.pageId}, ${d.url}, ${d.title}, ${d.headingPath}, ${d.text}, ${factValues(d)})`));
          await sql`insert into ${sql.raw(this.table)} (id, page_id, url, title, heading_path, body, ${FACT_COLUMNS}) values ${values}
            on conflict (id) do nothing`.execute(trx);
        }
        written += batch.length;
        onProgress?.(written);
      }
    });
    return written;
  }

  async close(): Promise<void> {}
}
