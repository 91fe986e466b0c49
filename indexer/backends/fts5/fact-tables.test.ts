import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { PAGE_FACTS, PASSAGE_FACTS } from './fact-tables.js';
import { Fts5SearchIndex } from './search-index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-fts5-facts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('FTS5 fact tables', () => {
  it('an index made before them gets the hosts of the URLs it holds when opened (dates come with re-indexing)', async () => {
    const db = new BetterSqlite3(path.join(dir, 'old.sqlite'));
    const first = new Fts5SearchIndex(db);
    await first.upsert([
      { id: 1, pageId: 1, url: 'https://Docs.Example.com:8443/a', title: 'A', headingPath: '', text: 'wal archiving', publishedAt: '2024-01-01' },
      { id: 2, pageId: 2, url: 'https://other.test/b', title: 'B', headingPath: '', text: 'wal archiving' },
    ]);
    await first.upsertPages([{ pageId: 1, url: 'https://docs.example.com/a', title: 'A', headings: '', text: 'wal archiving' }]);
    await first.close();
    // As an index written before the fact tables existed.
    db.exec(`DROP TABLE ${PASSAGE_FACTS}; DROP TABLE ${PAGE_FACTS};`);
    const reopened = new Fts5SearchIndex(db);
    const under = { includeHosts: [{ host: 'example.com', subdomains: true }] };
    expect((await reopened.search('wal', { limit: 5, filter: under })).map((h) => h.id)).toEqual([1]);
    expect((await reopened.searchPages('wal', { limit: 5, filter: under })).map((h) => h.pageId)).toEqual([1]);
    expect((await reopened.search('wal', { limit: 5, filter: { published: { undated: 'exclude' } } })).map((h) => h.id)).toEqual([]);
    await reopened.close();
    db.close();
  });
});
