import type BetterSqlite3 from 'better-sqlite3';
import { selectPerPage } from '../../page-cap.js';
import type { IndexFilter } from '../../search-index.js';
import { languageToken, NAVIGATION_TOKEN, pageToken, translationToken } from './facets.js';
import { MemoryRanking } from './memory-ranking.js';
import { hasHostOrDateFilter } from '../../filter-facts.js';
import { PAGE_COLLECTIONS, PASSAGE_COLLECTIONS, rowidsIn } from './collection-tables.js';
import type { FacetFilter, Postings } from './postings.js';
import { queryPhrases } from './query.js';
import { FTS5_COLUMN_WEIGHTS, TOP_WINDOW_MIN, type FTS5_PAGE_WEIGHTS, type RankedRow } from './ranking.js';
import { GENERATION_SQL, PAGES, TABLE, TOKENIZE } from './schema.js';
import { Fts5Tokenizer } from './tokenizer.js';

export interface Fts5MemoryOptions {
  /**
   * Up to this many passages, rank from a copy of both tables' full-text index held in memory (built in a worker
   * thread from a read-only connection, used only while no write has happened since) with bm25 computed as FTS5
   * computes it: the same rankings, without FTS5 scoring every match row by row. Needs a database file; 0 or
   * absent = never.
   */
  memoryRankingUpTo?: number;
  /** Searches wait for a memory build under way, and each write is followed by a build at once (tests). */
  waitForMemoryRanking?: boolean;
}

/** The in-memory copies of both tables (made at first use) and the tokenizer that reads queries as they hold them. */
interface Copies {
  passages: MemoryRanking;
  pages: MemoryRanking;
  tokenizer: Fts5Tokenizer;
}

/**
 * Ranking from memory: the FTS5 tables' postings copied into this process (memory-ranking.ts) and ranked with bm25
 * as FTS5 computes it. Each ranking returns null where it does not apply (off, too many passages, no current copy,
 * a query SQL must rank); the caller then ranks in SQL.
 */
export class Fts5MemoryRankings {
  private copies: Copies | null = null;
  /** The rowids of the collections last asked for, by table, collections and write generation. */
  private readonly members = new Map<string, Set<number>>();

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly options: Fts5MemoryOptions,
    /** Rows in the passage table. */
    private readonly passageCount: () => number,
    /** The tables' write generation. */
    private readonly generation: () => string,
  ) {}

  /** The best `limit` passages for `query`, at most `perPage` a page; null when memory ranking does not apply. */
  async passages(query: string, filter: IndexFilter | undefined, limit: number, perPage: number): Promise<RankedRow[] | null> {
    const plan = await this.plan('passages', query, filter);
    if (!plan) return null;
    const { title, headings, body } = FTS5_COLUMN_WEIGHTS;
    // As in SQL: the best `window` rows, the window growing while the per-page cap leaves fewer than `limit`.
    let window = perPage >= limit ? limit : Math.max(TOP_WINDOW_MIN, limit * 2);
    for (;;) {
      const ranked = plan.postings.rank(plan.phrases, [title, headings, body, 0, 0, 0, 0, 0, 0], plan.facets, window);
      const kept = selectPerPage(ranked, limit, perPage, (row) => row.page_id);
      if (kept.length >= limit || ranked.length < window) return kept;
      window *= 4;
    }
  }

  /** The best `limit` whole pages for `query`; null when memory ranking does not apply. */
  async pages(query: string, filter: IndexFilter | undefined, w: typeof FTS5_PAGE_WEIGHTS, limit: number): Promise<Array<{ page_id: number; score: number }> | null> {
    const plan = await this.plan('pages', query, filter);
    if (!plan) return null;
    const ranked = plan.postings.rank(plan.phrases, [w.title, w.headings, w.path, w.body, 0, 0, 0, 0, 0], plan.facets, limit);
    return ranked.map((row) => ({ page_id: row.id, score: row.score }));
  }

  /** Builds and rankings of the in-memory copies (null when options.memoryRankingUpTo is off or not reached yet). */
  counts(): { passages: MemoryRanking['counts']; pages: MemoryRanking['counts']; bytes: number } | null {
    if (!this.copies) return null;
    const bytes = this.copies.passages.bytes + this.copies.pages.bytes;
    return { passages: { ...this.copies.passages.counts }, pages: { ...this.copies.pages.counts }, bytes };
  }

  /** Builds the copies now, when memory ranking applies, and waits for them; false when it does not or a build failed. */
  async ready(): Promise<boolean> {
    const copies = this.current();
    if (!copies) return false;
    const generation = this.generation();
    const [passages, pages] = await Promise.all([copies.passages.ready(generation), copies.pages.ready(generation)]);
    return passages && pages;
  }

  async close(): Promise<void> {
    const copies = this.copies;
    this.copies = null;
    await Promise.all([copies?.passages.close(), copies?.pages.close()]);
    copies?.tokenizer.close();
  }

  /** The copies when asked for and the passage table holds at most memoryRankingUpTo rows; else null. */
  private current(): Copies | null {
    const upTo = this.options.memoryRankingUpTo ?? 0;
    const file = this.db.name;
    if (upTo <= 0 || !file || file === ':memory:' || this.db.memory) return null;
    if (this.passageCount() > upTo) return null;
    if (!this.copies) {
      const options = { waitForBuild: this.options.waitForMemoryRanking ?? false };
      this.copies = {
        passages: new MemoryRanking({ file, table: TABLE, facetsColumn: 'facets', pageIdColumn: 'page_id', generationSql: GENERATION_SQL }, options),
        pages: new MemoryRanking({ file, table: PAGES, facetsColumn: 'facets', pageIdColumn: null, generationSql: GENERATION_SQL }, options),
        tokenizer: new Fts5Tokenizer(TOKENIZE),
      };
    }
    return this.copies;
  }

  /**
   * The current copy of `table` and the query as it reads it, when memory ranking applies and gives SQL's ranking for
   * this query (counted as answered); else null.
   */
  private async plan(table: 'passages' | 'pages', query: string, filter: IndexFilter | undefined): Promise<{ postings: Postings; phrases: (readonly string[])[]; facets: FacetFilter } | null> {
    const copies = this.current();
    const postings = copies ? await copies[table].current(this.generation()) : null;
    const planned = copies && postings ? tokenizedQuery(copies.tokenizer, query, filter) : null;
    if (!copies || !postings || !planned || !postings.ranks(planned.phrases)) return null;
    copies[table].answered();
    const collections = filter?.collections;
    if (collections === undefined) return { postings, ...planned };
    return { postings, phrases: planned.phrases, facets: { ...planned.facets, rowids: this.rowidsIn(table, collections, postings.generation) } };
  }

  /** The rows of `table` in one of `collections`, as of `generation` (kept for the next searches until a write). */
  private rowidsIn(table: 'passages' | 'pages', collections: readonly string[], generation: string): Set<number> {
    const key = `${table}\u0000${generation}\u0000${JSON.stringify(collections)}`;
    let rows = this.members.get(key);
    if (!rows) {
      rows = table === 'passages' ? rowidsIn(this.db, collections, PASSAGE_COLLECTIONS, 'id') : rowidsIn(this.db, collections, PAGE_COLLECTIONS, 'page_id');
      // Sets of older generations are of no use any more.
      for (const old of this.members.keys()) if (!old.includes(`\u0000${generation}\u0000`) || this.members.size > 16) this.members.delete(old);
      this.members.set(key, rows);
    }
    return rows;
  }
}

/**
 * The query's phrases and the filter's facet tokens as the index holds them (through its tokenizer); null when one
 * is not a single token where FTS5 would read one, or a phrase has no token (SQL ranks those).
 */
function tokenizedQuery(tokenizer: Fts5Tokenizer, query: string, filter: IndexFilter | undefined): { phrases: (readonly string[])[]; facets: FacetFilter } | null {
  // Hosts and dates are not in the in-memory copy: SQL ranks with those filters (fact-tables.ts). Collections are
  // applied from their table's rowids (plan).
  if (hasHostOrDateFilter(filter)) return null;
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
