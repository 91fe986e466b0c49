import type BetterSqlite3 from 'better-sqlite3';
import { NotaryError } from '../core/errors.js';
import { contentWords, identifiers } from '../core/text.js';
import { createHash } from 'node:crypto';
import { primaryLanguage } from '../core/language.js';
import { Fts5Reader } from './fts5-reader.js';
import { Fts5Tokenizer, MemoryRanking, type FacetFilter, type Postings } from './fts5-postings.js';
import type { IndexDoc, IndexFilter, IndexHit, IndexSearchOptions, IndexStats, PageDoc, PageHit, SearchIndex } from './search-index.js';

/**
 * Column weights for bm25(): title, headings, body. Measured on the PostgreSQL 15 docs (7,031 passages) with 106
 * known-item queries from the book index (term -> page), MRR@10 over distinct pages: 1:1:1 0.313, 2:1:1 0.328,
 * 4:1:1 0.359, 4:2:1 0.372, 8:4:1 0.378. 4:2:1 takes nearly all of the gain without letting a title word swamp
 * the body.
 */
export const FTS5_COLUMN_WEIGHTS = { title: 4, headings: 2, body: 1 } as const;

/**
 * Column weights of the page-level index (whole pages): title, headings, URL path words, body. bm25() in FTS5 has
 * k1 1.2 and b 0.75 per column; the weights were chosen on development queries (bench/tune-search.ts).
 */
export const FTS5_PAGE_WEIGHTS = { title: 3, headings: 1, path: 1, body: 1 } as const;

const MAX_QUERY_TERMS = 32;

/**
 * Turns any user string into a safe FTS5 MATCH expression: words only (letters, digits, marks), each quoted, OR
 * between them. FTS5 syntax in the input (quotes, *, :, parentheses, NEAR, AND/OR/NOT, -, ^) cannot reach the
 * parser. Returns null when no word is left.
 */
export function toFts5Query(input: string): string | null {
  const phrases = queryPhrases(input);
  return phrases ? phrases.map((phrase) => `"${phrase}"`).join(' OR ') : null;
}

/** The phrases of toFts5Query's expression, in its order (words and spaces only); null when the query has no word. */
function queryPhrases(input: string): string[] | null {
  const terms = [...new Set(contentWords(input))].slice(0, MAX_QUERY_TERMS);
  if (terms.length === 0) return null;
  // The tokenizer splits identifiers (lc_numeric, pg_stat_activity, max.connections) into their parts; the
  // identifier itself also goes in as a phrase, so a passage holding it exactly outscores one holding a part.
  const phrases = identifiers(input).slice(0, MAX_QUERY_TERMS);
  return [...terms, ...phrases.map((parts) => parts.join(' '))];
}

interface HitRow {
  id: number;
  page_id: number;
  url: string;
  title: string;
  heading_path: string;
  body: string;
  lang: string | null;
  nav: number | null;
  tkey: string | null;
  score: number;
}

/** A passage's bm25 score (higher is better). */
interface ScoredRow {
  id: number;
  score: number;
}

/** A match's rank: its passage, page and bm25 score (higher is better). */
interface RankedRow {
  id: number;
  page_id: number;
  score: number;
}

/** Matches ranked at first for the per-page cap (grown fourfold while too few pages survive it). */
const TOP_WINDOW_MIN = 64;

interface PageRow {
  page_id: number;
  url: string;
  title: string;
  lang: string | null;
  nav: number | null;
  tkey: string | null;
  score: number;
}

const TABLE = 'notary_fts';
const PAGES = 'notary_fts_pages';
const META = 'notary_fts_meta';
/** Version of the two tables' columns; a different stored one means they are made again (and pages re-indexed). */
const SCHEMA_VERSION = '3';
const TOKENIZE = `tokenize = 'porter unicode61 remove_diacritics 2'`;

/** Filter tokens in the `facets` column: one word each, so the tokenizer keeps them whole. */
function languageToken(language: string | null | undefined): string {
  return `lang${language ? primaryLanguage(language).replace(/[^a-z]/g, '') : 'und'}`;
}
const NAVIGATION_TOKEN = 'navpage';
/**
 * A passage's page as a filter token, so a search restricted to a few pages intersects their short lists instead of
 * ranking every match and dropping the other pages (at a million passages 29 ms p50 against a few ms). Digits end
 * it, so the Porter stemmer leaves it whole; no word begins with "zzpg".
 */
function pageToken(pageId: number): string {
  return `zzpg${pageId}`;
}
function translationToken(key: string): string {
  return `tk${createHash('sha1').update(key).digest('hex').slice(0, 16).replace(/\d/g, (d) => 'abcdefghij'[Number(d)] ?? 'x')}`;
}

function facetsOf(doc: { language?: string; navigation?: boolean; translationKey?: string }): string {
  const tokens = [languageToken(doc.language), doc.navigation ? NAVIGATION_TOKEN : 'contentpage'];
  if (doc.translationKey) tokens.push(translationToken(doc.translationKey));
  return tokens.join(' ');
}

/**
 * A passage's facets: its page token takes the place of "contentpage" (which no filter reads), so a content
 * passage has as many tokens as before. bm25() normalises by a row's length counting every column, facets too: one
 * more token in every row would shift every score a little and reorder near-ties (seen on Cranfield and the
 * PostgreSQL docs). Navigation passages keep their token and gain the page's.
 */
function passageFacetsOf(doc: IndexDoc): string {
  const tokens = [languageToken(doc.language)];
  if (doc.navigation) tokens.push(NAVIGATION_TOKEN);
  tokens.push(pageToken(doc.pageId));
  if (doc.translationKey) tokens.push(translationToken(doc.translationKey));
  return tokens.join(' ');
}

/**
 * The lowest and highest passage rowid. One subquery each: SQLite reads a min() or a max() off the end of the rowid
 * tree only when it stands alone in its SELECT; both in one SELECT scan every row (100 ms at a million).
 */
export const PASSAGE_ROWID_RANGE_SQL = `SELECT (SELECT min(id) FROM ${TABLE}_docsize) AS lo, (SELECT max(id) FROM ${TABLE}_docsize) AS hi`;

/** The text columns of each table: a query's words match these only, never the filter tokens of `facets`. */
const PASSAGE_TEXT = '{title headings body}';
const PAGE_TEXT = '{title headings path body}';

/** The most of `perPage` rows a page and of `limit` rows in all, from a ranking best first. */
function keepPerPage(ranked: readonly RankedRow[], perPage: number, limit: number): RankedRow[] {
  const perPageCount = new Map<number, number>();
  const kept: RankedRow[] = [];
  for (const row of ranked) {
    if (kept.length >= limit) break;
    const n = perPageCount.get(row.page_id) ?? 0;
    if (n >= perPage) continue;
    perPageCount.set(row.page_id, n + 1);
    kept.push(row);
  }
  return kept;
}

/** The MATCH expression of `query` over `columns`, narrowed by `filter`'s facets; null when the query has no word. */
function filteredMatch(query: string, filter: IndexFilter | undefined, columns: string): string | null {
  const match = typeof query === 'string' ? toFts5Query(query) : null;
  if (match === null) return null;
  let expr = `(${columns} : (${match}))`;
  if (filter?.languages && filter.languages.length > 0) {
    const tokens = [...new Set([...filter.languages.map(languageToken), languageToken(null)])];
    expr += ` AND facets : (${tokens.map((t) => `"${t}"`).join(' OR ')})`;
  }
  if (filter?.translationKey) expr += ` AND facets : "${translationToken(filter.translationKey)}"`;
  if (filter?.excludeNavigation) expr = `(${expr}) NOT facets : "${NAVIGATION_TOKEN}"`;
  return expr;
}

/**
 * The first SQLite varint of `bytes` (big-endian groups of 7 bits, high bit set on all but the last; a ninth byte
 * gives 8 bits), as FTS5 writes its record of row and token counts; 0 when `bytes` ends inside one.
 */
export function readVarint(bytes: Uint8Array): number {
  let value = 0;
  for (let i = 0; i < 9 && i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (i === 8) return value * 256 + byte;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return value;
  }
  return 0;
}

/** URL path words ("/library/os.path.html" -> "library os path"), the page's own address as evidence. */
export function pathWords(url: string): string {
  try {
    const { pathname } = new URL(url);
    return decodeURIComponent(pathname)
      .replace(/\.(?:s?html?|php|aspx?|jsp)$/i, '')
      .replace(/(?:^|\/)index$/i, '')
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  } catch {
    return '';
  }
}

function withFacts<T extends object>(base: T, row: { lang: string | null; nav: number | null; tkey: string | null }): T & Pick<IndexDoc, 'language' | 'navigation' | 'translationKey'> {
  return {
    ...base,
    ...(row.lang ? { language: row.lang } : {}),
    ...(row.nav ? { navigation: true } : {}),
    ...(row.tkey ? { translationKey: row.tkey } : {}),
  };
}

/**
 * Rankings of recent queries (ids and scores, no text), dropped whole when the index's write generation moves on:
 * ranking is the costly part of a full-text search (bm25 of every match), and a repeated query over an unchanged
 * index ranks the same. Least recently used entries go first beyond `capacity`.
 */
class RankingCache {
  private readonly entries = new Map<string, readonly RankedRow[]>();
  private generation = '';

  constructor(readonly capacity: number) {}

  get(key: string, generation: string): readonly RankedRow[] | undefined {
    if (this.capacity === 0) return undefined;
    if (generation !== this.generation) {
      this.entries.clear();
      this.generation = generation;
      return undefined;
    }
    const rows = this.entries.get(key);
    if (rows) {
      this.entries.delete(key);
      this.entries.set(key, rows);
    }
    return rows;
  }

  /** Keeps rows ranked at the generation of the last get(): a search reads the generation before it ranks. */
  set(key: string, rows: readonly RankedRow[]): void {
    if (this.capacity === 0) return;
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, rows);
  }
}

/**
 * SQLite FTS5 index in the storage database file: one table of passages (title, headings, body) and one of whole
 * pages (title, headings, URL path words, body), each with a `facets` column of filter tokens (language, navigation
 * page, translation group) and the unindexed fields a hit needs. Passage rowid = passage id, page rowid = page id.
 */
export class Fts5SearchIndex implements SearchIndex {
  readonly name = 'sqlite-fts5';
  /** True when the tables were made anew over an older layout: every page must be indexed again. */
  readonly rebuilt: boolean;
  private readonly deleteStmt: BetterSqlite3.Statement<[number]>;
  private readonly insertStmt: BetterSqlite3.Statement<[number, string, string, string, string, number, string, string | null, number, string | null]>;
  private readonly deletePageStmt: BetterSqlite3.Statement<[number]>;
  private readonly insertPageStmt: BetterSqlite3.Statement<[number, string, string, string, string, string, string, string | null, number, string | null]>;
  private readonly searchStmts = new Map<string, BetterSqlite3.Statement<unknown[]>>();
  /** A counter in the meta table that every write transaction to either table bumps (in any process). */
  private readonly generationStmt: BetterSqlite3.Statement<[], string>;
  private readonly rankings: RankingCache;
  private reader: Fts5Reader | null = null;
  /** Two readers of passages, each ranking half of the rowid range (made when the table first reaches the size). */
  private passagesReaders: readonly Fts5Reader[] = [];
  private readonly rowidRangeStmt: BetterSqlite3.Statement<[], { lo: number | null; hi: number | null }>;
  /** FTS5's averages record of the passage table (its first varint is the row count). */
  private readonly averagesStmt: BetterSqlite3.Statement<[], Buffer | undefined>;
  private readonly countStmt: BetterSqlite3.Statement<[]>;
  private readonly getManyStmt: BetterSqlite3.Statement<[string]>;
  private readonly upsertMany: (docs: readonly IndexDoc[]) => void;
  /** In-memory rankings of the passage and page tables (made at first use; see options.memoryRankingUpTo). */
  private memory: { passages: MemoryRanking; pages: MemoryRanking; tokenizer: Fts5Tokenizer } | null = null;
  private readonly deleteMany: (ids: readonly number[]) => void;
  private readonly upsertPagesMany: (docs: readonly PageDoc[]) => void;
  private readonly deletePagesMany: (ids: readonly number[]) => void;

  /** `ownsHandle`: close the database handle on close() (the storage layer usually owns it). */
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly options: {
      ownsHandle?: boolean;
      pageWeights?: Partial<typeof FTS5_PAGE_WEIGHTS>;
      /** Rankings kept for repeated queries (0 = none; default none, the runtime passes search.ranking_cache). */
      rankingCache?: number;
      /**
       * Rank whole pages on a second, read-only connection in a worker thread (opened at the first page search), so
       * that a search's page and passage queries run at once. Needs a database file; default off.
       */
      pageReader?: boolean;
      /**
       * From this many passages on, rank passages on two read-only connections in worker threads, each over half of
       * the rowid range, so that the calling thread stays free while the costly bm25() of every match runs (a
       * search's vector stage is sent from it meanwhile) and two cores share it. Needs a database file; 0 or absent =
       * never.
       */
      passageReaderAbove?: number;
      /**
       * Up to this many passages, rank from a copy of both tables' full-text index held in memory (built in a worker
       * thread from a read-only connection, used only while no write has happened since) with bm25 computed as FTS5
       * computes it: the same rankings, without FTS5 scoring every match row by row. Needs a database file; 0 or
       * absent = never.
       */
      memoryRankingUpTo?: number;
      /** Searches wait for a memory build under way, and each write is followed by a build at once (tests). */
      waitForMemoryRanking?: boolean;
    } = {},
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS ${META} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const version = (db.prepare(`SELECT value FROM ${META} WHERE key = 'schema'`).get() as { value: string } | undefined)?.value;
    const existing = db.prepare(`SELECT name FROM sqlite_master WHERE name = ?`).get(TABLE) !== undefined;
    this.rebuilt = existing && version !== SCHEMA_VERSION;
    if (this.rebuilt) {
      db.exec(`DROP TABLE IF EXISTS ${TABLE}; DROP TABLE IF EXISTS ${PAGES};`);
    }
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${TABLE} USING fts5(` +
        `title, headings, body, facets, page_id UNINDEXED, url UNINDEXED, lang UNINDEXED, nav UNINDEXED, tkey UNINDEXED, ${TOKENIZE})`,
    );
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${PAGES} USING fts5(` +
        `title, headings, path, body, facets, url UNINDEXED, lang UNINDEXED, nav UNINDEXED, tkey UNINDEXED, ${TOKENIZE})`,
    );
    db.prepare(`INSERT INTO ${META} (key, value) VALUES ('schema', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`).run(SCHEMA_VERSION);
    db.prepare(`INSERT INTO ${META} (key, value) VALUES ('generation', '0') ON CONFLICT(key) DO NOTHING`).run();
    this.generationStmt = db.prepare<[], string>(`SELECT value FROM ${META} WHERE key = 'generation'`).pluck();
    const bumpGeneration = db.prepare(`UPDATE ${META} SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'`);
    if (this.rebuilt) bumpGeneration.run();
    this.rankings = new RankingCache(options.rankingCache ?? 0);
    this.deleteStmt = db.prepare(`DELETE FROM ${TABLE} WHERE rowid = ?`);
    this.insertStmt = db.prepare(
      `INSERT INTO ${TABLE} (rowid, title, headings, body, facets, page_id, url, lang, nav, tkey) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.deletePageStmt = db.prepare(`DELETE FROM ${PAGES} WHERE rowid = ?`);
    this.insertPageStmt = db.prepare(
      `INSERT INTO ${PAGES} (rowid, title, headings, path, body, facets, url, lang, nav, tkey) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.countStmt = db.prepare(`SELECT count(*) AS n FROM ${TABLE}`);
    this.averagesStmt = db.prepare<[], Buffer | undefined>(`SELECT block FROM ${TABLE}_data WHERE id = 1`).pluck();
    this.rowidRangeStmt = db.prepare(PASSAGE_ROWID_RANGE_SQL);
    this.getManyStmt = db.prepare(
      `SELECT rowid AS id, page_id, url, title, headings AS heading_path, body, lang, nav, tkey FROM ${TABLE} WHERE rowid IN (SELECT value FROM json_each(?))`,
    );
    this.upsertMany = db.transaction((docs: readonly IndexDoc[]) => {
      for (const doc of docs) {
        this.deleteStmt.run(doc.id);
        this.insertStmt.run(doc.id, doc.title, doc.headingPath, doc.text, passageFacetsOf(doc), doc.pageId, doc.url, doc.language ?? null, doc.navigation ? 1 : 0, doc.translationKey ?? null);
      }
      bumpGeneration.run();
    });
    this.deleteMany = db.transaction((ids: readonly number[]) => {
      for (const id of ids) this.deleteStmt.run(id);
      bumpGeneration.run();
    });
    this.upsertPagesMany = db.transaction((docs: readonly PageDoc[]) => {
      for (const doc of docs) {
        this.deletePageStmt.run(doc.pageId);
        this.insertPageStmt.run(
          doc.pageId, doc.title, doc.headings, pathWords(doc.url), doc.text, facetsOf(doc), doc.url, doc.language ?? null, doc.navigation ? 1 : 0, doc.translationKey ?? null,
        );
      }
      bumpGeneration.run();
    });
    this.deletePagesMany = db.transaction((ids: readonly number[]) => {
      for (const id of ids) this.deletePageStmt.run(id);
      bumpGeneration.run();
    });
  }

  private statement(key: string, sql: () => string): BetterSqlite3.Statement<unknown[]> {
    let stmt = this.searchStmts.get(key);
    if (!stmt) this.searchStmts.set(key, (stmt = this.db.prepare(sql())));
    return stmt;
  }

  async upsert(docs: readonly IndexDoc[]): Promise<void> {
    for (const doc of docs) {
      if (!Number.isSafeInteger(doc.id)) throw new NotaryError('invalid_request', `index document id must be an integer, got ${doc.id}`);
    }
    if (docs.length > 0) this.upsertMany(docs);
  }

  async delete(ids: readonly number[]): Promise<void> {
    if (ids.length > 0) this.deleteMany(ids);
  }

  async upsertPages(pages: readonly PageDoc[]): Promise<void> {
    for (const page of pages) {
      if (!Number.isSafeInteger(page.pageId)) throw new NotaryError('invalid_request', `page id must be an integer, got ${page.pageId}`);
    }
    if (pages.length > 0) this.upsertPagesMany(pages);
  }

  async deletePages(pageIds: readonly number[]): Promise<void> {
    if (pageIds.length > 0) this.deletePagesMany(pageIds);
  }

  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const match = filteredMatch(query, options.filter, PASSAGE_TEXT);
    if (match === null || limit === 0) return [];
    const perPage = options.perPageLimit === undefined ? limit : Math.max(1, Math.floor(options.perPageLimit));
    const pageIds = options.filter?.pageIds;
    if (pageIds && pageIds.length === 0) return [];
    const key = `passages\u0000${match}\u0000${limit}\u0000${perPage}\u0000${pageIds ? pageIds.join(',') : ''}`;
    const cached = this.rankings.get(key, this.generation());
    if (cached) return this.hitsOf(cached);
    const ranked = (await this.passagesInMemory(query, options.filter, limit, perPage)) ?? (await this.rankPassages(match, limit, perPage, pageIds));
    this.rankings.set(key, ranked);
    return this.hitsOf(ranked);
  }

  /** The index's write generation, read when a ranking cache is kept (a few microseconds). */
  private generation(): string {
    return this.rankings.capacity > 0 ? this.generationStmt.get() ?? '0' : '0';
  }

  private async rankPassages(match: string, limit: number, perPage: number, pageIds: readonly number[] | undefined): Promise<RankedRow[]> {
    const { title, headings, body } = FTS5_COLUMN_WEIGHTS;
    const bm25 = `-bm25(${TABLE}, ${title}, ${headings}, ${body}, 0, 0, 0, 0, 0, 0)`;
    if (pageIds) {
      // A few pages (a reflection pass reading its best pages, pages without a passage yet): every match of those
      // pages is ranked. The page tokens sit in the facets column, whose bm25 weight is 0: scores are those of the
      // unrestricted search.
      const pages = pageIds.filter((id) => Number.isSafeInteger(id));
      if (pages.length === 0) return [];
      const stmt = this.statement('passages-in-pages', () =>
        `SELECT id, page_id, score FROM (
           SELECT *, row_number() OVER (PARTITION BY page_id ORDER BY score DESC, id) AS page_rank
           FROM (SELECT rowid AS id, page_id, ${bm25} AS score FROM ${TABLE} WHERE ${TABLE} MATCH ?)
         ) WHERE page_rank <= ? ORDER BY score DESC, id LIMIT ?`,
      );
      const inPages = `(${match}) AND facets : (${pages.map((id) => `"${pageToken(id)}"`).join(' OR ')})`;
      return stmt.all(inPages, perPage, limit) as RankedRow[];
    }
    // Ranking reads no stored column: bm25() needs only the full-text index, so the best `window` matches by score
    // come first, then their pages (to keep `perPage` a page) and, for the few kept, their text. Reading every
    // match's columns, as one SELECT with a window function does, costs several times the ranking itself.
    const pageOf = this.statement('passage-pages', () => `SELECT rowid AS id, page_id FROM ${TABLE} WHERE rowid IN (SELECT value FROM json_each(?))`);
    const readers = this.passageReaders();
    let window = Math.max(TOP_WINDOW_MIN, limit * 2);
    for (;;) {
      const ranked = await this.topPassages(readers, bm25, match, window);
      const pages = new Map((pageOf.all(JSON.stringify(ranked.map((r) => r.id))) as Array<{ id: number; page_id: number }>).map((r) => [r.id, r.page_id]));
      const withPages = ranked.flatMap((row) => {
        const pageId = pages.get(row.id);
        return pageId === undefined ? [] : [{ id: row.id, page_id: pageId, score: row.score }];
      });
      const kept = keepPerPage(withPages, perPage, limit);
      // Fewer than `limit` survive the per-page cap only when the window was too small (or the matches ran out).
      if (kept.length >= limit || ranked.length < window) return kept;
      window *= 4;
    }
  }

  /** The stored fields of ranked rows, in their order. */
  private hitsOf(ranked: readonly RankedRow[]): IndexHit[] {
    if (ranked.length === 0) return [];
    const rows = new Map((this.getManyStmt.all(JSON.stringify(ranked.map((r) => r.id))) as Array<Omit<HitRow, 'score'>>).map((r) => [r.id, r]));
    return ranked.flatMap(({ id, page_id: pageId, score }) => {
      const r = rows.get(id);
      return r ? [withFacts({ id, pageId, url: r.url, title: r.title, headingPath: r.heading_path, text: r.body, score }, r)] : [];
    });
  }

  async searchPages(query: string, options: { limit: number; filter?: IndexFilter }): Promise<PageHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const match = filteredMatch(query, options.filter, PAGE_TEXT);
    if (match === null || limit === 0) return [];
    const w = { ...FTS5_PAGE_WEIGHTS, ...this.options.pageWeights };
    const key = `pages\u0000${match}\u0000${limit}`;
    let ranked = this.rankings.get(key, this.generation())?.map((r) => ({ page_id: r.page_id, score: r.score }));
    if (!ranked) {
      const sql = `SELECT rowid AS page_id, -bm25(${PAGES}, ${w.title}, ${w.headings}, ${w.path}, ${w.body}, 0, 0, 0, 0, 0) AS score
         FROM ${PAGES} WHERE ${PAGES} MATCH ? ORDER BY score DESC, rowid LIMIT ?`;
      ranked =
        (await this.pagesInMemory(query, options.filter, w, limit)) ??
        ((await this.rankOn(this.pageReader(), 'pages-top', sql, [match, limit])) as Array<{ page_id: number; score: number }>);
      this.rankings.set(key, ranked.map((r) => ({ id: r.page_id, page_id: r.page_id, score: r.score })));
    }
    if (ranked.length === 0) return [];
    const fields = this.statement('page-rows', () =>
      `SELECT rowid AS page_id, url, title, lang, nav, tkey FROM ${PAGES} WHERE rowid IN (SELECT value FROM json_each(?))`,
    );
    const rows = new Map((fields.all(JSON.stringify(ranked.map((r) => r.page_id))) as Array<Omit<PageRow, 'score'>>).map((r) => [r.page_id, r]));
    return ranked.flatMap(({ page_id: pageId, score }) => {
      const r = rows.get(pageId);
      return r ? [withFacts({ pageId, url: r.url, title: r.title, score }, r)] : [];
    });
  }

  async get(ids: readonly number[]): Promise<IndexDoc[]> {
    const wanted = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    if (wanted.length === 0) return [];
    // One statement for the whole list: a search asks for every vector hit missing from its full-text hits.
    const rows = new Map((this.getManyStmt.all(JSON.stringify(wanted)) as Array<Omit<HitRow, 'score'>>).map((r) => [r.id, r]));
    return wanted.flatMap((id) => {
      const row = rows.get(id);
      return row ? [withFacts({ id: row.id, pageId: row.page_id, url: row.url, title: row.title, headingPath: row.heading_path, text: row.body }, row)] : [];
    });
  }

  async stats(): Promise<IndexStats> {
    const { n } = this.countStmt.get() as { n: number };
    return { documents: n, bytes: this.bytesOnDisk(), backend: this.name };
  }

  private bytesOnDisk(): number | null {
    try {
      const row = this.db
        .prepare(`SELECT sum(pgsize) AS bytes FROM dbstat WHERE name IN (?, ?) OR name GLOB ? OR name GLOB ?`)
        .get(TABLE, PAGES, `${TABLE}_*`, `${PAGES}_*`) as { bytes: number | null };
      return row.bytes ?? 0;
    } catch {
      return null;
    }
  }

  /**
   * The best `window` passages by bm25. With readers, each ranks half of the rowid range at once and the two lists
   * are merged: bm25() takes its statistics from the whole table whatever the range, so the scores, and the merged
   * list, are those of one query over every row.
   */
  private async topPassages(readers: readonly Fts5Reader[], bm25: string, match: string, window: number): Promise<ScoredRow[]> {
    const ranked = (range: string) => `SELECT rowid AS id, ${bm25} AS score FROM ${TABLE} WHERE ${TABLE} MATCH ?${range} ORDER BY score DESC, rowid LIMIT ?`;
    const [low, high] = readers;
    // The rowid range is read only when there are readers to split it between (not on every small search).
    const { lo, hi } = (low && high ? this.rowidRangeStmt.get() : undefined) ?? { lo: null, hi: null };
    if (low && high && lo !== null && hi !== null && hi > lo) {
      const middle = Math.floor((lo + hi) / 2);
      try {
        const halves = await Promise.all([
          low.all(ranked(' AND rowid <= ?'), [match, middle, window]),
          high.all(ranked(' AND rowid > ?'), [match, middle, window]),
        ]);
        return (halves.flat() as ScoredRow[]).sort((a, b) => b.score - a.score || a.id - b.id).slice(0, window);
      } catch {
        // a worker failed: this connection ranks instead (and from now on, the reader being no longer usable)
      }
    }
    return (await this.rankOn(null, 'passages-top', ranked(''), [match, window])) as ScoredRow[];
  }

  /** Rows of a ranking query, run on `reader` when there is one, else (or when the worker failed) on this connection. */
  private async rankOn(reader: Fts5Reader | null, key: string, sql: string, params: unknown[]): Promise<unknown[]> {
    if (reader) {
      try {
        return await reader.all(sql, params);
      } catch {
        // the worker failed: this connection ranks instead (and from now on, since the reader is no longer usable)
      }
    }
    return this.statement(key, () => sql).all(...params);
  }

  /** Builds and rankings of the in-memory copies (null when options.memoryRankingUpTo is off or not reached yet). */
  memoryRankingCounts(): { passages: MemoryRanking['counts']; pages: MemoryRanking['counts']; bytes: number } | null {
    if (!this.memory) return null;
    const bytes = this.memory.passages.bytes + this.memory.pages.bytes;
    return { passages: { ...this.memory.passages.counts }, pages: { ...this.memory.pages.counts }, bytes };
  }

  /** The in-memory copies of the index, when memory ranking applies (see memoryRankingReady). */
  async warm(): Promise<void> {
    await this.memoryRankingReady();
  }

  /**
   * Builds the in-memory copies now, when memory ranking applies, and waits for them (a server warming up, a
   * benchmark timing the shipped path); false when it does not apply or a build failed.
   */
  async memoryRankingReady(): Promise<boolean> {
    const memory = this.memoryRankings();
    if (!memory) return false;
    const generation = this.generationStmt.get() ?? '0';
    const [passages, pages] = await Promise.all([memory.passages.ready(generation), memory.pages.ready(generation)]);
    return passages && pages;
  }

  /** The memory rankings when asked for and the passage table holds at most memoryRankingUpTo rows; else null. */
  private memoryRankings(): { passages: MemoryRanking; pages: MemoryRanking; tokenizer: Fts5Tokenizer } | null {
    const upTo = this.options.memoryRankingUpTo ?? 0;
    const file = this.db.name;
    if (upTo <= 0 || !file || file === ':memory:' || this.db.memory) return null;
    if (this.passageCount() > upTo) return null;
    if (!this.memory) {
      const generationSql = `SELECT value FROM ${META} WHERE key = 'generation'`;
      const options = { waitForBuild: this.options.waitForMemoryRanking ?? false };
      this.memory = {
        passages: new MemoryRanking({ file, table: TABLE, facetsColumn: 'facets', pageIdColumn: 'page_id', generationSql }, options),
        pages: new MemoryRanking({ file, table: PAGES, facetsColumn: 'facets', pageIdColumn: null, generationSql }, options),
        tokenizer: new Fts5Tokenizer(TOKENIZE),
      };
    }
    return this.memory;
  }

  /**
   * The query's phrases and the filter's facet tokens as the index holds them (through its tokenizer); null when one
   * is not a single token where FTS5 would read one, or a phrase has no token (SQL ranks those).
   */
  private memoryQuery(tokenizer: Fts5Tokenizer, query: string, filter: IndexFilter | undefined): { phrases: (readonly string[])[]; facets: FacetFilter } | null {
    const phrases = queryPhrases(query)?.map((phrase) => tokenizer.tokens(phrase));
    if (!phrases || phrases.some((tokens) => tokens.length === 0)) return null;
    const token = (text: string): string | null => {
      const tokens = tokenizer.tokens(text);
      return tokens.length === 1 ? tokens[0]! : null;
    };
    const groups: Array<Array<string | null>> = [];
    if (filter?.languages && filter.languages.length > 0) groups.push([...new Set([...filter.languages.map(languageToken), languageToken(null)])].map(token));
    if (filter?.translationKey) groups.push([token(translationToken(filter.translationKey))]);
    if (filter?.pageIds) groups.push(filter.pageIds.filter((id) => Number.isSafeInteger(id)).map((id) => token(pageToken(id))));
    const without = filter?.excludeNavigation ? [token(NAVIGATION_TOKEN)] : [];
    if (groups.some((group) => group.includes(null)) || without.includes(null)) return null;
    return { phrases, facets: { anyOf: groups as string[][], without: without as string[] } };
  }

  /**
   * The current in-memory copy of `table` and the query as it reads it, when memory ranking applies and gives SQL's
   * ranking for this query (counted as answered); else null.
   */
  private async memoryPlan(
    table: 'passages' | 'pages',
    query: string,
    filter: IndexFilter | undefined,
  ): Promise<{ postings: Postings; phrases: (readonly string[])[]; facets: FacetFilter } | null> {
    const memory = this.memoryRankings();
    const postings = memory ? await memory[table].current(this.generationStmt.get() ?? '0') : null;
    const planned = memory && postings ? this.memoryQuery(memory.tokenizer, query, filter) : null;
    if (!memory || !postings || !planned || !postings.ranks(planned.phrases)) return null;
    memory[table].answered();
    return { postings, ...planned };
  }

  private async passagesInMemory(query: string, filter: IndexFilter | undefined, limit: number, perPage: number): Promise<RankedRow[] | null> {
    const plan = await this.memoryPlan('passages', query, filter);
    if (!plan) return null;
    const { title, headings, body } = FTS5_COLUMN_WEIGHTS;
    // As in SQL: the best `window` rows, the window growing while the per-page cap leaves fewer than `limit`.
    let window = perPage >= limit ? limit : Math.max(TOP_WINDOW_MIN, limit * 2);
    for (;;) {
      const ranked = plan.postings.rank(plan.phrases, [title, headings, body, 0, 0, 0, 0, 0, 0], plan.facets, window);
      const kept = keepPerPage(ranked, perPage, limit);
      if (kept.length >= limit || ranked.length < window) return kept;
      window *= 4;
    }
  }

  private async pagesInMemory(query: string, filter: IndexFilter | undefined, w: typeof FTS5_PAGE_WEIGHTS, limit: number): Promise<Array<{ page_id: number; score: number }> | null> {
    const plan = await this.memoryPlan('pages', query, filter);
    if (!plan) return null;
    const ranked = plan.postings.rank(plan.phrases, [w.title, w.headings, w.path, w.body, 0, 0, 0, 0, 0], plan.facets, limit);
    return ranked.map((row) => ({ page_id: row.id, score: row.score }));
  }

  /** The page reader when asked for and usable: made at first use, over this connection's database file. */
  private pageReader(): Fts5Reader | null {
    if (!this.options.pageReader) return null;
    if (!this.reader) {
      const file = this.db.name;
      if (!file || file === ':memory:' || this.db.memory) return null;
      this.reader = new Fts5Reader(file);
    }
    return this.reader.usable ? this.reader : null;
  }

  /**
   * The passage readers when asked for, both usable, and the table holds at least `passageReaderAbove` rows (below
   * that a query costs less than the trip to the workers saves); else none.
   */
  private passageReaders(): readonly Fts5Reader[] {
    const above = this.options.passageReaderAbove ?? 0;
    if (above <= 0) return [];
    const file = this.db.name;
    if (!file || file === ':memory:' || this.db.memory) return [];
    if (this.passageCount() < above) return [];
    if (this.passagesReaders.length === 0) this.passagesReaders = [new Fts5Reader(file), new Fts5Reader(file)];
    return this.passagesReaders.every((reader) => reader.usable) ? this.passagesReaders : [];
  }

  /** Rows in the passage table, from FTS5's averages record (one small read; 0 when it cannot be read). */
  private passageCount(): number {
    const block = this.averagesStmt.get();
    return block ? readVarint(block) : 0;
  }

  async close(): Promise<void> {
    const memory = this.memory;
    this.memory = null;
    await Promise.all([memory?.passages.close(), memory?.pages.close()]);
    memory?.tokenizer.close();
    await this.reader?.close();
    this.reader = null;
    await Promise.all(this.passagesReaders.map((reader) => reader.close()));
    this.passagesReaders = [];
    if (this.options.ownsHandle && this.db.open) this.db.close();
  }
}
