import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { NotaryError } from '../../core/errors.js';
import type { Storage } from '../../storage/db.js';
import type { Database } from '../../storage/schema.js';
import { primaryLanguage } from '../../core/language.js';
import { FTS5_COLUMN_WEIGHTS, FTS5_PAGE_WEIGHTS } from './fts5/ranking.js';
import { pathWords } from './url-path.js';
import type { IndexDoc, IndexFilter, IndexHit, IndexSearchOptions, IndexStats, PageDoc, PageHit, SearchIndex } from '../search-index.js';
import type { PassageVector, VectorHit, VectorIndex, VectorIndexStats, VectorSearchOptions } from '../vector-index.js';
import { analysedWords, MAX_TERM_LENGTH, QUERY_STOPWORDS } from './analysis.js';
import { selectPerPage } from '../page-cap.js';
import { checkVector, vectorSearchBounds } from '../vector-input.js';
import { dot, widenedSearch } from './shared.js';

/** Rows per INSERT and ids per IN list. */
const WRITE_CHUNK = 500;
const MAX_QUERY_TERMS = 32;
/** The text search configuration: English stems with Latin diacritics folded first (unaccent), as FTS5 does. */
const TS_CONFIG = 'notary_english';

/**
 * How a match is scored. `bm25` is Okapi BM25 as FTS5 computes it (k1 1.2, b 0.75; a term's frequency is the sum of
 * its occurrences weighted by field, title 4 : headings 2 : body 1; idf from per-term document frequencies kept in
 * a table the index's triggers maintain; length normalised by the passage's distinct lexemes), and measured best
 * (README, Relevance). `ts_rank` has no idf: a common word weighs as much as a rare one. The `ts_rank` variants
 * (weights 1.0 / 0.5 / 0.25, normalisation 1 = rank / (1 + log(length))) stay selectable for the measurement.
 */
export type PostgresRanking = 'bm25' | 'ts_rank' | 'ts_rank_cd' | 'ts_rank_nonorm';
export const DEFAULT_POSTGRES_RANKING: PostgresRanking = 'bm25';
export const POSTGRES_RANKINGS: readonly PostgresRanking[] = ['bm25', 'ts_rank', 'ts_rank_cd', 'ts_rank_nonorm'];

const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** Field weights by tsvector weight label (A, B, C, D): a term's BM25 frequency is the sum of its positions' weights. */
interface LabelWeights {
  A: number;
  B: number;
  C: number;
  D: number;
}

function identifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new NotaryError('invalid_config', `"${name}" is not a plain SQL identifier`);
  return name;
}

function requirePostgres(storage: Storage, what: string): Kysely<Database> {
  if (storage.dialect !== 'postgres') throw new NotaryError('invalid_config', `${what} needs storage.driver postgres (NOTARY_STORAGE=postgres)`);
  return storage.db;
}

/** Runs `fn` holding a transaction-level advisory lock, so processes starting together create a schema once. */
async function withSchemaLock(db: Kysely<Database>, key: string, fn: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
    await fn(trx);
  });
}

/**
 * The websearch-free tsquery of a user string: its words only (letters, digits, marks), stopwords dropped unless
 * nothing else is left, OR between them; each identifier (lc_numeric, pg_catalog.pg_class) also as a phrase of its
 * parts. Nothing of tsquery's syntax in the input reaches the parser. Null when no word is left.
 */
export function toTsQuery(input: string): string | null {
  const terms = queryTerms(input);
  if (terms.length === 0) return null;
  const lowered = input.normalize('NFKC').toLowerCase();
  const phrases = [...new Set(lowered.match(/[\p{L}\p{N}\p{M}]+(?:[_.:][\p{L}\p{N}\p{M}]+)+/gu) ?? [])]
    .map((id) => analysedWords(id))
    .filter((parts) => parts.length > 1)
    .slice(0, MAX_QUERY_TERMS)
    .map((parts) => `(${parts.map((p) => p.slice(0, MAX_TERM_LENGTH)).join(' <-> ')})`);
  return [...terms, ...phrases].join(' | ');
}

/** The words a query searches for: unique, stopwords dropped unless nothing else is left, at most MAX_QUERY_TERMS. */
function queryTerms(input: string): string[] {
  const words = [...new Set(analysedWords(input))];
  const meaningful = words.filter((w) => !QUERY_STOPWORDS.has(w));
  return (meaningful.length > 0 ? meaningful : words).slice(0, MAX_QUERY_TERMS);
}

/**
 * Per-term document frequencies and the document and token counts of `table` (which has a tsvector column `tsv`),
 * kept in `<table>_terms` and `<table>_stats` by statement triggers on every insert, update and delete (so BM25 has
 * its idf and average length without a scan). Created idempotently; counted from the rows once, when first created.
 * Runs inside the caller's schema transaction: creating the triggers locks the table against writes until it commits,
 * so no write falls between the count and the triggers.
 */
async function ensureTermStats(trx: Kysely<Database>, table: string): Promise<void> {
  const t = sql.raw(table);
  const terms = sql.raw(identifier(`${table}_terms`));
  const stats = sql.raw(identifier(`${table}_stats`));
  const fn = (suffix: string) => sql.raw(identifier(`${table}_${suffix}`));
  await sql`create table if not exists ${terms} (term text primary key, df integer not null)`.execute(trx);
  // tokens: the sum of the rows' lengths in distinct lexemes (what BM25's length normalisation uses here).
  await sql`create table if not exists ${stats} (id integer primary key default 1 check (id = 1), docs bigint not null, tokens bigint not null)`.execute(trx);
  // Lexemes in a fixed order, so two writers lock term rows in the same order (no deadlock).
  const add = (rows: string) => sql`
    insert into ${terms} (term, df) select lexeme, count(*) from ${sql.raw(rows)}, unnest(${sql.raw(rows)}.tsv) group by lexeme order by lexeme
      on conflict (term) do update set df = ${terms}.df + excluded.df;
    update ${stats} set docs = docs + (select count(*) from ${sql.raw(rows)}),
      tokens = tokens + (select coalesce(sum(length(tsv)), 0) from ${sql.raw(rows)});`;
  const remove = (rows: string) => sql`
    with gone as (select lexeme, count(*) as n from ${sql.raw(rows)}, unnest(${sql.raw(rows)}.tsv) group by lexeme order by lexeme),
      lowered as (update ${terms} t set df = t.df - gone.n from gone where t.term = gone.lexeme returning t.term, t.df)
    delete from ${terms} t using lowered where t.term = lowered.term and lowered.df <= 0;
    update ${stats} set docs = docs - (select count(*) from ${sql.raw(rows)}),
      tokens = tokens - (select coalesce(sum(length(tsv)), 0) from ${sql.raw(rows)});`;
  const body = (...parts: ReturnType<typeof sql>[]) => sql.join(parts, sql` `);
  for (const [name, event, referencing, work] of [
    ['stats_insert', 'insert', 'new table as new_rows', body(add('new_rows'))],
    ['stats_update', 'update', 'old table as old_rows new table as new_rows', body(remove('old_rows'), add('new_rows'))],
    ['stats_delete', 'delete', 'old table as old_rows', body(remove('old_rows'))],
  ] as const) {
    await sql`create or replace function ${fn(name)}() returns trigger language plpgsql as $notary$ begin ${work} return null; end $notary$`.execute(trx);
    await sql`create or replace trigger ${fn(name)} after ${sql.raw(event)} on ${t} referencing ${sql.raw(referencing)}
      for each statement execute function ${fn(name)}()`.execute(trx);
  }
  const counted = await sql<{ n: number }>`select count(*)::int as n from ${stats}`.execute(trx);
  if ((counted.rows[0]?.n ?? 0) === 0) {
    await sql`insert into ${stats} (id, docs, tokens) select 1, count(*), coalesce(sum(length(tsv)), 0) from ${t}`.execute(trx);
    await sql`insert into ${terms} (term, df) select lexeme, count(*) from ${t}, unnest(${t}.tsv) group by lexeme on conflict (term) do nothing`.execute(trx);
  }
}

/**
 * BM25 of the rows of `table`, as FTS5 computes it: per query term, idf = ln((N - df + 0.5) / (df + 0.5)) (at least
 * 1e-6) and tf = the term's occurrences in the row weighted by field; score = the sum of
 * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average length)). The length of a row is its number of
 * distinct lexemes (`length(tsv)`, read from the tsvector's header; counting positions would unpack every lexeme of
 * every matching row). tf comes from ts_rank_cd with the one-lexeme query and no normalisation, which is exactly the
 * sum of the weights of the lexeme's positions (each position is a cover of its own), so it runs in C per row.
 * `ctes` go in the query's WITH list (computed once per query), `score` is the per-row expression over `tsv`.
 */
function bm25(table: string, words: string, weights: LabelWeights) {
  const terms = sql.raw(identifier(`${table}_terms`));
  const stats = sql.raw(identifier(`${table}_stats`));
  // ts_rank_cd takes weights in 0..1 ({D, C, B, A}); the frequencies are scaled back by the largest.
  const top = Math.max(weights.A, weights.B, weights.C, weights.D);
  const array = sql.raw(`'{${[weights.D, weights.C, weights.B, weights.A].map((w) => w / top).join(', ')}}'::float4[]`);
  const k1 = sql.raw(String(BM25_K1));
  return {
    ctes: sql`bm25_stats as materialized (
        select greatest(docs, 1)::float8 as n, greatest(tokens::float8 / greatest(docs, 1), 1) as avgdl from ${stats}),
      bm25_terms as materialized (
        select quote_literal(l.term)::tsquery as lexeme, greatest(ln((st.n - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)), 1e-6) as idf
        from unnest(tsvector_to_array(to_tsvector(${sql.raw(`'${TS_CONFIG}'`)}, ${words}::text))) l(term) cross join bm25_stats st
        left join ${terms} d on d.term = l.term)`,
    score: sql`(
      select coalesce(sum(qt.idf * e.tf * (${k1} + 1) / (e.tf + ${k1} * (${sql.raw(String(1 - BM25_B))} + ${sql.raw(String(BM25_B))} * length(tsv) / st.avgdl))), 0)
      from bm25_terms qt cross join lateral (select ${sql.raw(String(top))} * ts_rank_cd(${array}, tsv, qt.lexeme, 0)::float8 as tf) e
      cross join bm25_stats st)`,
  };
}

interface FactColumns {
  language: string | null;
  navigation: boolean | null;
  translation_key: string | null;
}

interface HitRow extends FactColumns {
  id: string | number;
  page_id: string | number;
  url: string;
  title: string;
  heading_path: string;
  body: string;
  score?: number;
}

interface PageRow extends FactColumns {
  page_id: string | number;
  url: string;
  title: string;
  score: number;
}

function withFacts<T extends object>(base: T, row: FactColumns): T & Pick<IndexDoc, 'language' | 'navigation' | 'translationKey'> {
  return {
    ...base,
    ...(row.language ? { language: row.language } : {}),
    ...(row.navigation ? { navigation: true } : {}),
    ...(row.translation_key ? { translationKey: row.translation_key } : {}),
  };
}

/** The facts of a document as column values: language, its primary subtag (what filters match), navigation, group. */
function factValues(doc: { language?: string | undefined; navigation?: boolean | undefined; translationKey?: string | undefined }) {
  return sql`${doc.language ?? null}, ${doc.language ? primaryLanguage(doc.language.toLowerCase()) : null}, ${doc.navigation === true}, ${doc.translationKey ?? null}`;
}

/** SQL conditions of a filter (pages of unknown language pass a language filter, as in FTS5). */
function filterConditions(filter: IndexFilter | undefined) {
  const conditions = [sql`true`];
  if (filter?.languages && filter.languages.length > 0) {
    const wanted = [...new Set(filter.languages.map((l) => primaryLanguage(l.toLowerCase())))];
    conditions.push(sql`(language_primary is null or language_primary = any(${wanted}::text[]))`);
  }
  if (filter?.excludeNavigation) conditions.push(sql`not navigation`);
  if (filter?.translationKey) conditions.push(sql`translation_key = ${filter.translationKey}`);
  if (filter?.pageIds) conditions.push(sql`page_id = any(${filter.pageIds.filter((id) => Number.isSafeInteger(id))}::bigint[])`);
  return sql.join(conditions, sql` and `);
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
    await withSchemaLock(this.db, `notary-schema:${this.table}`, async (trx) => {
      await sql`create extension if not exists unaccent`.execute(trx);
      const exists = await sql<{ n: number }>`select count(*)::int as n from pg_ts_config where cfgname = ${TS_CONFIG}`.execute(trx);
      if ((exists.rows[0]?.n ?? 0) === 0) {
        await sql`create text search configuration ${cfg} (copy = english)`.execute(trx);
        await sql`alter text search configuration ${cfg} alter mapping for hword, hword_part, word with unaccent, english_stem`.execute(trx);
      }
      await sql`create table if not exists ${t} (
        id bigint primary key,
        page_id bigint not null,
        url text not null,
        title text not null,
        heading_path text not null,
        body text not null,
        tsv tsvector generated always as (
          setweight(to_tsvector('${cfg}', title), 'A') ||
          setweight(to_tsvector('${cfg}', heading_path), 'B') ||
          setweight(to_tsvector('${cfg}', body), 'C')
        ) stored
      )`.execute(trx);
      // The page's facts (language, navigation page, translation group) that search filters on.
      for (const column of ['language text', 'language_primary text', 'navigation boolean not null default false', 'translation_key text']) {
        await sql`alter table ${t} add column if not exists ${sql.raw(column)}`.execute(trx);
      }
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
          setweight(to_tsvector('${cfg}', title), 'A') ||
          setweight(to_tsvector('${cfg}', headings), 'B') ||
          setweight(to_tsvector('${cfg}', path_words), 'C') ||
          setweight(to_tsvector('${cfg}', body), 'D')
        ) stored
      )`.execute(trx);
      await sql`create index if not exists ${sql.raw(`${this.table}_pages_tsv`)} on ${this.pagesTable} using gin (tsv)`.execute(trx);
      await ensureTermStats(trx, this.table);
      await ensureTermStats(trx, `${this.table}_pages`);
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
      await sql`insert into ${t} (id, page_id, url, title, heading_path, body, language, language_primary, navigation, translation_key) values ${values}
        on conflict (id) do update set page_id = excluded.page_id, url = excluded.url, title = excluded.title,
          heading_path = excluded.heading_path, body = excluded.body, language = excluded.language,
          language_primary = excluded.language_primary, navigation = excluded.navigation, translation_key = excluded.translation_key`.execute(this.db);
    }
  }

  async delete(ids: readonly number[]): Promise<void> {
    const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    for (let i = 0; i < unique.length; i += WRITE_CHUNK) {
      await sql`delete from ${sql.raw(this.table)} where id = any(${unique.slice(i, i + WRITE_CHUNK)}::bigint[])`.execute(this.db);
    }
  }

  /** The WITH list of a search (BM25's statistics) and the score of a row. */
  private rankExpression(query: string) {
    const weights = sql.raw(`'{0, 0.25, 0.5, 1.0}'::float4[]`);
    const none = sql`unused as (select 1)`;
    switch (this.ranking) {
      case 'bm25': {
        const { title, headings, body } = FTS5_COLUMN_WEIGHTS;
        return bm25(this.table, queryTerms(query).join(' '), { A: title, B: headings, C: body, D: 0 });
      }
      case 'ts_rank':
        return { ctes: none, score: sql`ts_rank(${weights}, tsv, q, 1)` };
      case 'ts_rank_nonorm':
        return { ctes: none, score: sql`ts_rank(${weights}, tsv, q, 0)` };
      case 'ts_rank_cd':
        return { ctes: none, score: sql`ts_rank_cd(${weights}, tsv, q, 1)` };
    }
  }

  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const tsquery = typeof query === 'string' ? toTsQuery(query) : null;
    if (tsquery === null || limit === 0) return [];
    const perPage = options.perPageLimit === undefined ? limit : Math.max(1, Math.floor(options.perPageLimit));
    if (options.filter?.pageIds && options.filter.pageIds.length === 0) return [];
    const rank = this.rankExpression(query);
    const result = await sql<HitRow>`
      with ${rank.ctes}
      select id, page_id, url, title, heading_path, body, language, navigation, translation_key, score from (
        select *, row_number() over (partition by page_id order by score desc, id) as page_rank
        from (
          select id, page_id, url, title, heading_path, body, language, navigation, translation_key, ${rank.score} as score
          from ${sql.raw(this.table)}, to_tsquery(${sql.raw(`'${TS_CONFIG}'`)}, ${tsquery}) q
          where tsv @@ q and ${filterConditions(options.filter)}
        ) ranked
      ) paged where page_rank <= ${perPage} order by score desc, id limit ${limit}`.execute(this.db);
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
      await sql`insert into ${this.pagesTable} (page_id, url, title, headings, path_words, body, language, language_primary, navigation, translation_key)
        values ${values}
        on conflict (page_id) do update set url = excluded.url, title = excluded.title, headings = excluded.headings,
          path_words = excluded.path_words, body = excluded.body, language = excluded.language, language_primary = excluded.language_primary,
          navigation = excluded.navigation, translation_key = excluded.translation_key`.execute(db);
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
    const rank =
      this.ranking === 'bm25'
        ? bm25(`${this.table}_pages`, queryTerms(query).join(' '), { A: w.title, B: w.headings, C: w.path, D: w.body })
        : { ctes: sql`unused as (select 1)`, score: sql`ts_rank(${weights}::float4[], tsv, q, 1)` };
    const result = await sql<PageRow>`
      with ${rank.ctes}
      select page_id, url, title, language, navigation, translation_key, ${rank.score} as score
      from ${this.pagesTable}, to_tsquery(${sql.raw(`'${TS_CONFIG}'`)}, ${tsquery}) q
      where tsv @@ q and ${filterConditions(options.filter)}
      order by score desc, page_id limit ${limit}`.execute(this.db);
    return result.rows.map((r) => withFacts({ pageId: Number(r.page_id), url: r.url, title: r.title, score: Number(r.score) }, r));
  }

  async get(ids: readonly number[]): Promise<IndexDoc[]> {
    const wanted = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    if (wanted.length === 0) return [];
    const found = new Map<number, IndexDoc>();
    for (let i = 0; i < wanted.length; i += WRITE_CHUNK) {
      const rows = await sql<HitRow>`select id, page_id, url, title, heading_path, body, language, navigation, translation_key from ${sql.raw(this.table)}
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
          await sql`insert into ${sql.raw(this.table)} (id, page_id, url, title, heading_path, body, language, language_primary, navigation, translation_key) values ${values}
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

function toDoc(r: HitRow): IndexDoc {
  return withFacts({ id: Number(r.id), pageId: Number(r.page_id), url: r.url, title: r.title, headingPath: r.heading_path, text: r.body }, r);
}

/** pgvector's text form of a vector. */
function vectorLiteral(v: Float32Array): string {
  return `[${Array.from(v).join(',')}]`;
}

function parseVector(text: string, dimensions: number): Float32Array | null {
  const values = JSON.parse(text) as number[];
  return values.length === dimensions ? Float32Array.from(values) : null;
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
    const index = new PgVectorIndex(storage, options);
    await index.ensureSchema();
    return index;
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
        throw new NotaryError('invalid_config', `pgvector is not available in this PostgreSQL (${err instanceof Error ? err.message : String(err)}): install it, or use embeddings in the SQL table (indexer.vectors sql)`);
      }
      await sql`create table if not exists passage_embeddings (
        passage_id integer primary key references passages(id) on delete cascade,
        page_id integer not null,
        model text not null,
        dimensions integer not null,
        embedding vector not null
      )`.execute(trx);
      await sql`create index if not exists passage_embeddings_model on passage_embeddings (model, dimensions, passage_id)`.execute(trx);
      await sql`create index if not exists ${sql.raw(hnswName)} on passage_embeddings
        using hnsw ((embedding::${this.typed}) vector_ip_ops)
        where model = ${sql.raw(modelLiteral)} and dimensions = ${sql.raw(String(this.dimensions))}`.execute(trx);
    });
  }

  private ofThisModel() {
    return sql`model = ${this.model} and dimensions = ${this.dimensions}`;
  }

  async upsert(items: readonly PassageVector[]): Promise<void> {
    const byId = new Map<number, PassageVector>();
    items.forEach((item, i) => {
      if (!Number.isSafeInteger(item.id) || !Number.isSafeInteger(item.pageId)) throw new NotaryError('invalid_request', `vector ${i}: id and pageId must be integers`);
      checkVector(item.vector, this.dimensions, `vector for passage ${item.id}`);
      byId.set(item.id, item);
    });
    const unique = [...byId.values()];
    if (unique.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < unique.length; i += WRITE_CHUNK) {
        const values = sql.join(
          unique.slice(i, i + WRITE_CHUNK).map((item) => sql`(${item.id}, ${item.pageId}, ${this.model}, ${this.dimensions}, ${vectorLiteral(item.vector)}::vector)`),
        );
        await sql`insert into passage_embeddings (passage_id, page_id, model, dimensions, embedding) values ${values}
          on conflict (passage_id) do update set page_id = excluded.page_id, model = excluded.model,
            dimensions = excluded.dimensions, embedding = excluded.embedding`.execute(trx);
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
      const rows = await sql<{ passage_id: number; embedding: string }>`select passage_id, embedding::text as embedding from passage_embeddings
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
    if (options.pageIds) {
      // Every passage of these pages scored exactly (the pipeline asks for a few pages' passages at a time).
      const pageIds = options.pageIds.filter((id) => Number.isSafeInteger(id));
      if (pageIds.length === 0) return [];
      const rows = await sql<{ passage_id: number; page_id: number; embedding: string }>`
        select passage_id, page_id, embedding::text as embedding from passage_embeddings
        where ${this.ofThisModel()} and page_id = any(${pageIds}::bigint[])`.execute(this.db);
      const hits: VectorHit[] = [];
      for (const r of rows.rows) {
        const v = parseVector(r.embedding, this.dimensions);
        if (v) hits.push({ id: Number(r.passage_id), pageId: Number(r.page_id), score: dot(v, query) });
      }
      return selectPerPage(hits.sort((a, b) => b.score - a.score || a.id - b.id), limit, perPage, (hit) => hit.pageId);
    }
    const literal = vectorLiteral(query);
    return widenedSearch(limit, perPage, 100_000, async (k) =>
      this.db.transaction().execute(async (trx) => {
        await sql`select set_config('hnsw.ef_search', ${String(Math.min(MAX_EF_SEARCH, Math.max(40, k)))}, true)`.execute(trx);
        await sql`select set_config('hnsw.iterative_scan', 'relaxed_order', true)`.execute(trx);
        const rows = await sql<{ passage_id: number; page_id: number; embedding: string }>`
          select passage_id, page_id, embedding::text as embedding from passage_embeddings
          where ${this.ofThisModel()}
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
