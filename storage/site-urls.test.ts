import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { CollectionStore } from './collections.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from './db.js';
import { FrontierStore } from './frontier.js';
import { htmlPageFetched, PageStore } from './pages.js';
import { SiteUrlStore } from './site-urls.js';

let pgServer: TestPostgres | undefined;
const dir = mkdtempSync(path.join(tmpdir(), 'notary-site-urls-'));
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => {
  pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const engines: Array<[string, () => Promise<Storage>]> = [
  ['sqlite', async () => openSqlite(path.join(dir, `s-${Date.now()}.sqlite`))],
  ['postgres', async () => openPostgres(await createDatabase((pgServer as TestPostgres).url, `site_urls_${Date.now()}`))],
];

describe.each(engines)('site URLs on %s', (_name, open) => {
  it('lists pages and frontier URLs under a prefix in byte order after a cursor, each once; by collection', async () => {
    const storage = await open();
    try {
      await migrateToLatest(storage);
      const pages = new PageStore(storage.db);
      // Upper case sorts before lower case in byte order (not in a linguistic collation); "_" and "%" are no wildcards.
      for (const p of ['/d/b', '/d/B', '/d/a_1', '/d/a%2F', '/e/x', '/dx']) await pages.saveFetched({ ...htmlPageFetched(`https://s.test${p}`, p), title: `T${p}` });
      await pages.markGone('https://s.test/d/a%2F', 404);
      const frontier = new FrontierStore(storage.db, storage.dialect);
      await frontier.add('run_1', [{ url: 'https://s.test/d/c', depth: 1 }, { url: 'https://s.test/d/b', depth: 1 }]);
      await frontier.add('run_2', [{ url: 'https://s.test/d/c', depth: 1 }]);
      await frontier.addDone('run_2', [{ url: 'https://s.test/d/skip', depth: 1 }], 'robots');
      const sites = new SiteUrlStore(storage.db, storage.dialect);
      expect((await sites.indexed('https://s.test/d/', '', 10)).map((p) => [p.url, p.title])).toEqual([
        ['https://s.test/d/B', 'T/d/B'],
        ['https://s.test/d/a_1', 'T/d/a_1'],
        ['https://s.test/d/b', 'T/d/b'],
      ]);
      expect((await sites.indexed('https://s.test/d/', 'https://s.test/d/B', 1)).map((p) => p.url)).toEqual(['https://s.test/d/a_1']);
      expect(await sites.frontier('https://s.test/d/', '', 10)).toEqual(['https://s.test/d/b', 'https://s.test/d/c']);
      expect(await sites.frontier('https://s.test/d/', 'https://s.test/d/b', 10)).toEqual(['https://s.test/d/c']);
      // A page of another collection only is not in the default one; pages without membership rows are.
      const other = await new CollectionStore(storage.db).ensure('other');
      await pages.joinCollection('https://s.test/d/b', other.id);
      await storage.db.deleteFrom('page_collections').where('collection_id', '!=', other.id).execute();
      const { DEFAULT_COLLECTION_ID } = await import('../core/collections.js');
      expect((await sites.indexed('https://s.test/d/', '', 10, DEFAULT_COLLECTION_ID)).map((p) => p.url)).toEqual(['https://s.test/d/B', 'https://s.test/d/a_1']);
      expect((await sites.indexed('https://s.test/d/', '', 10, other.id)).map((p) => p.url)).toEqual(['https://s.test/d/b']);
    } finally {
      await storage.close();
    }
  });
});
