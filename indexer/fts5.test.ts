import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Fts5SearchIndex, toFts5Query } from './fts5.js';
import { searchIndexContract } from './search-index.contract.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-fts5-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

searchIndexContract('sqlite-fts5', async () => {
  const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
  db.pragma('journal_mode = WAL');
  return new Fts5SearchIndex(db, { ownsHandle: true });
});

describe('toFts5Query', () => {
  it('quotes words, drops syntax and stopwords, ORs the rest', () => {
    expect(toFts5Query('How do I "create" an INDEX* (NEAR:x)')).toBe('"create" OR "index" OR "near" OR "x" OR "near x"');
    expect(toFts5Query('the of and')).toBe('"the" OR "of" OR "and"');
    expect(toFts5Query(' "*:()-^ ')).toBeNull();
    expect(toFts5Query('')).toBeNull();
  });

  it('adds each identifier as a phrase of its parts beside the parts', () => {
    expect(toFts5Query('lc_numeric configuration parameter')).toBe('"lc" OR "numeric" OR "configuration" OR "parameter" OR "lc numeric"');
    expect(toFts5Query('pg_catalog.pg_stat_activity')).toBe('"pg" OR "catalog" OR "stat" OR "activity" OR "pg catalog pg stat activity"');
    expect(toFts5Query('point-in-time recovery')).toBe('"point" OR "time" OR "recovery"');
  });

  it('caps the number of terms', () => {
    const words = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    expect(toFts5Query(words)?.split(' OR ')).toHaveLength(32);
  });
});

describe('Fts5SearchIndex', () => {
  it('keeps its table across reopening the same file', async () => {
    const file = path.join(dir, 'reopen.sqlite');
    const first = new Fts5SearchIndex(new BetterSqlite3(file), { ownsHandle: true });
    await first.upsert([{ id: 1, pageId: 1, url: 'http://a.test/', title: 'T', headingPath: '', text: 'wal checkpoints' }]);
    await first.close();
    const second = new Fts5SearchIndex(new BetterSqlite3(file), { ownsHandle: true });
    expect((await second.search('checkpoint', { limit: 5 })).map((h) => h.id)).toEqual([1]);
    await second.close();
  });

  it('ranks the passage holding an identifier exactly above passages holding its parts', async () => {
    const index = new Fts5SearchIndex(new BetterSqlite3(':memory:'), { ownsHandle: true });
    await index.upsert([
      { id: 1, pageId: 1, url: 'http://a.test/1', title: 'Numeric types', headingPath: '', text: 'numeric precision and numeric scale; lc of a numeric column; numeric rounding' },
      { id: 2, pageId: 2, url: 'http://a.test/2', title: 'Client defaults', headingPath: '', text: 'lc_numeric sets the locale used to format numbers, like other client settings' },
    ]);
    expect((await index.search('lc_numeric', { limit: 5 })).map((h) => h.id)).toEqual([2, 1]);
    // Without the phrase (the parts alone) the numeric-heavy passage wins: the phrase is what decides.
    expect((await index.search('lc numeric', { limit: 5 })).map((h) => h.id)[0]).toBe(1);
    await index.close();
  });

  it('rejects a negative limit with a NotaryError', async () => {
    const index = new Fts5SearchIndex(new BetterSqlite3(':memory:'), { ownsHandle: true });
    await expect(index.search('x', { limit: -1 })).rejects.toMatchObject({ code: 'invalid_request' });
    await index.close();
  });
});
