import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openPostgres, type Storage } from '../../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../../test/support/postgres.js';
import { vectorHarness } from '../../test/support/vector-harness.js';
import { searchIndexContract } from '../search-index.contract.js';
import { vectorIndexContract } from '../vector-index.contract.js';
import { PgVectorIndex, PostgresSearchIndex, toTsQuery } from './postgres.js';

let server: TestPostgres;
let shared: Storage;
beforeAll(async () => {
  server = await startPostgres();
  shared = openPostgres(await createDatabase(server.url, `fts_${process.pid}`));
  await migrateToLatest(shared);
}, 120_000);
afterAll(async () => {
  await shared?.close();
  server?.stop();
});

let counter = 0;

searchIndexContract('postgres-fts', async () => PostgresSearchIndex.open(shared, { table: `fts_contract_${counter++}` }));

vectorIndexContract('pgvector-hnsw', async () => {
  const url = await createDatabase(server.url, `pgvector_${process.pid}_${counter++}`);
  return vectorHarness(() => openPostgres(url), (storage, options) => PgVectorIndex.open(storage, options));
});

describe('toTsQuery', () => {
  it('keeps words only, drops stopwords, ORs the rest, and adds identifiers as phrases', () => {
    expect(toTsQuery('How do I "create" an INDEX* (NEAR:x)')).toBe('create | index | near | x | (near <-> x)');
    expect(toTsQuery('lc_numeric setting')).toBe('lc | numeric | setting | (lc <-> numeric)');
    expect(toTsQuery("'; DROP TABLE passages; --")).toBe('drop | table | passages');
    expect(toTsQuery('Café')).toBe('cafe');
    expect(toTsQuery(' !&|:*() ')).toBeNull();
  });
});

describe('PostgresSearchIndex', () => {
  it('finds an identifier through its parts and its phrase', async () => {
    const index = await PostgresSearchIndex.open(shared, { table: `fts_ident_${counter++}` });
    await index.upsert([
      { id: 1, pageId: 1, url: 'http://a.test/1', title: 'Numeric types', headingPath: '', text: 'numeric precision and numeric scale; lc of a numeric column; numeric rounding' },
      { id: 2, pageId: 2, url: 'http://a.test/2', title: 'Client defaults', headingPath: '', text: 'lc_numeric sets the locale used to format numbers, like other client settings' },
    ]);
    // Unlike FTS5's bm25, ts_rank does not lift the exact phrase above a passage full of one part (measured, README).
    expect((await index.search('lc_numeric', { limit: 5 })).map((h) => h.id).sort()).toEqual([1, 2]);
  });

  it('opens from several processes at once (the schema is created once)', async () => {
    const table = `fts_race_${counter++}`;
    const opened = await Promise.all(Array.from({ length: 4 }, () => PostgresSearchIndex.open(shared, { table })));
    await opened[0]!.upsert([{ id: 1, pageId: 1, url: 'http://a.test/', title: 'T', headingPath: '', text: 'wal archiving' }]);
    expect((await opened[3]!.search('archive', { limit: 5 })).map((h) => h.id)).toEqual([1]);
  });

  it('rebuilds in one transaction: a reader sees the old rows until the new ones are complete', async () => {
    const index = await PostgresSearchIndex.open(shared, { table: `fts_rebuild_${counter++}` });
    await index.upsert([{ id: 1, pageId: 1, url: 'http://a.test/1', title: 'Old', headingPath: '', text: 'checkpoint tuning' }]);
    let during: number[] = [];
    async function* batches() {
      yield [{ id: 10, pageId: 2, url: 'http://a.test/10', title: 'New', headingPath: '', text: 'checkpoint spreading' }];
      during = (await index.search('checkpoint', { limit: 5 })).map((h) => h.id);
    }
    expect(await index.rebuild(batches())).toBe(1);
    expect(during).toEqual([1]);
    expect((await index.search('checkpoint', { limit: 5 })).map((h) => h.id)).toEqual([10]);
  });

  it('refuses SQLite storage with invalid_config', async () => {
    const { openSqlite } = await import('../../storage/db.js');
    const sqlite = openSqlite(':memory:');
    await expect(PostgresSearchIndex.open(sqlite)).rejects.toMatchObject({ code: 'invalid_config' });
    await expect(PgVectorIndex.open(sqlite, { model: 'm', dimensions: 3 })).rejects.toMatchObject({ code: 'invalid_config' });
    await sqlite.close();
  });
});
