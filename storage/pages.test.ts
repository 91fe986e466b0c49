import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from './db.js';
import { CrawlRunStore } from './crawl-runs.js';
import { FrontierStore } from './frontier.js';
import { PageStore } from './pages.js';

let pgServer: TestPostgres;
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => pgServer?.stop());

const backends: Array<[string, () => Promise<Storage>]> = [
  ['sqlite', async () => openSqlite(':memory:')],
  ['postgres', async () => openPostgres(await createDatabase(pgServer.url, `pages_${Date.now()}_${Math.floor(Math.random() * 1e6)}`))],
];

const page = (url: string, hash: string) => ({
  url,
  final_url: url,
  host: new URL(url).host,
  http_status: 200,
  content_type: 'text/html',
  etag: '"v1"',
  last_modified: null,
  content_hash: hash,
  title: 'T',
  html: '<p>x</p>',
  crawl_depth: 0,
});

describe.each(backends)('PageStore on %s', (_name, open) => {
  let storage: Storage;
  let store: PageStore;
  beforeAll(async () => {
    storage = await open();
    await migrateToLatest(storage);
    await migrateToLatest(storage); // idempotent
    store = new PageStore(storage.db);
  });
  afterAll(async () => storage.close());

  it('moves a page through fetched -> indexed -> changed -> gone', async () => {
    const first = await store.saveFetched(page('http://a.test/1', 'h1'));
    expect(first.changed).toBe(true);
    expect((await store.pendingForIndex(10)).map((p) => p.url)).toEqual(['http://a.test/1']);

    const row = await store.getByUrl('http://a.test/1');
    const inserted = await store.replacePassages(row!, [
      { ordinal: 0, url: row!.url, title: 'T', heading_path: 'A', text: 'alpha beta', word_count: 2 },
      { ordinal: 1, url: row!.url, title: 'T', heading_path: 'A > B', text: 'gamma', word_count: 1 },
    ]);
    expect(inserted.map((p) => p.ordinal)).toEqual([0, 1]);
    expect(await store.pendingForIndex(10)).toEqual([]);
    expect((await store.counts()).passages).toBe(2);

    expect((await store.saveFetched(page('http://a.test/1', 'h1'))).changed).toBe(false);
    expect(await store.pendingForIndex(10)).toEqual([]);
    expect((await store.saveFetched(page('http://a.test/1', 'h2'))).changed).toBe(true);
    expect((await store.pendingForIndex(10)).length).toBe(1);

    await store.markGone('http://a.test/1', 404);
    const gone = (await store.pendingForIndex(10))[0]!;
    expect(gone.state).toBe('gone');
    const removed = await store.removePassages(gone);
    expect(removed.sort()).toEqual(inserted.map((p) => p.id).sort());
    expect(await store.pendingForIndex(10)).toEqual([]);
    expect(await store.counts()).toMatchObject({ pages: 0, gone: 1, passages: 0 });
  });

  it('finds duplicates by content hash', async () => {
    await store.saveFetched(page('http://b.test/x', 'same'));
    expect((await store.findDuplicate('same', 'http://b.test/y'))?.url).toBe('http://b.test/x');
    expect(await store.findDuplicate('same', 'http://b.test/x')).toBeUndefined();
  });
});

describe.each(backends)('PageStore.saveFetched with a caller-supplied row on %s', (_name, open) => {
  it('updates instead of failing when the row said absent was stored meanwhile', async () => {
    const storage = await open();
    await migrateToLatest(storage);
    const store = new PageStore(storage.db);
    const first = await store.saveFetched(page('http://c.test/1', 'h1'), null);
    const again = await store.saveFetched(page('http://c.test/1', 'h2'), null);
    expect(again.id).toBe(first.id);
    expect((await store.getByUrl('http://c.test/1'))?.content_hash).toBe('h2');
    await storage.close();
  });
});

describe.each(backends)('a stored page and its crawl frontier entry commit together on %s', (_name, open) => {
  it('marks the entry done in the transaction that stores the page; a failure before the commit leaves neither', async () => {
    const storage = await open();
    await migrateToLatest(storage);
    const store = new PageStore(storage.db);
    const frontier = new FrontierStore(storage.db, storage.dialect);
    const run = await new CrawlRunStore(storage.db).start(['http://f.test/']);
    await frontier.add(run, [1, 2, 3].map((i) => ({ url: `http://f.test/${i}`, depth: 0 })));
    expect(await frontier.lease(run, 'worker', 3, 60_000)).toHaveLength(3);

    await store.saveFetched(page('http://f.test/1', 'h1'), null, (db) => frontier.finish(run, 'http://f.test/1', 'stored', db));
    // The process dies after both writes and before the commit (here: the transaction throws there).
    const dies = (db: Parameters<typeof frontier.finish>[3]) => frontier.finish(run, 'http://f.test/2', 'stored', db).then(() => Promise.reject(new Error('killed')));
    await expect(store.saveFetched(page('http://f.test/2', 'h2'), null, dies)).rejects.toThrow('killed');
    await store.saveFetched(page('http://f.test/3', 'h3'), null);
    await expect(store.markUnchanged('http://f.test/3', dies)).rejects.toThrow('killed');
    const checked = (await store.getByUrl('http://f.test/3'))?.checked_at;
    await new Promise((r) => setTimeout(r, 5));
    await store.markUnchanged('http://f.test/3', (db) => frontier.finish(run, 'http://f.test/3', 'unchanged', db));

    expect((await store.getByUrl('http://f.test/1'))?.content_hash).toBe('h1');
    expect(await store.getByUrl('http://f.test/2')).toBeUndefined();
    expect((await store.getByUrl('http://f.test/3'))?.checked_at).not.toBe(checked);
    expect((await frontier.leased(run)).map((e) => e.url)).toEqual(['http://f.test/2']);
    expect(await frontier.counts(run)).toMatchObject({ leased: 1, done: 2, outcomes: { stored: 1, unchanged: 1 } });
    await storage.close();
  });
});
