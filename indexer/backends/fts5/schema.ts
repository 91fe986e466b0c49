/**
 * The FTS5 index's tables in the storage database: one of passages, one of whole pages, and a meta table holding the
 * layout version and the write generation.
 */
import type BetterSqlite3 from 'better-sqlite3';

export const TABLE = 'notary_fts';
export const PAGES = 'notary_fts_pages';
export const META = 'notary_fts_meta';
/**
 * Version of the two tables' columns and of what goes in them; a different stored one means they are made again
 * (and pages re-indexed). 4: text of unspaced scripts with word breaks (core/unspaced.ts).
 */
const SCHEMA_VERSION = '4';
export const TOKENIZE = `tokenize = 'porter unicode61 remove_diacritics 2'`;

/** The counter in the meta table that every write transaction to either table bumps (in any process). */
export const GENERATION_SQL = `SELECT value FROM ${META} WHERE key = 'generation'`;
export const BUMP_GENERATION_SQL = `UPDATE ${META} SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'`;

/**
 * The lowest and highest passage rowid. One subquery each: SQLite reads a min() or a max() off the end of the rowid
 * tree only when it stands alone in its SELECT; both in one SELECT scan every row (100 ms at a million).
 */
export const PASSAGE_ROWID_RANGE_SQL = `SELECT (SELECT min(id) FROM ${TABLE}_docsize) AS lo, (SELECT max(id) FROM ${TABLE}_docsize) AS hi`;

/** FTS5's averages record of the passage table (its first varint is the row count). */
export const AVERAGES_SQL = `SELECT block FROM ${TABLE}_data WHERE id = 1`;

/**
 * Makes the tables that are missing; over an older layout, drops both and makes them anew (and bumps the write
 * generation). Returns whether they were made anew: every page must then be indexed again.
 */
export function createFts5Tables(db: BetterSqlite3.Database): boolean {
  db.exec(`CREATE TABLE IF NOT EXISTS ${META} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
  const version = (db.prepare(`SELECT value FROM ${META} WHERE key = 'schema'`).get() as { value: string } | undefined)?.value;
  const existing = db.prepare(`SELECT name FROM sqlite_master WHERE name = ?`).get(TABLE) !== undefined;
  const rebuilt = existing && version !== SCHEMA_VERSION;
  if (rebuilt) {
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
  if (rebuilt) db.prepare(BUMP_GENERATION_SQL).run();
  return rebuilt;
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
