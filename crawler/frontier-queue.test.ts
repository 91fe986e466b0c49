import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrawlRunStore } from '../storage/crawl-runs.js';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { FrontierStore, type LeasedEntry } from '../storage/frontier.js';
import { FrontierQueue } from './frontier-queue.js';

/** The real store on a slow database (a loaded machine): each lease answers `delayMs` after it ran its query. */
class SlowLeaseStore extends FrontierStore {
  delayMs = 0;
  override async lease(...args: Parameters<FrontierStore['lease']>): Promise<LeasedEntry[]> {
    const leased = await super.lease(...args);
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    return leased;
  }
}

describe('FrontierQueue', () => {
  let storage: Storage;
  let store: SlowLeaseStore;
  let runs: CrawlRunStore;
  beforeAll(async () => {
    storage = await openSqlite(':memory:');
    await migrateToLatest(storage);
    store = new SlowLeaseStore(storage.db, storage.dialect);
    runs = new CrawlRunStore(storage.db);
  });
  afterAll(async () => storage.close());

  it('URLs queued while a lease that found nothing is on its way back are still handed out (not stranded as queued)', async () => {
    const runId = await runs.start(['http://a.test/']);
    const queue = new FrontierQueue({ store, runId, owner: 'me', batch: 16, budgetLeft: () => Infinity });
    await queue.add([{ url: 'http://a.test/', depth: 0 }]);
    const seed = await queue.fetchNextRequest();
    expect(seed?.url).toBe('http://a.test/');
    // The only request in flight; the queue looks for more and finds none, slowly. Meanwhile the page's links arrive.
    store.delayMs = 100;
    const looking = queue.isEmpty();
    await new Promise((r) => setTimeout(r, 20));
    expect(await queue.add([{ url: 'http://a.test/linked', depth: 1 }])).toBe(1);
    expect(await looking).toBe(true);
    store.delayMs = 0;
    await queue.markRequestHandled(seed!);
    // The linked URL is in the frontier: the queue must not call itself finished, and hands it out.
    expect(await queue.isFinished()).toBe(false);
    expect((await queue.fetchNextRequest())?.url).toBe('http://a.test/linked');
  });
});
