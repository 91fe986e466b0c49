/** What an FTS5 ranking is made of: the columns' weights and the rows ranked. */

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

/** A passage's bm25 score (higher is better). */
export interface ScoredRow {
  id: number;
  score: number;
}

/** A match's rank: its passage, page and bm25 score (higher is better). */
export interface RankedRow {
  id: number;
  page_id: number;
  score: number;
}

/** Matches ranked at first for the per-page cap (grown fourfold while too few pages survive it). */
export const TOP_WINDOW_MIN = 64;
