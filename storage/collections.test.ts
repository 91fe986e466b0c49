import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator } from 'kysely/migration';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_COLLECTION_ID } from '../core/collections.js';
import { CollectionStore, COLLECTION_TTL_MS } from './collections.js';
import { migrateToLatest, openSqlite } from './db.js';
import { migrationProvider } from './migrations.js';
import { htmlPageFetched, PageStore } from './pages.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-collections-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 0033_collections', () => {
  it('makes the default collection and puts every page stored before it there; collections by name, membership, counts', async () => {
    const storage = openSqlite(path.join(dir, 'upgrade.sqlite'));
    try {
      // A database as the release before collections left it, with two pages.
      const migrator = new Migrator({ db: storage.db, provider: migrationProvider('sqlite'), allowUnorderedMigrations: true });
      const before = await migrator.migrateTo('0019_crawl_host_active');
      expect(before.error).toBeUndefined();
      const pages = new PageStore(storage.db);
      const a = await pages.saveFetched(htmlPageFetched('https://a.test/', '<p>a</p>'));
      const b = await pages.saveFetched(htmlPageFetched('https://b.test/', '<p>b</p>'));
      await migrateToLatest(storage);
      const collections = new CollectionStore(storage.db);
      expect((await collections.list()).map((c) => [c.id, c.name])).toEqual([[DEFAULT_COLLECTION_ID, 'default']]);
      const rows = await storage.db.selectFrom('page_collections').select(['page_id', 'collection_id']).orderBy('page_id').execute();
      expect(rows).toEqual([
        { page_id: a.id, collection_id: DEFAULT_COLLECTION_ID },
        { page_id: b.id, collection_id: DEFAULT_COLLECTION_ID },
      ]);
      expect(await collections.resolve('default')).toMatchObject({ collection: { id: DEFAULT_COLLECTION_ID }, total: 1 });
      // A new collection: names are unique, made once whoever asks.
      const hr = await collections.ensure('hr');
      expect(hr.id).toMatch(/^col_[0-9A-Za-z]{20}$/);
      expect((await collections.ensure('hr')).id).toBe(hr.id);
      expect(await collections.resolve('hr')).toMatchObject({ collection: { id: hr.id, name: 'hr' }, total: 2 });
      expect(await collections.resolve('nope')).toBeUndefined();
      // Membership: a page joins hr and stays in default; one stored later without rows counts for default.
      await pages.joinCollection('https://a.test/', hr.id);
      const c = await pages.saveFetched(htmlPageFetched('https://c.test/', '<p>c</p>'));
      expect(await pages.collectionsOf([a.id, b.id, c.id])).toEqual(
        new Map([
          [a.id, [DEFAULT_COLLECTION_ID, hr.id].sort()],
          [b.id, [DEFAULT_COLLECTION_ID]],
          [c.id, [DEFAULT_COLLECTION_ID]],
        ]),
      );
      expect(await collections.pageCounts()).toEqual(new Map([[DEFAULT_COLLECTION_ID, 3], [hr.id, 1]]));
    } finally {
      await storage.close();
    }
  });
});

describe('CollectionStore.resolve: remembered between calls (a paid call asks for every request)', () => {
  it('answers from memory; each answer is trusted for COLLECTION_TTL_MS, its own writes forget at once', async () => {
    const file = path.join(dir, 'resolve-cache.sqlite');
    const api = openSqlite(file);
    const cli = openSqlite(file); // another process on the same database (notary collections create)
    try {
      await migrateToLatest(api);
      let now = 1_000_000;
      const served = new CollectionStore(api.db, () => now);
      const other = new CollectionStore(cli.db);
      expect(await served.resolve('default')).toMatchObject({ total: 1 });
      // Another process adds a collection: within the TTL the answer in memory stands (no query), after it is asked anew.
      const hr = await other.ensure('hr');
      now += COLLECTION_TTL_MS - 1;
      expect(await served.resolve('default')).toMatchObject({ total: 1 });
      now += 1;
      expect(await served.resolve('default')).toMatchObject({ collection: { id: DEFAULT_COLLECTION_ID }, total: 2 });
      // Names it never found are asked every time: a collection made elsewhere is found at once.
      expect(await served.resolve('sales')).toBeUndefined();
      await other.ensure('sales');
      expect(await served.resolve('sales')).toMatchObject({ total: 3 });
      // Another process changes a collection's own settings: seen once the answer in memory is older than the TTL.
      expect(await served.resolve('hr')).toMatchObject({ collection: { id: hr.id, name: 'hr', max_depth: null } });
      await other.setSettings('hr', { maxDepth: 1 });
      expect(await served.resolve('hr')).toMatchObject({ collection: { max_depth: null } });
      now += COLLECTION_TTL_MS;
      expect(await served.resolve('hr')).toMatchObject({ collection: { max_depth: 1 } });
      // Its own writes forget at once.
      await served.setSettings('hr', { maxDepth: null });
      expect(await served.resolve('hr')).toMatchObject({ collection: { max_depth: null } });
    } finally {
      await api.close();
      await cli.close();
    }
  });

  it("this store's own ensure() forgets its answers at once (notary serve crawling into a new collection)", async () => {
    const storage = openSqlite(path.join(dir, 'resolve-own.sqlite'));
    try {
      await migrateToLatest(storage);
      const store = new CollectionStore(storage.db, () => 0);
      expect(await store.resolve('default')).toMatchObject({ total: 1 });
      await store.ensure('hr');
      expect(await store.resolve('default')).toMatchObject({ total: 2 });
    } finally {
      await storage.close();
    }
  });
});
