import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { CrawlRunStore } from './crawl-runs.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from './db.js';
import { FrontierStore } from './frontier.js';

let pgServer: TestPostgres;
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => pgServer?.stop());

const backends: Array<[string, () => Promise<Storage>]> = [
  ['sqlite', async () => openSqlite(':memory:')],
  ['postgres', async () => openPostgres(await createDatabase(pgServer.url, `frontier_${Date.now()}_${Math.floor(Math.random() * 1e6)}`))],
];

const entries = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ url: `http://a.test/p${from + i}`, depth: 1 }));

describe.each(backends)('crawl frontier on %s', (_name, open) => {
  let storage: Storage;
  let frontier: FrontierStore;
  let runs: CrawlRunStore;
  beforeAll(async () => {
    storage = await open();
    await migrateToLatest(storage);
    frontier = new FrontierStore(storage.db, storage.dialect);
    runs = new CrawlRunStore(storage.db);
  });
  afterAll(async () => storage.close());

  it('queues each URL once, leases oldest first, and records outcomes', async () => {
    const run = await runs.start(['http://a.test/']);
    expect(await frontier.add(run, entries(5))).toBe(5);
    expect(await frontier.add(run, entries(3, 3))).toBe(1); // p3, p4 are already there
    const first = await frontier.lease(run, 'me', 2, 60_000);
    expect(first.map((e) => e.url)).toEqual(['http://a.test/p0', 'http://a.test/p1']);
    await frontier.finish(run, 'http://a.test/p0', 'stored');
    await frontier.finish(run, 'http://a.test/p1', 'http_error');
    await frontier.addDone(run, [{ url: 'http://a.test/alias', depth: 1 }], 'alias');
    const second = await frontier.lease(run, 'me', 10, 60_000);
    expect(second.map((e) => e.url)).toEqual(['http://a.test/p2', 'http://a.test/p3', 'http://a.test/p4', 'http://a.test/p5']);
    await frontier.release(run, ['http://a.test/p4', 'http://a.test/p5']);
    expect(await frontier.counts(run)).toEqual({ queued: 2, leased: 2, done: 3, outcomes: { stored: 1, http_error: 1, alias: 1 } });
    expect((await frontier.leased(run)).map((e) => e.url)).toEqual(['http://a.test/p2', 'http://a.test/p3']);
    expect(await frontier.pending(run)).toEqual(['http://a.test/p2', 'http://a.test/p3', 'http://a.test/p4', 'http://a.test/p5']);
    expect((await frontier.urls(run)).length).toBe(7);

    const next = await runs.start(['http://a.test/'], { resumedFrom: run });
    await frontier.adopt(run, next);
    expect((await frontier.counts(run)).done).toBe(0);
    expect((await frontier.counts(next)).queued).toBe(2);
    await frontier.clear(next);
    expect(await frontier.urls(next)).toEqual([]);
  });

  it('never hands the same entry to two concurrent leases', async () => {
    const run = await runs.start(['http://b.test/']);
    await frontier.add(run, entries(60));
    const leases = await Promise.all([0, 1, 2, 3].map((i) => frontier.lease(run, `worker-${i}`, 20, 60_000)));
    const urls = leases.flat().map((e) => e.url);
    expect(new Set(urls).size).toBe(urls.length);
    // Each lease locks its own rows: together they take all 60 and no more (SQLite serialises writers).
    expect(urls.length).toBe(60);
    expect((await frontier.counts(run)).leased).toBe(60);
  });

  it('marks runs of dead processes interrupted and finds the latest resumable run of given seeds', async () => {
    const seeds = ['http://c.test/docs/'];
    const dead = await runs.start(seeds);
    // A process id that cannot exist on Linux (pid_max is at most 2^22).
    await storage.db.updateTable('crawl_runs').set({ owner: `${hostname()}:99999999` }).where('id', '=', dead).execute();
    const alive = await runs.start(['http://d.test/']);
    const marked = await runs.markDead();
    expect(marked).toContain(dead);
    expect(marked).not.toContain(alive);
    expect((await runs.get(dead))?.status).toBe('interrupted');
    expect((await runs.get(alive))?.status).toBe('running');
    expect((await runs.latestResumable(seeds))?.id).toBe(dead);
    expect(await runs.latestResumable(['http://other.test/'])).toBeUndefined();

    const resumedBy = await runs.start(seeds, { resumedFrom: dead });
    expect(await runs.latestResumable(seeds)).toBeUndefined();
    await runs.finish(resumedBy, { stored: 1 }, 'stopped');
    expect((await runs.latestResumable(seeds))?.id).toBe(resumedBy);
    await runs.finish(alive, {}, 'finished');
    expect((await runs.get(alive))?.status).toBe('finished');
  });
});
