import type BetterSqlite3 from 'better-sqlite3';
import { NotaryError, withoutWordBreaks } from '../../../core/index.js';
import { withFacts, type StoredFacts } from '../../hit-facts.js';
import type { IndexDoc, IndexFilter, IndexHit, IndexSearchOptions, IndexStats, PageDoc, PageHit, SearchIndex } from '../../search-index.js';
import { Fts5MemoryRankings, type Fts5MemoryOptions } from './memory-rankings.js';
import type { MemoryRanking } from './memory-ranking.js';
import { filteredMatch, PAGE_TEXT, PASSAGE_TEXT } from './query.js';
import { FTS5_PAGE_WEIGHTS, type RankedRow } from './ranking.js';
import { RankingCache } from './ranking-cache.js';
import { Fts5ReaderPool, type Fts5ReaderOptions } from './reader-pool.js';
import { AVERAGES_SQL, createFts5Tables, GENERATION_SQL, PAGES, readVarint, TABLE } from './schema.js';
import { SqlRanking } from './sql-ranking.js';
import { Fts5Writes } from './writes.js';
import { createFactTables, factCondition, PAGE_FACTS, PASSAGE_FACTS } from './fact-tables.js';
import { createCollectionTables } from './collection-tables.js';
import { factFilterKey } from '../../filter-facts.js';
import { StoredRows } from './stored-rows.js';
import { noteLocalWrite, TurnMemo } from '../../turn-memo.js';

/** Passages whose stored fields a process keeps between searches (stored-rows.ts): about 2 KB each. */
const STORED_ROWS_KEPT = 8_192;

/** Passages read per statement when warm() fills the kept rows. */
const WARM_CHUNK = 500;

/** A row's text fields as they were given (the word breaks of unspaced scripts taken out). */
function storedText(row: Pick<HitRow, 'title' | 'heading_path' | 'body'>): { title: string; headingPath: string; text: string } {
  return { title: withoutWordBreaks(row.title), headingPath: withoutWordBreaks(row.heading_path), text: withoutWordBreaks(row.body) };
}

export interface Fts5IndexOptions extends Fts5ReaderOptions, Fts5MemoryOptions {
  /** Close the database handle on close() (the storage layer usually owns it). */
  ownsHandle?: boolean;
  pageWeights?: Partial<typeof FTS5_PAGE_WEIGHTS>;
  /** Rankings kept for repeated queries (0 = none; default none, the plug-in passes indexer.sqlite-fts5.ranking_cache). */
  rankingCache?: number;
  /** Passages whose stored fields are kept between searches until the next write (default 8,192; 0 = none). */
  storedRows?: number;
}

/** A passage's stored fields as a hit shows them: its text fields without word breaks, its facts as IndexDoc members. */
interface StoredPassage {
  pageId: number;
  url: string;
  title: string;
  headingPath: string;
  text: string;
  facts: Pick<IndexDoc, 'language' | 'navigation' | 'translationKey' | 'publishedAt'>;
}

/** The stored columns a hit is made of. */
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
  published: number | null;
}

interface PageRow {
  page_id: number;
  url: string;
  title: string;
  lang: string | null;
  nav: number | null;
  tkey: string | null;
  published: number | null;
}

/** A row's facts columns (lang, nav, tkey) by their names in IndexDoc. */
function facts(row: { lang: string | null; nav: number | null; tkey: string | null; published?: number | null }): StoredFacts {
  return { language: row.lang, navigation: row.nav, translationKey: row.tkey, published: row.published ?? null };
}

/**
 * SQLite FTS5 index in the storage database file: one table of passages (title, headings, body) and one of whole
 * pages (title, headings, URL path words, body), each with a `facets` column of filter tokens (language, navigation
 * page, translation group) and the unindexed fields a hit needs (schema.ts). Passage rowid = passage id, page rowid =
 * page id. A search ranks from memory where that applies (memory-rankings.ts), else in SQL (sql-ranking.ts, on
 * worker threads' connections where there are some), and keeps recent rankings until the next write.
 */
export class Fts5SearchIndex implements SearchIndex {
  readonly name = 'sqlite-fts5';
  /** True when the tables were made anew over an older layout: every page must be indexed again. */
  readonly rebuilt: boolean;
  private readonly writes: Fts5Writes;
  /** The write generation, read once a turn of the event loop (a search asks for it at several steps). */
  private readonly generationNow: TurnMemo<string>;
  /** passageCount() as of `generation`. */
  private counted: { generation: string; count: number } | null = null;
  private readonly passageIdsStmt: BetterSqlite3.Statement<[], number>;
  private readonly rankings: RankingCache;
  private readonly averagesStmt: BetterSqlite3.Statement<[], Buffer | undefined>;
  private readonly countStmt: BetterSqlite3.Statement<[]>;
  private readonly getManyStmt: BetterSqlite3.Statement<[string]>;
  /** Stored fields of passages read by recent searches, until the next write. */
  private readonly stored: StoredRows<StoredPassage>;
  private readonly readers: Fts5ReaderPool;
  private readonly sql: SqlRanking;
  private readonly memory: Fts5MemoryRankings;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly options: Fts5IndexOptions = {},
  ) {
    this.rebuilt = createFts5Tables(db);
    createFactTables(db);
    createCollectionTables(db);
    const generationStmt = db.prepare<[], string>(GENERATION_SQL).pluck();
    this.generationNow = new TurnMemo(db.name, () => generationStmt.get() ?? '0');
    this.passageIdsStmt = db.prepare<[], number>(`SELECT id FROM ${TABLE}_docsize ORDER BY id`).pluck();
    this.rankings = new RankingCache(options.rankingCache ?? 0);
    this.writes = new Fts5Writes(db, () => noteLocalWrite(db.name));
    this.countStmt = db.prepare(`SELECT count(*) AS n FROM ${TABLE}`);
    this.averagesStmt = db.prepare<[], Buffer | undefined>(AVERAGES_SQL).pluck();
    this.getManyStmt = db.prepare(
      `SELECT rowid AS id, page_id, url, title, headings AS heading_path, body, lang, nav, tkey,
         (SELECT published FROM ${PASSAGE_FACTS} WHERE ${PASSAGE_FACTS}.id = ${TABLE}.rowid) AS published
       FROM ${TABLE} WHERE rowid IN (SELECT value FROM json_each(?))`,
    );
    this.stored = new StoredRows(options.storedRows ?? STORED_ROWS_KEPT, (ids) =>
      (this.getManyStmt.all(JSON.stringify(ids)) as HitRow[]).map((r) => ({
        id: r.id,
        row: { pageId: r.page_id, url: r.url, ...storedText(r), facts: withFacts({}, facts(r)) },
      })),
    );
    const passageCount = (): number => this.passageCount();
    this.readers = new Fts5ReaderPool(db, options, passageCount);
    this.sql = new SqlRanking(db, this.readers);
    this.memory = new Fts5MemoryRankings(db, options, passageCount, () => this.generationNow.get());
  }

  async upsert(docs: readonly IndexDoc[]): Promise<void> {
    for (const doc of docs) {
      if (!Number.isSafeInteger(doc.id)) throw new NotaryError('invalid_request', `index document id must be an integer, got ${doc.id}`);
    }
    if (docs.length > 0) this.writes.upsertPassages(docs);
  }

  async delete(ids: readonly number[]): Promise<void> {
    if (ids.length > 0) this.writes.deletePassages(ids);
  }

  async upsertPages(pages: readonly PageDoc[]): Promise<void> {
    for (const page of pages) {
      if (!Number.isSafeInteger(page.pageId)) throw new NotaryError('invalid_request', `page id must be an integer, got ${page.pageId}`);
    }
    if (pages.length > 0) this.writes.upsertPages(pages);
  }

  async deletePages(pageIds: readonly number[]): Promise<void> {
    if (pageIds.length > 0) this.writes.deletePages(pageIds);
  }

  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const match = filteredMatch(query, options.filter, PASSAGE_TEXT);
    if (match === null || limit === 0) return [];
    const perPage = options.perPageLimit === undefined ? limit : Math.max(1, Math.floor(options.perPageLimit));
    const pageIds = options.filter?.pageIds;
    if (pageIds && pageIds.length === 0) return [];
    const key = `passages\u0000${match}\u0000${limit}\u0000${perPage}\u0000${pageIds ? pageIds.join(',') : ''}\u0000${factFilterKey(options.filter)}`;
    const cached = this.rankings.get(key, this.generation());
    if (cached) return this.hitsOf(cached);
    const facts = factCondition(options.filter, PASSAGE_FACTS, 'id');
    const ranked = (await this.memory.passages(query, options.filter, limit, perPage)) ?? (await this.sql.passages(match, limit, perPage, pageIds, facts));
    this.rankings.set(key, ranked);
    return this.hitsOf(ranked);
  }

  /** The stored fields of these passages as of the index's current write generation (kept ones are not read again). */
  private storedPassages(ids: readonly number[]): Map<number, StoredPassage> {
    return this.stored.get(ids, this.generationNow.get());
  }

  /** The index's write generation, read when a ranking cache is kept (a few microseconds). */
  private generation(): string {
    return this.rankings.capacity > 0 ? this.generationNow.get() : '0';
  }

  /** The stored fields of ranked rows, in their order. */
  private hitsOf(ranked: readonly RankedRow[]): IndexHit[] {
    if (ranked.length === 0) return [];
    const rows = this.storedPassages(ranked.map((r) => r.id));
    // The members in withFacts' order (id .. score, then the facts), as when each hit was made from its row.
    return ranked.flatMap(({ id, page_id: pageId, score }) => {
      const r = rows.get(id);
      return r ? [{ id, pageId, url: r.url, title: r.title, headingPath: r.headingPath, text: r.text, score, ...r.facts }] : [];
    });
  }

  async searchPages(query: string, options: { limit: number; filter?: IndexFilter }): Promise<PageHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const match = filteredMatch(query, options.filter, PAGE_TEXT);
    if (match === null || limit === 0) return [];
    const w = { ...FTS5_PAGE_WEIGHTS, ...this.options.pageWeights };
    const key = `pages\u0000${match}\u0000${limit}\u0000${factFilterKey(options.filter)}`;
    let ranked = this.rankings.get(key, this.generation())?.map((r) => ({ page_id: r.page_id, score: r.score }));
    if (!ranked) {
      ranked = (await this.memory.pages(query, options.filter, w, limit)) ?? (await this.sql.pages(match, w, limit, factCondition(options.filter, PAGE_FACTS, 'page_id')));
      this.rankings.set(key, ranked.map((r) => ({ id: r.page_id, page_id: r.page_id, score: r.score })));
    }
    if (ranked.length === 0) return [];
    const fields = this.sql.statement('page-rows', () =>
      `SELECT rowid AS page_id, url, title, lang, nav, tkey, (SELECT published FROM ${PAGE_FACTS} WHERE ${PAGE_FACTS}.page_id = ${PAGES}.rowid) AS published
       FROM ${PAGES} WHERE rowid IN (SELECT value FROM json_each(?))`,
    );
    const rows = new Map((fields.all(JSON.stringify(ranked.map((r) => r.page_id))) as PageRow[]).map((r) => [r.page_id, r]));
    return ranked.flatMap(({ page_id: pageId, score }) => {
      const r = rows.get(pageId);
      return r ? [withFacts({ pageId, url: r.url, title: withoutWordBreaks(r.title), score }, facts(r))] : [];
    });
  }

  async get(ids: readonly number[]): Promise<IndexDoc[]> {
    const wanted = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    if (wanted.length === 0) return [];
    // One statement for the ones not kept: a search asks for every vector hit missing from its full-text hits.
    const rows = this.storedPassages(wanted);
    return wanted.flatMap((id) => {
      const r = rows.get(id);
      return r ? [{ id, pageId: r.pageId, url: r.url, title: r.title, headingPath: r.headingPath, text: r.text, ...r.facts }] : [];
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

  /** Builds and rankings of the in-memory copies (null when options.memoryRankingUpTo is off or not reached yet). */
  memoryRankingCounts(): { passages: MemoryRanking['counts']; pages: MemoryRanking['counts']; bytes: number } | null {
    return this.memory.counts();
  }

  /**
   * The in-memory copies of the index, when memory ranking applies (see memoryRankingReady), and the stored fields
   * of every passage when they all fit in what a process keeps (STORED_ROWS_KEPT): otherwise the first few thousand
   * searches after a start read them (about half a millisecond of a depth-1 search's CPU at first, near none once
   * held; bench/results/depth1-cpu-2026-11-28-stored-rows.json).
   */
  async warm(): Promise<void> {
    await this.memoryRankingReady();
    await this.holdStoredRows();
  }

  /** Reads every passage's stored fields into the kept rows when they fit, a chunk at a time (the event loop runs between). */
  private async holdStoredRows(): Promise<void> {
    if (this.passageCount() > this.stored.capacity) return;
    const generation = this.generationNow.get();
    const ids = this.passageIdsStmt.all();
    if (ids.length > this.stored.capacity) return;
    for (let at = 0; at < ids.length; at += WARM_CHUNK) {
      this.stored.get(ids.slice(at, at + WARM_CHUNK), generation);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Passages whose stored fields this process holds (warm, tests). */
  storedRowsHeld(): number {
    return this.stored.size;
  }

  /**
   * Builds the in-memory copies now, when memory ranking applies, and waits for them (a server warming up, a
   * benchmark timing the shipped path); false when it does not apply or a build failed.
   */
  async memoryRankingReady(): Promise<boolean> {
    return this.memory.ready();
  }

  /** Rows in the passage table, from FTS5's averages record (one small read; 0 when it cannot be read). */
  private passageCount(): number {
    const generation = this.generationNow.get();
    if (this.counted?.generation !== generation) {
      const block = this.averagesStmt.get();
      this.counted = { generation, count: block ? readVarint(block) : 0 };
    }
    return this.counted.count;
  }

  async close(): Promise<void> {
    await this.memory.close();
    await this.readers.close();
    if (this.options.ownsHandle && this.db.open) this.db.close();
  }
}
