/**
 * The domain and date facts of the FTS5 index: plain tables beside the two FTS5 tables (host and publication date by
 * passage id and by page id), so filtering on them adds no token to any row (bm25's length normalisation counts every
 * token of a row) and a date range is a range over an indexed column. A search with such a filter narrows its MATCH
 * with `+rowid IN (SELECT ...)`, inside the ranking query: its LIMIT counts only rows that pass. The condition's text
 * has a few shapes only (which parts the filter has), so the statements cached per text stay few.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { hasHostOrDateFilter, hostOf, publishedMs, type FactFilter } from '../../filter-facts.js';
import { collectionCondition, PAGE_COLLECTIONS, PASSAGE_COLLECTIONS } from './collection-tables.js';
import type { HostRule } from '../../search-index.js';
import { PAGES, TABLE } from './schema.js';

export const PASSAGE_FACTS = 'notary_fts_facts';
export const PAGE_FACTS = 'notary_fts_page_facts';

/**
 * Makes the fact tables where they are missing (a migration: an index made before them gets its hosts from the URLs
 * it holds, and no dates, which the next indexing of each page brings).
 */
export function createFactTables(db: BetterSqlite3.Database): void {
  for (const [facts, key, source] of [
    [PASSAGE_FACTS, 'id', TABLE],
    [PAGE_FACTS, 'page_id', PAGES],
  ] as const) {
    const existed = db.prepare(`SELECT name FROM sqlite_master WHERE name = ?`).get(facts) !== undefined;
    db.exec(`CREATE TABLE IF NOT EXISTS ${facts} (${key} INTEGER PRIMARY KEY, host TEXT NOT NULL, published INTEGER)`);
    db.exec(`CREATE INDEX IF NOT EXISTS ${facts}_host ON ${facts} (host)`);
    db.exec(`CREATE INDEX IF NOT EXISTS ${facts}_published ON ${facts} (published)`);
    if (existed) continue;
    const insert = db.prepare<[number, string]>(`INSERT OR REPLACE INTO ${facts} (${key}, host, published) VALUES (?, ?, NULL)`);
    const rows = db.prepare(`SELECT rowid AS id, url FROM ${source}`).all() as Array<{ id: number; url: string }>;
    db.transaction(() => {
      for (const row of rows) insert.run(row.id, hostOf(row.url));
    })();
  }
}

/** The statements that keep one fact table in step with its FTS5 table (called inside the writes' transactions). */
export function factWrites(db: BetterSqlite3.Database, facts: string, key: string) {
  const put = db.prepare<[number, string, number | null]>(`INSERT OR REPLACE INTO ${facts} (${key}, host, published) VALUES (?, ?, ?)`);
  const remove = db.prepare<[number]>(`DELETE FROM ${facts} WHERE ${key} = ?`);
  return {
    put: (id: number, url: string, publishedAt: string | undefined) => put.run(id, hostOf(url), publishedMs(publishedAt)),
    remove: (id: number) => remove.run(id),
  };
}

/**
 * Whether `host` is one of a list's hosts, or under one of its "*." domains: the lists go in as two JSON parameters, so
 * the statement's text (cached per text here and in the reader workers) is the same whatever the hosts and their
 * number. A suffix is compared exactly (substr), never as a LIKE pattern.
 */
const HOSTS_SQL =
  `(host IN (SELECT value FROM json_each(?)) OR ` +
  `EXISTS (SELECT 1 FROM json_each(?) d WHERE host = d.value OR substr(host, -length(d.value) - 1) = '.' || d.value))`;

function hostParams(rules: readonly HostRule[]): unknown[] {
  return [JSON.stringify(rules.filter((r) => !r.subdomains).map((r) => r.host)), JSON.stringify(rules.filter((r) => r.subdomains).map((r) => r.host))];
}

/**
 * ` AND +rowid IN (SELECT ...)` narrowing a MATCH query to the rows that pass the filter's domain and date parts (and
 * its collections: collection-tables.ts), with its parameters; empty when the filter has none.
 */
export function factCondition(filter: FactFilter | undefined, facts: string, key: string): { sql: string; params: unknown[] } {
  const members = collectionCondition(filter?.collections, facts === PASSAGE_FACTS ? PASSAGE_COLLECTIONS : PAGE_COLLECTIONS, key);
  if (!filter || !hasHostOrDateFilter(filter)) return members;
  const params: unknown[] = [];
  const where: string[] = [];
  if (filter.includeHosts && filter.includeHosts.length > 0) {
    where.push(HOSTS_SQL);
    params.push(...hostParams(filter.includeHosts));
  }
  if (filter.excludeHosts && filter.excludeHosts.length > 0) {
    where.push(`NOT ${HOSTS_SQL}`);
    params.push(...hostParams(filter.excludeHosts));
  }
  const range = filter.published;
  if (range) {
    const bounds: string[] = ['published IS NOT NULL'];
    if (range.from !== undefined) {
      bounds.push('published >= ?');
      params.push(range.from);
    }
    if (range.to !== undefined) {
      bounds.push('published < ?');
      params.push(range.to);
    }
    where.push(range.undated === 'keep' ? `(published IS NULL OR (${bounds.join(' AND ')}))` : `(${bounds.join(' AND ')})`);
  }
  // `+rowid`: the set filters the rows the full-text scan yields; as an index constraint it would make FTS5 look up
  // each rowid of the set and match it alone (seen at 90 ms p50 on the PostgreSQL docs, against 13 unfiltered).
  return { sql: ` AND +rowid IN (SELECT ${key} FROM ${facts} WHERE ${where.join(' AND ')})${members.sql}`, params: [...params, ...members.params] };
}
