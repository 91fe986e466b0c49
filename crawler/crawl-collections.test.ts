import { afterEach, describe, expect, it } from 'vitest';
import { runCrawl, type RunCrawlOptions } from './crawl.js';
import { crawlTestResources, crawlerConfig, html, type TestDb } from '../testkit/crawl-site.js';
import { CollectionStore } from '../storage/collections.js';
import { DEFAULT_COLLECTION_ID } from '../core/collections.js';

const resources = crawlTestResources();
const { db } = resources;
const site = resources.site;
afterEach(resources.cleanup);

function crawl(testDb: TestDb, extra: Partial<RunCrawlOptions>) {
  return runCrawl({ config: crawlerConfig({ use_sitemaps: false }), pages: testDb.pages, runs: testDb.runs, frontier: testDb.frontier, ...extra });
}

/** Each stored page's collection ids, by URL path. */
async function membership(testDb: TestDb): Promise<Record<string, string[]>> {
  const pages = await testDb.storage.db.selectFrom('pages').select(['id', 'url']).execute();
  const of = await testDb.pages.collectionsOf(pages.map((p) => p.id));
  return Object.fromEntries(pages.map((p) => [new URL(p.url).pathname, of.get(p.id) ?? []]));
}

describe('runCrawl into a collection', () => {
  it('puts the pages it stores in its collection; a later crawl into another adds that one, and a page joining a collection is indexed again', async () => {
    const { server } = await site({ 'index.html': html('Home', '<a href="a.html">A</a>'), 'a.html': html('A', 'end') });
    const testDb = await db();
    const hr = await new CollectionStore(testDb.storage.db).ensure('hr');
    await crawl(testDb, { seeds: [`${server.url}/`], collection: hr.id });
    expect(await membership(testDb)).toEqual({ '/': [hr.id], '/a.html': [hr.id] });
    // Indexed meanwhile (what the indexer records): joining another collection makes the page due again.
    await testDb.storage.db.updateTable('pages').set({ state: 'indexed' }).execute();
    await crawl(testDb, { seeds: [`${server.url}/`], collection: DEFAULT_COLLECTION_ID });
    expect(await membership(testDb)).toEqual({ '/': [DEFAULT_COLLECTION_ID, hr.id].sort(), '/a.html': [DEFAULT_COLLECTION_ID, hr.id].sort() });
    const states = await testDb.storage.db.selectFrom('pages').select('state').execute();
    expect(states.map((s) => s.state)).toEqual(['fetched', 'fetched']);
    // Crawling again into a collection the pages are in already changes nothing.
    await testDb.storage.db.updateTable('pages').set({ state: 'indexed' }).execute();
    await crawl(testDb, { seeds: [`${server.url}/`], collection: hr.id });
    expect((await testDb.storage.db.selectFrom('pages').select('state').execute()).map((s) => s.state)).toEqual(['indexed', 'indexed']);
  });

  it('a page stored without a collection is in the default one', async () => {
    const { server } = await site({ 'index.html': html('Home', 'alone') });
    const testDb = await db();
    await crawl(testDb, { seeds: [`${server.url}/`] });
    expect(await membership(testDb)).toEqual({ '/': [DEFAULT_COLLECTION_ID] });
  });
});
