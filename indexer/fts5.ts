import type BetterSqlite3 from 'better-sqlite3';
import { NotaryError } from '../core/errors.js';
import { contentWords, identifiers } from '../core/text.js';
import type { IndexDoc, IndexHit, IndexSearchOptions, IndexStats, SearchIndex } from './search-index.js';

/**
 * Column weights for bm25(): title, headings, body. Measured on the PostgreSQL 15 docs (7,031 passages) with 106
 * known-item queries from the book index (term -> page), MRR@10 over distinct pages: 1:1:1 0.313, 2:1:1 0.328,
 * 4:1:1 0.359, 4:2:1 0.372, 8:4:1 0.378. 4:2:1 takes nearly all of the gain without letting a title word swamp
 * the body.
 */
export const FTS5_COLUMN_WEIGHTS = { title: 4, headings: 2, body: 1 } as const;

const MAX_QUERY_TERMS = 32;

/**
 * Turns any user string into a safe FTS5 MATCH expression: words only (letters, digits, marks), each quoted, OR
 * between them. FTS5 syntax in the input (quotes, *, :, parentheses, NEAR, AND/OR/NOT, -, ^) cannot reach the
 * parser. Returns null when no word is left.
 */
export function toFts5Query(input: string): string | null {
  const terms = [...new Set(contentWords(input))].slice(0, MAX_QUERY_TERMS);
  if (terms.length === 0) return null;
  // The tokenizer splits identifiers (lc_numeric, pg_stat_activity, max.connections) into their parts; the
  // identifier itself also goes in as a phrase, so a passage holding it exactly outscores one holding a part.
  const phrases = identifiers(input).slice(0, MAX_QUERY_TERMS);
  return [...terms.map((t) => `"${t}"`), ...phrases.map((parts) => `"${parts.join(' ')}"`)].join(' OR ');
}

interface HitRow {
  id: number;
  page_id: number;
  url: string;
  title: string;
  heading_path: string;
  body: string;
  score: number;
}

const TABLE = 'notary_fts';

/**
 * SQLite FTS5 passage index in the storage database file. One regular FTS5 table holds the indexed columns (title,
 * headings, body) and the unindexed fields a hit needs (page_id, url), rowid = passage id.
 */
export class Fts5SearchIndex implements SearchIndex {
  readonly name = 'sqlite-fts5';
  private readonly deleteStmt: BetterSqlite3.Statement<[number]>;
  private readonly insertStmt: BetterSqlite3.Statement<[number, string, string, string, number, string]>;
  private readonly searchStmt: BetterSqlite3.Statement<[string, number, number]>;
  private readonly countStmt: BetterSqlite3.Statement<[]>;
  private readonly getStmt: BetterSqlite3.Statement<[number]>;
  private readonly upsertMany: (docs: readonly IndexDoc[]) => void;
  private readonly deleteMany: (ids: readonly number[]) => void;

  /** `ownsHandle`: close the database handle on close() (the storage layer usually owns it). */
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly options: { ownsHandle?: boolean } = {},
  ) {
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${TABLE} USING fts5(` +
        `title, headings, body, page_id UNINDEXED, url UNINDEXED, ` +
        `tokenize = 'porter unicode61 remove_diacritics 2')`,
    );
    this.deleteStmt = db.prepare(`DELETE FROM ${TABLE} WHERE rowid = ?`);
    this.insertStmt = db.prepare(`INSERT INTO ${TABLE} (rowid, title, headings, body, page_id, url) VALUES (?, ?, ?, ?, ?, ?)`);
    const { title, headings, body } = FTS5_COLUMN_WEIGHTS;
    // The inner query ranks every match; the window keeps the best `perPage` passages of each page.
    this.searchStmt = db.prepare(
      `SELECT id, page_id, url, title, heading_path, body, score FROM (
         SELECT id, page_id, url, title, heading_path, body, score,
                row_number() OVER (PARTITION BY page_id ORDER BY score DESC, id) AS page_rank
         FROM (
           SELECT rowid AS id, page_id, url, title, headings AS heading_path, body,
                  -bm25(${TABLE}, ${title}, ${headings}, ${body}, 0, 0) AS score
           FROM ${TABLE} WHERE ${TABLE} MATCH ?
         )
       ) WHERE page_rank <= ? ORDER BY score DESC, id LIMIT ?`,
    );
    this.countStmt = db.prepare(`SELECT count(*) AS n FROM ${TABLE}`);
    this.getStmt = db.prepare(`SELECT rowid AS id, page_id, url, title, headings AS heading_path, body, 0 AS score FROM ${TABLE} WHERE rowid = ?`);
    this.upsertMany = db.transaction((docs: readonly IndexDoc[]) => {
      for (const doc of docs) {
        this.deleteStmt.run(doc.id);
        this.insertStmt.run(doc.id, doc.title, doc.headingPath, doc.text, doc.pageId, doc.url);
      }
    });
    this.deleteMany = db.transaction((ids: readonly number[]) => {
      for (const id of ids) this.deleteStmt.run(id);
    });
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

  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const match = typeof query === 'string' ? toFts5Query(query) : null;
    if (match === null || limit === 0) return [];
    const perPage = options.perPageLimit === undefined ? limit : Math.max(1, Math.floor(options.perPageLimit));
    const rows = this.searchStmt.all(match, perPage, limit) as HitRow[];
    return rows.map((r) => ({
      id: r.id,
      pageId: r.page_id,
      url: r.url,
      title: r.title,
      headingPath: r.heading_path,
      text: r.body,
      score: r.score,
    }));
  }

  async get(ids: readonly number[]): Promise<IndexDoc[]> {
    const out: IndexDoc[] = [];
    for (const id of new Set(ids)) {
      const row = Number.isSafeInteger(id) ? (this.getStmt.get(id) as HitRow | undefined) : undefined;
      if (row) out.push({ id: row.id, pageId: row.page_id, url: row.url, title: row.title, headingPath: row.heading_path, text: row.body });
    }
    return out;
  }

  async stats(): Promise<IndexStats> {
    const { n } = this.countStmt.get() as { n: number };
    return { documents: n, bytes: this.bytesOnDisk(), backend: this.name };
  }

  private bytesOnDisk(): number | null {
    try {
      const row = this.db
        .prepare(`SELECT sum(pgsize) AS bytes FROM dbstat WHERE name = ? OR name GLOB ?`)
        .get(TABLE, `${TABLE}_*`) as { bytes: number | null };
      return row.bytes ?? 0;
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    if (this.options.ownsHandle && this.db.open) this.db.close();
  }
}
