import type BetterSqlite3 from 'better-sqlite3';
import { selectPerPage } from '../../page-cap.js';
import { pageToken } from './facets.js';
import { FTS5_COLUMN_WEIGHTS, TOP_WINDOW_MIN, type FTS5_PAGE_WEIGHTS, type RankedRow, type ScoredRow } from './ranking.js';
import type { Fts5Reader } from './reader.js';
import type { Fts5ReaderPool } from './reader-pool.js';
import { PAGES, PASSAGE_ROWID_RANGE_SQL, TABLE } from './schema.js';

/** A condition on the fact tables and its parameters (fact-tables.ts factCondition). */
export interface FactCondition {
  sql: string;
  params: unknown[];
}
const NO_FACTS: FactCondition = { sql: '', params: [] };

/**
 * Ranking in SQL: FTS5's bm25() over every match, on this connection or, where the pool has them, on the read-only
 * connections of worker threads (the page reader; two passage readers each ranking half of the rowid range).
 */
export class SqlRanking {
  private readonly statements = new Map<string, BetterSqlite3.Statement<unknown[]>>();
  private readonly rowidRangeStmt: BetterSqlite3.Statement<[], { lo: number | null; hi: number | null }>;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly readers: Fts5ReaderPool,
  ) {
    this.rowidRangeStmt = db.prepare(PASSAGE_ROWID_RANGE_SQL);
  }

  /** A statement of this connection, prepared at its first use. */
  statement(key: string, sql: () => string): BetterSqlite3.Statement<unknown[]> {
    let stmt = this.statements.get(key);
    if (!stmt) this.statements.set(key, (stmt = this.db.prepare(sql())));
    return stmt;
  }

  /**
   * The best `limit` passages matching `match`, at most `perPage` a page; only those of `pageIds` when given, and only
   * those passing `facts` (fact-tables.ts: a condition inside the ranking query).
   */
  async passages(match: string, limit: number, perPage: number, pageIds: readonly number[] | undefined, facts: FactCondition = NO_FACTS): Promise<RankedRow[]> {
    const { title, headings, body } = FTS5_COLUMN_WEIGHTS;
    const bm25 = `-bm25(${TABLE}, ${title}, ${headings}, ${body}, 0, 0, 0, 0, 0, 0)`;
    if (pageIds) {
      // A few pages (a reflection pass reading its best pages, pages without a passage yet): every match of those
      // pages is ranked. The page tokens sit in the facets column, whose bm25 weight is 0: scores are those of the
      // unrestricted search.
      const pages = pageIds.filter((id) => Number.isSafeInteger(id));
      if (pages.length === 0) return [];
      const stmt = this.statement(`passages-in-pages${facts.sql}`, () =>
        `SELECT id, page_id, score FROM (
           SELECT *, row_number() OVER (PARTITION BY page_id ORDER BY score DESC, id) AS page_rank
           FROM (SELECT rowid AS id, page_id, ${bm25} AS score FROM ${TABLE} WHERE ${TABLE} MATCH ?${facts.sql})
         ) WHERE page_rank <= ? ORDER BY score DESC, id LIMIT ?`,
      );
      const inPages = `(${match}) AND facets : (${pages.map((id) => `"${pageToken(id)}"`).join(' OR ')})`;
      return stmt.all(inPages, ...facts.params, perPage, limit) as RankedRow[];
    }
    // Ranking reads no stored column: bm25() needs only the full-text index, so the best `window` matches by score
    // come first, then their pages (to keep `perPage` a page) and, for the few kept, their text. Reading every
    // match's columns, as one SELECT with a window function does, costs several times the ranking itself.
    const pageOf = this.statement('passage-pages', () => `SELECT rowid AS id, page_id FROM ${TABLE} WHERE rowid IN (SELECT value FROM json_each(?))`);
    const readers = this.readers.passageReaders();
    let window = Math.max(TOP_WINDOW_MIN, limit * 2);
    for (;;) {
      const ranked = await this.topPassages(readers, bm25, match, window, facts);
      const pages = new Map((pageOf.all(JSON.stringify(ranked.map((r) => r.id))) as Array<{ id: number; page_id: number }>).map((r) => [r.id, r.page_id]));
      const withPages = ranked.flatMap((row) => {
        const pageId = pages.get(row.id);
        return pageId === undefined ? [] : [{ id: row.id, page_id: pageId, score: row.score }];
      });
      const kept = selectPerPage(withPages, limit, perPage, (row) => row.page_id);
      // Fewer than `limit` survive the per-page cap only when the window was too small (or the matches ran out).
      if (kept.length >= limit || ranked.length < window) return kept;
      window *= 4;
    }
  }

  /** The best `limit` whole pages matching `match` (on the page reader when there is one). */
  async pages(match: string, w: typeof FTS5_PAGE_WEIGHTS, limit: number, facts: FactCondition = NO_FACTS): Promise<Array<{ page_id: number; score: number }>> {
    const sql = `SELECT rowid AS page_id, -bm25(${PAGES}, ${w.title}, ${w.headings}, ${w.path}, ${w.body}, 0, 0, 0, 0, 0) AS score
         FROM ${PAGES} WHERE ${PAGES} MATCH ?${facts.sql} ORDER BY score DESC, rowid LIMIT ?`;
    return (await this.rankOn(this.readers.pageReader(), `pages-top${facts.sql}`, sql, [match, ...facts.params, limit])) as Array<{ page_id: number; score: number }>;
  }

  /**
   * The best `window` passages by bm25. With readers, each ranks half of the rowid range at once and the two lists
   * are merged: bm25() takes its statistics from the whole table whatever the range, so the scores, and the merged
   * list, are those of one query over every row.
   */
  private async topPassages(readers: readonly Fts5Reader[], bm25: string, match: string, window: number, facts: FactCondition): Promise<ScoredRow[]> {
    const ranked = (range: string) => `SELECT rowid AS id, ${bm25} AS score FROM ${TABLE} WHERE ${TABLE} MATCH ?${facts.sql}${range} ORDER BY score DESC, rowid LIMIT ?`;
    const [low, high] = readers;
    // The rowid range is read only when there are readers to split it between (not on every small search).
    const { lo, hi } = (low && high ? this.rowidRangeStmt.get() : undefined) ?? { lo: null, hi: null };
    if (low && high && lo !== null && hi !== null && hi > lo) {
      const middle = Math.floor((lo + hi) / 2);
      try {
        const halves = await Promise.all([
          low.all(ranked(' AND rowid <= ?'), [match, ...facts.params, middle, window]),
          high.all(ranked(' AND rowid > ?'), [match, ...facts.params, middle, window]),
        ]);
        return (halves.flat() as ScoredRow[]).sort((a, b) => b.score - a.score || a.id - b.id).slice(0, window);
      } catch {
        // a worker failed: this connection ranks instead (and from now on, the reader being no longer usable)
      }
    }
    return (await this.rankOn(null, `passages-top${facts.sql}`, ranked(''), [match, ...facts.params, window])) as ScoredRow[];
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
}
