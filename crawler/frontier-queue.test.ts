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

describe('FrontierQueue on a shared frontier: leases follow the requests the queue holds', () => {
  let storage: Storage;
  let store: FrontierStore;
  let runs: CrawlRunStore;
  beforeAll(async () => {
    storage = await openSqlite(':memory:');
    await migrateToLatest(storage);
    store = new FrontierStore(storage.db, storage.dialect);
    runs = new CrawlRunStore(storage.db);
  });
  afterAll(async () => storage.close());

  const leaseOf = async (runId: string, url: string) =>
    storage.db.selectFrom('crawl_frontier').select(['state', 'lease_owner', 'lease_expires_at']).where('run_id', '=', runId).where('url', '=', url).executeTakeFirstOrThrow();

  it('a request whose settle check fails is handed out again, not dropped with its lease held', async () => {
    const runId = await runs.start(['http://b.test/']);
    let failures = 1;
    const queue = new FrontierQueue({
      store, runId, owner: 'me', batch: 4, budgetLeft: () => Infinity,
      shared: {
        leaseMs: 60_000,
        settle: async () => {
          // The database did not answer this once (a loaded machine): crawlee asks again.
          if (failures-- > 0) throw new Error('connection timeout');
          return false;
        },
      },
    });
    try {
      await queue.add([{ url: 'http://b.test/1', depth: 0 }, { url: 'http://b.test/2', depth: 0 }]);
      await expect(queue.fetchNextRequest()).rejects.toThrow(/connection timeout/);
      expect((await queue.fetchNextRequest())?.url).toBe('http://b.test/1');
      expect((await queue.fetchNextRequest())?.url).toBe('http://b.test/2');
    } finally {
      await queue.close();
    }
  });

  it.each([
    ['a private frontier', false],
    ['a shared frontier', true],
  ])('on %s, a request whose handler never reports back is queued again after max_in_flight, and the run goes on', async (_name, shared) => {
    const runId = await runs.start([`http://c${String(shared)}.test/`]);
    const base = `http://c${String(shared)}.test`;
    const queue = new FrontierQueue({
      store, runId, owner: 'me', batch: 4, budgetLeft: () => Infinity, maxInFlightMs: 300,
      ...(shared ? { shared: { leaseMs: 200 } } : {}),
    });
    try {
      await queue.add([{ url: `${base}/lost`, depth: 0 }, { url: `${base}/next`, depth: 0 }]);
      // Crawlee took /lost and never said what became of it (the call that fetched it timed out and was made again).
      expect((await queue.fetchNextRequest())?.url).toBe(`${base}/lost`);
      const next = await queue.fetchNextRequest();
      expect(next?.url).toBe(`${base}/next`);
      await queue.markRequestHandled(next!);
      await store.finish(runId, `${base}/next`, 'stored');
      expect(await queue.isFinished()).toBe(false);
      // Past max_in_flight the request is presumed lost: its lease is given back and it is handed out again.
      let again = null;
      const deadline = Date.now() + 3_000;
      while (!again && Date.now() < deadline) {
        again = await queue.fetchNextRequest();
        if (!again) await new Promise((r) => setTimeout(r, 50));
      }
      expect(again?.url).toBe(`${base}/lost`);
      expect((await leaseOf(runId, `${base}/lost`)).state).toBe('leased');
      await queue.markRequestHandled(again!);
      await store.finish(runId, `${base}/lost`, 'stored');
      expect(await queue.isFinished()).toBe(true);
    } finally {
      await queue.close();
    }
  });

  it('renews the leases of the requests it holds, and only those', async () => {
    const runId = await runs.start(['http://d.test/']);
    const leaseMs = 300;
    const queue = new FrontierQueue({ store, runId, owner: 'me', batch: 1, budgetLeft: () => Infinity, shared: { leaseMs } });
    try {
      await queue.add([{ url: 'http://d.test/held', depth: 0 }]);
      expect((await queue.fetchNextRequest())?.url).toBe('http://d.test/held');
      // A row this owner leased that no queue holds (a crawl of this process that ended without giving it back).
      await store.add(runId, [{ url: 'http://d.test/orphan', depth: 0 }]);
      await store.lease(runId, 'me', 1, leaseMs);
      const orphanBefore = (await leaseOf(runId, 'http://d.test/orphan')).lease_expires_at;
      await new Promise((r) => setTimeout(r, leaseMs * 2));
      expect((await leaseOf(runId, 'http://d.test/orphan')).lease_expires_at).toBe(orphanBefore);
      expect(Date.parse((await leaseOf(runId, 'http://d.test/held')).lease_expires_at ?? '')).toBeGreaterThan(Date.now());
      // Run out, it is taken over like any expired lease.
      expect((await queue.fetchNextRequest())?.url).toBe('http://d.test/orphan');
    } finally {
      await queue.close();
    }
  });
});
