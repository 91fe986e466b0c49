import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { searchIndexContract } from '../../search-index.contract.js';
import { toFts5Query } from './query.js';
import { PASSAGE_ROWID_RANGE_SQL, readVarint } from './schema.js';
import { Fts5SearchIndex } from './search-index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-fts5-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

searchIndexContract('sqlite-fts5', async () => {
  const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
  db.pragma('journal_mode = WAL');
  return new Fts5SearchIndex(db, { ownsHandle: true });
});

// The same contract with the ranking cache on: every case searches, writes, then searches again.
searchIndexContract('sqlite-fts5 with a ranking cache', async () => {
  const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
  db.pragma('journal_mode = WAL');
  return new Fts5SearchIndex(db, { ownsHandle: true, rankingCache: 100 });
});

// And without passages' stored fields kept between searches (every hit read from its row).
searchIndexContract('sqlite-fts5 without stored rows kept', async () => {
  const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
  db.pragma('journal_mode = WAL');
  return new Fts5SearchIndex(db, { ownsHandle: true, storedRows: 0 });
});

// And with whole pages ranked by the worker-thread reader (a file database).
searchIndexContract('sqlite-fts5 with a page reader', async () => {
  const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
  db.pragma('journal_mode = WAL');
  return new Fts5SearchIndex(db, { ownsHandle: true, pageReader: true, rankingCache: 100 });
});

// And with passages ranked by a worker-thread reader of their own (from the first row on).
searchIndexContract('sqlite-fts5 with a passage reader', async () => {
  const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
  db.pragma('journal_mode = WAL');
  return new Fts5SearchIndex(db, { ownsHandle: true, pageReader: true, passageReaderAbove: 1, rankingCache: 0 });
});

// And ranked from the in-memory copy of the index, made anew after every write.
searchIndexContract('sqlite-fts5 ranking from memory', async () => {
  const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
  db.pragma('journal_mode = WAL');
  return new Fts5SearchIndex(db, { ownsHandle: true, memoryRankingUpTo: 1_000_000, waitForMemoryRanking: true, rankingCache: 100 });
});

describe('readVarint', () => {
  it('reads SQLite varints of one to nine bytes', () => {
    expect(readVarint(Uint8Array.of(0x05))).toBe(5);
    expect(readVarint(Uint8Array.of(0x81, 0x00))).toBe(128);
    expect(readVarint(Uint8Array.of(0xbd, 0x84, 0x40, 0x99))).toBe(1_000_000);
    expect(readVarint(Uint8Array.of(0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x01))).toBe(2 ** 57 + 2 ** 50 + 2 ** 43 + 2 ** 36 + 2 ** 29 + 2 ** 22 + 2 ** 15 + 2 ** 8 + 1);
    expect(readVarint(Uint8Array.of(0x81))).toBe(0);
  });
});

describe('passage reader', () => {
  const passage = (id: number, text: string) => ({ id, pageId: id, url: `http://a.test/${id}`, title: `P${id}`, headingPath: '', text });

  it('ranks passages on its own connection from the row count given on: it sees committed rows only', async () => {
    const file = path.join(dir, 'passage-reader.sqlite');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    const fromFive = new Fts5SearchIndex(db, { passageReaderAbove: 5 });
    const fromThree = new Fts5SearchIndex(db, { passageReaderAbove: 3 });
    const local = new Fts5SearchIndex(db);
    await local.upsert([1, 2, 3, 4].map((id) => passage(id, `replication slot ${id}`)));
    db.exec('BEGIN');
    db.prepare(`INSERT INTO notary_fts (rowid, title, headings, body, facets, page_id, url, lang, nav, tkey) VALUES (9, 'S', '', 'uncommitted replication', 'langund zzpg9', 9, 'http://a.test/9', NULL, 0, NULL)`).run();
    const ids = async (index: Fts5SearchIndex) => (await index.search('replication', { limit: 10 })).map((h) => h.id).sort((a, b) => a - b);
    try {
      // Four rows counted (FTS5 writes its row count at commit): the index ranks here and sees its own uncommitted row.
      expect(await ids(fromFive)).toEqual([1, 2, 3, 4, 9]);
      expect(await ids(local)).toEqual([1, 2, 3, 4, 9]);
      // From three rows on the reader ranks, on a connection of its own: the uncommitted row is not there.
      expect(await ids(fromThree)).toEqual([1, 2, 3, 4]);
    } finally {
      db.exec('ROLLBACK');
    }
    await fromFive.close();
    await fromThree.close();
    await local.close();
    db.close();
  });

  it('finds the rowid range of the passages without reading every row', async () => {
    const db = new BetterSqlite3(':memory:');
    const index = new Fts5SearchIndex(db);
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${PASSAGE_ROWID_RANGE_SQL}`).all() as Array<{ detail: string }>).map((row) => row.detail);
    expect(plan.filter((detail) => detail.startsWith('SCAN notary_fts'))).toEqual([]);
    expect(plan.filter((detail) => detail.startsWith('SEARCH notary_fts_docsize'))).toHaveLength(2);
    await index.upsert([passage(7, 'seven'), passage(3, 'three'), passage(12, 'twelve')]);
    expect(db.prepare(PASSAGE_ROWID_RANGE_SQL).get()).toEqual({ lo: 3, hi: 12 });
    await index.close();
    db.close();
  });

  it('ranks exactly as the calling connection does, the per-page cap and the window included', async () => {
    const file = path.join(dir, 'passage-reader-equal.sqlite');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    const local = new Fts5SearchIndex(db);
    const withReader = new Fts5SearchIndex(db, { passageReaderAbove: 1 });
    const words = ['replication', 'slots', 'logical', 'standby', 'wal', 'archive', 'vacuum'];
    await local.upsert(
      Array.from({ length: 300 }, (_, i) => ({
        ...passage(i + 1, Array.from({ length: 4 + (i % 9) }, (_, j) => words[(i * 7 + j * 3) % 7]).join(' ')),
        pageId: Math.floor(i / 30) + 1,
      })),
    );
    for (const [query, limit, perPageLimit] of [['replication', 10, 2], ['logical standby', 100, 3], ['wal archive slots vacuum', 40, 1]] as const) {
      expect(await withReader.search(query, { limit, perPageLimit })).toEqual(await local.search(query, { limit, perPageLimit }));
    }
    await withReader.close();
    await local.close();
    db.close();
  });
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

  it('a search restricted to pages gives their passages the scores of the unrestricted search, best per page', async () => {
    const index = new Fts5SearchIndex(new BetterSqlite3(':memory:'), { ownsHandle: true });
    const words = ['vacuum', 'freeze', 'analyze', 'autovacuum', 'storage', 'wal'];
    const docs = Array.from({ length: 60 }, (_, i) => ({
      id: i + 1,
      pageId: (i % 20) + 1,
      url: `http://a.test/${(i % 20) + 1}`,
      title: words[i % 6]!,
      headingPath: '',
      text: Array.from({ length: 5 + (i % 7) }, (_, j) => words[(i * j + j) % 6]).join(' '),
    }));
    await index.upsert(docs);
    const all = new Map((await index.search('vacuum freeze', { limit: 100 })).map((h) => [h.id, h]));
    const restricted = await index.search('vacuum freeze', { limit: 100, perPageLimit: 2, filter: { pageIds: [3, 7, 11] } });
    expect(restricted.length).toBeGreaterThan(3);
    for (const hit of restricted) {
      expect([3, 7, 11]).toContain(hit.pageId);
      expect(hit.score).toBeCloseTo(all.get(hit.id)!.score, 12);
    }
    const expected = [3, 7, 11].flatMap((page) =>
      [...all.values()]
        .filter((h) => h.pageId === page)
        .sort((a, b) => b.score - a.score || a.id - b.id)
        .slice(0, 2)
        .map((h) => h.id),
    );
    expect(restricted.map((h) => h.id).sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
    await index.close();
  });

  it("a query's words never match the filter tokens (language, navigation, page)", async () => {
    const index = new Fts5SearchIndex(new BetterSqlite3(':memory:'), { ownsHandle: true });
    await index.upsert([{ id: 1, pageId: 3, url: 'http://a.test/3', title: 'T', headingPath: '', text: 'checkpoints', language: 'en', navigation: true }]);
    await index.upsertPages([{ pageId: 3, url: 'http://a.test/3', title: 'T', headings: '', text: 'checkpoints', language: 'en' }]);
    for (const token of ['zzpg3', 'langen', 'navpage', 'contentpage']) {
      expect(await index.search(token, { limit: 5 })).toEqual([]);
      expect(await index.searchPages(token, { limit: 5 })).toEqual([]);
    }
    expect((await index.search('checkpoints', { limit: 5, filter: { pageIds: [3] } })).map((h) => h.id)).toEqual([1]);
    await index.close();
  });

  it('reports a table layout older than its own as rebuilt (made anew, empty), and keeps the current one', async () => {
    const file = path.join(dir, 'layout.sqlite');
    const first = new Fts5SearchIndex(new BetterSqlite3(file), { ownsHandle: true });
    expect(first.rebuilt).toBe(false);
    await first.upsert([{ id: 1, pageId: 1, url: 'http://a.test/', title: 'T', headingPath: '', text: 'wal checkpoints' }]);
    await first.close();
    const raw = new BetterSqlite3(file);
    raw.prepare(`UPDATE notary_fts_meta SET value = '2' WHERE key = 'schema'`).run();
    raw.close();
    const reopened = new Fts5SearchIndex(new BetterSqlite3(file), { ownsHandle: true });
    expect(reopened.rebuilt).toBe(true);
    expect((await reopened.stats()).documents).toBe(0);
    await reopened.close();
    const again = new Fts5SearchIndex(new BetterSqlite3(file), { ownsHandle: true });
    expect(again.rebuilt).toBe(false);
    await again.close();
  });

  it('ranks whole pages the same on the page reader as on its own connection', async () => {
    const file = path.join(dir, 'page-reader.sqlite');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    const local = new Fts5SearchIndex(db, { rankingCache: 0 });
    const withReader = new Fts5SearchIndex(db, { rankingCache: 0, pageReader: true });
    const words = ['replication', 'slots', 'logical', 'standby', 'wal', 'archive'];
    await local.upsertPages(
      Array.from({ length: 40 }, (_, i) => ({
        pageId: i + 1,
        url: `http://a.test/${i + 1}`,
        title: words[i % 6]!,
        headings: words[(i + 2) % 6]!,
        text: Array.from({ length: 3 + (i % 5) }, (_, j) => words[(i + j * 3) % 6]).join(' '),
      })),
    );
    for (const query of ['replication', 'logical standby', 'wal archive slots']) {
      expect(await withReader.searchPages(query, { limit: 10 })).toEqual(await local.searchPages(query, { limit: 10 }));
    }
    await withReader.close();
    await local.close();
    db.close();
  });

  describe('ranking cache', () => {
    const passage = (id: number, text: string) => ({ id, pageId: id, url: `http://a.test/${id}`, title: `P${id}`, headingPath: '', text });
    const page = (id: number, text: string) => ({ pageId: id, url: `http://a.test/${id}`, title: `P${id}`, headings: '', text });
    /** A row written behind the index's back (no generation bump): only a search that ranks anew can see it. */
    const sneakIn = (db: BetterSqlite3.Database, id: number, text: string) =>
      db.prepare(`INSERT INTO notary_fts (rowid, title, headings, body, facets, page_id, url, lang, nav, tkey) VALUES (?, 'S', '', ?, 'langund contentpage', ?, ?, NULL, 0, NULL)`).run(id, text, id, `http://a.test/${id}`);

    it('answers a repeated query from the cache, and a write through any index on the file empties it', async () => {
      const file = path.join(dir, 'ranking-cache.sqlite');
      const db = new BetterSqlite3(file);
      db.pragma('journal_mode = WAL');
      const index = new Fts5SearchIndex(db, { ownsHandle: true, rankingCache: 10 });
      await index.upsert([passage(1, 'vacuum reclaims storage'), passage(2, 'vacuum full rewrites the table')]);
      expect((await index.search('vacuum', { limit: 5 })).map((h) => h.id).sort()).toEqual([1, 2]);
      sneakIn(db, 3, 'vacuum vacuum vacuum');
      // Cached: the ranking made before the sneaked row is served again.
      expect((await index.search('vacuum', { limit: 5 })).map((h) => h.id).sort()).toEqual([1, 2]);
      // Another query, never cached, ranks anew and sees it.
      expect((await index.search('vacuum storage', { limit: 5 })).map((h) => h.id)).toContain(3);
      // A write by a second handle (another process) moves the generation on: the first index ranks anew.
      const other = new Fts5SearchIndex(new BetterSqlite3(file), { ownsHandle: true, rankingCache: 10 });
      await other.upsert([passage(4, 'autovacuum launcher')]);
      expect((await index.search('vacuum', { limit: 5 })).map((h) => h.id).sort()).toEqual([1, 2, 3]);
      await other.delete([3]);
      expect((await index.search('vacuum', { limit: 5 })).map((h) => h.id).sort()).toEqual([1, 2]);
      await other.close();
      await index.close();
    });

    it('is keyed by the whole request: limit, per-page cap, page ids and filter each rank on their own', async () => {
      const index = new Fts5SearchIndex(new BetterSqlite3(':memory:'), { ownsHandle: true, rankingCache: 10 });
      await index.upsert([
        { ...passage(1, 'wal archive wal'), pageId: 7 },
        { ...passage(2, 'wal segment'), pageId: 7 },
        { ...passage(3, 'wal files'), pageId: 8, navigation: true },
      ]);
      expect((await index.search('wal', { limit: 5 })).map((h) => h.id)).toHaveLength(3);
      expect((await index.search('wal', { limit: 1 })).map((h) => h.id)).toHaveLength(1);
      expect((await index.search('wal', { limit: 5, perPageLimit: 1 })).map((h) => h.pageId).sort()).toEqual([7, 8]);
      expect((await index.search('wal', { limit: 5, filter: { pageIds: [8] } })).map((h) => h.id)).toEqual([3]);
      expect((await index.search('wal', { limit: 5, filter: { excludeNavigation: true } })).map((h) => h.id).sort()).toEqual([1, 2]);
      await index.close();
    });

    it('caches page rankings the same way, emptied by a page write', async () => {
      const index = new Fts5SearchIndex(new BetterSqlite3(':memory:'), { ownsHandle: true, rankingCache: 10 });
      await index.upsertPages([page(1, 'replication slots'), page(2, 'logical replication')]);
      expect((await index.searchPages('replication', { limit: 5 })).map((p) => p.pageId).sort()).toEqual([1, 2]);
      await index.deletePages([2]);
      expect((await index.searchPages('replication', { limit: 5 })).map((p) => p.pageId)).toEqual([1]);
      await index.upsertPages([page(3, 'replication lag')]);
      expect((await index.searchPages('replication', { limit: 5 })).map((p) => p.pageId).sort()).toEqual([1, 3]);
      await index.close();
    });

    it('with rankingCache 0 every search ranks anew', async () => {
      const db = new BetterSqlite3(':memory:');
      const index = new Fts5SearchIndex(db, { ownsHandle: true, rankingCache: 0 });
      await index.upsert([passage(1, 'checkpoint timeout')]);
      expect((await index.search('checkpoint', { limit: 5 })).map((h) => h.id)).toEqual([1]);
      sneakIn(db, 2, 'checkpoint checkpoint');
      expect((await index.search('checkpoint', { limit: 5 })).map((h) => h.id).sort()).toEqual([1, 2]);
      await index.close();
    });
  });
});

describe('collection filter ranked from memory', () => {
  it('ranks a collection-filtered search from the in-memory copy (not in SQL), with the rows of that collection only', async () => {
    const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
    db.pragma('journal_mode = WAL');
    const index = new Fts5SearchIndex(db, { ownsHandle: true, memoryRankingUpTo: 1_000_000, waitForMemoryRanking: true });
    try {
      const passage = (id: number, collections: string[]) => ({ id, pageId: id, url: `http://a.test/${id}`, title: `P${id}`, headingPath: '', text: `payroll report ${id}`, collections });
      await index.upsert([passage(1, ['col_hr']), passage(2, ['col_eng']), passage(3, ['col_hr', 'col_eng'])]);
      expect(await index.memoryRankingReady()).toBe(true);
      const before = index.memoryRankingCounts()?.passages.answered ?? 0;
      const hits = await index.search('payroll', { limit: 10, filter: { collections: ['col_eng'] } });
      expect(hits.map((h) => h.id).sort()).toEqual([2, 3]);
      expect(index.memoryRankingCounts()?.passages.answered).toBe(before + 1);
    } finally {
      await index.close();
    }
  });
});
