/**
 * The collections of the FTS5 index's rows (issue 33): plain tables beside the FTS5 tables, one row per passage (or
 * page) and collection id, so a collection filter adds no token to any row (bm25 counts every token of a row) and
 * narrows a MATCH with `+rowid IN (SELECT ...)` inside the ranking query, as the fact tables do for hosts and dates.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { collectionIdsOf, DEFAULT_COLLECTION_ID } from '../../../core/index.js';
import { PAGES, TABLE } from './schema.js';

export const PASSAGE_COLLECTIONS = 'notary_fts_collections';
export const PAGE_COLLECTIONS = 'notary_fts_page_collections';

/**
 * Makes the tables where they are missing (a migration: rows indexed before them are in the default collection, as
 * every page stored before collections is).
 */
export function createCollectionTables(db: BetterSqlite3.Database): void {
  for (const [table, key, source] of [
    [PASSAGE_COLLECTIONS, 'id', TABLE],
    [PAGE_COLLECTIONS, 'page_id', PAGES],
  ] as const) {
    const existed = db.prepare(`SELECT name FROM sqlite_master WHERE name = ?`).get(table) !== undefined;
    db.exec(`CREATE TABLE IF NOT EXISTS ${table} (collection TEXT NOT NULL, ${key} INTEGER NOT NULL, PRIMARY KEY (collection, ${key})) WITHOUT ROWID`);
    db.exec(`CREATE INDEX IF NOT EXISTS ${table}_${key} ON ${table} (${key})`);
    if (existed) continue;
    db.prepare(`INSERT OR IGNORE INTO ${table} (collection, ${key}) SELECT ?, rowid FROM ${source}`).run(DEFAULT_COLLECTION_ID);
  }
}

/** The statements that keep one collection table in step with its FTS5 table (inside the writes' transactions). */
export function collectionWrites(db: BetterSqlite3.Database, table: string, key: string) {
  const put = db.prepare<[string, number]>(`INSERT OR IGNORE INTO ${table} (collection, ${key}) VALUES (?, ?)`);
  const remove = db.prepare<[number]>(`DELETE FROM ${table} WHERE ${key} = ?`);
  return {
    put: (id: number, collections: readonly string[] | undefined) => {
      remove.run(id);
      for (const collection of collectionIdsOf(collections)) put.run(collection, id);
    },
    remove: (id: number) => remove.run(id),
  };
}

/** ` AND +rowid IN (...)`: the rows in one of `collections`, with its one parameter (a JSON list: one statement text). */
export function collectionCondition(collections: readonly string[] | undefined, table: string, key: string): { sql: string; params: unknown[] } {
  if (collections === undefined) return { sql: '', params: [] };
  return {
    sql: ` AND +rowid IN (SELECT ${key} FROM ${table} WHERE collection IN (SELECT value FROM json_each(?)))`,
    params: [JSON.stringify(collections)],
  };
}

/** The rowids of a table in one of `collections` (the in-memory ranking's filter). */
export function rowidsIn(db: BetterSqlite3.Database, collections: readonly string[], table: string, key: string): Set<number> {
  const rows = db.prepare<[string], number>(`SELECT ${key} FROM ${table} WHERE collection IN (SELECT value FROM json_each(?))`).pluck().all(JSON.stringify(collections));
  return new Set(rows);
}
