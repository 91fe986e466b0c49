import { hostname } from 'node:os';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { CrawlRunStore } from './crawl-runs.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from './db.js';
import { FrontierStore } from './frontier.js';
import { SharedHostSlots } from './host-slots.js';

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

describe('a frontier shared by crawler processes (PostgreSQL)', () => {
  let storage: Storage;
  let frontier: FrontierStore;
  let runs: CrawlRunStore;
  beforeAll(async () => {
    storage = openPostgres(await createDatabase(pgServer.url, `frontier_shared_${process.pid}`));
    await migrateToLatest(storage);
    frontier = new FrontierStore(storage.db, storage.dialect);
    runs = new CrawlRunStore(storage.db);
  });
  afterAll(async () => storage.close());

  it('workers starting together join one run; a shared run lives while any worker heartbeats', async () => {
    const seeds = ['http://s.test/'];
    const joined = await Promise.all([0, 1, 2, 3].map(() => runs.joinShared(seeds, { max_pages: 10 })));
    expect(new Set(joined.map((r) => r.id)).size).toBe(1);
    expect(JSON.parse(joined[0]!.options ?? '{}')).toEqual({ max_pages: 10, shared: true });
    // The process that started it is gone, but the heartbeat is fresh: not interrupted.
    await storage.db.updateTable('crawl_runs').set({ owner: `${hostname()}:99999999` }).where('id', '=', joined[0]!.id).execute();
    expect(await runs.markDead()).not.toContain(joined[0]!.id);
    // A stale heartbeat ends it, and the next worker starts a new run.
    await storage.db.updateTable('crawl_runs').set({ heartbeat_at: '2000-01-01T00:00:00.000Z' }).where('id', '=', joined[0]!.id).execute();
    expect(await runs.markDead()).toContain(joined[0]!.id);
    expect((await runs.joinShared(seeds, {})).id).not.toBe(joined[0]!.id);
  });

  it('takes over leases that ran out (only when asked), keeps renewed ones, and counts what others still hold', async () => {
    const run = await runs.start(['http://t.test/']);
    await frontier.add(run, entries(6, 100));
    const dead = await frontier.lease(run, 'dead', 3, 50, { reclaimExpired: true });
    expect(await frontier.lease(run, 'live', 1, 50, { reclaimExpired: true })).toHaveLength(1);
    expect(dead.map((e) => e.url)).toEqual(['http://a.test/p100', 'http://a.test/p101', 'http://a.test/p102']);
    expect(await frontier.outstanding(run, 'me')).toBe(6); // 2 queued, 4 leased by others
    await new Promise((r) => setTimeout(r, 80));
    expect(await frontier.renew(run, 'live', 60_000)).toBe(1);
    // Without reclaimExpired (one process owns the run) an expired lease stays where it is.
    expect((await frontier.lease(run, 'me', 10, 60_000)).map((e) => e.url)).toEqual(['http://a.test/p104', 'http://a.test/p105']);
    expect(await frontier.outstanding(run, 'me')).toBe(4); // the dead worker's 3 expired, the live one's 1
    const taken = await frontier.lease(run, 'me', 10, 60_000, { reclaimExpired: true });
    expect(taken.map((e) => e.url)).toEqual(['http://a.test/p100', 'http://a.test/p101', 'http://a.test/p102']);
    expect(await frontier.outstanding(run, 'me')).toBe(1);
    expect(await frontier.leasedByOthers(run, 'me')).toBe(1);
    await frontier.finish(run, 'http://a.test/p103', 'stored');
    expect(await frontier.outstanding(run, 'me')).toBe(0);
  });

  it('reserves max_pages as requests are leased: workers together never hold more than the pages left', async () => {
    const run = await runs.start(['http://m.test/']);
    await frontier.add(run, entries(40, 300));
    // Four workers (each its own store and connections, as processes would be) lease at once against max_pages 10.
    const workers = [0, 1, 2, 3].map(() => new FrontierStore(storage.db, storage.dialect));
    const first = await Promise.all(workers.map((w, i) => w.lease(run, `w${i}`, 4, 60_000, { reclaimExpired: true, maxPages: 10 })));
    expect(first.flat()).toHaveLength(10);
    expect(await workers[0]!.lease(run, 'w0', 4, 60_000, { reclaimExpired: true, maxPages: 10 })).toEqual([]);
    // Two requests end without a page (their places come back), three store one (theirs stay taken).
    const held = first.flat();
    await frontier.finish(run, held[0]!.url, 'http_error');
    await frontier.finish(run, held[1]!.url, 'duplicate');
    for (const e of held.slice(2, 5)) await frontier.finish(run, e.url, 'stored');
    const again = await Promise.all(workers.map((w, i) => w.lease(run, `w${i}`, 4, 60_000, { reclaimExpired: true, maxPages: 10 })));
    expect(again.flat()).toHaveLength(2);
    // A dead worker's leases are taken over without taking new places.
    // Which worker holds leases now depends on how the leases above interleaved: the first holder plays the dead one.
    const holder = await storage.db.selectFrom('crawl_frontier').select('lease_owner').where('run_id', '=', run).where('state', '=', 'leased').executeTakeFirstOrThrow();
    const dead = holder.lease_owner ?? '';
    await storage.db.updateTable('crawl_frontier').set({ lease_expires_at: '2000-01-01T00:00:00.000Z' }).where('run_id', '=', run).where('lease_owner', '=', dead).execute();
    const survivor = [0, 1, 2, 3].find((i) => `w${i}` !== dead) ?? 0;
    const takenOver = await workers[survivor]!.lease(run, `w${survivor}`, 10, 60_000, { reclaimExpired: true, maxPages: 10 });
    expect(takenOver.length).toBeGreaterThan(0);
    const counts = await frontier.counts(run);
    expect(counts.leased + (counts.outcomes['stored'] ?? 0)).toBe(10);
  });

  it('holds per-host concurrency across processes; a dead holder\'s slot runs out', async () => {
    const slots = [new SharedHostSlots(storage.db), new SharedHostSlots(storage.db)];
    let active = 0;
    let most = 0;
    await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map(async (i) => {
        const release = await slots[i % 2]!.acquire('c.test', 2, `worker-${i % 2}`, { ttlMs: 60_000 });
        active++;
        most = Math.max(most, active);
        await new Promise((r) => setTimeout(r, 60));
        active--;
        await release();
      }),
    );
    expect(most).toBe(2);
    expect(await storage.db.selectFrom('crawl_host_active').selectAll().where('host', '=', 'c.test').execute()).toEqual([]);

    // A worker died holding the only slot: the next one waits until the slot's time runs out, then takes it.
    await sql`insert into crawl_host_active (host, slot, owner, expires_at)
      values ('d.test', 0, 'dead', extract(epoch from clock_timestamp()) * 1000 + 400)`.execute(storage.db);
    const started = Date.now();
    const release = await slots[1]!.acquire('d.test', 1, 'live', { ttlMs: 60_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const holders = await storage.db.selectFrom('crawl_host_active').select(['slot', 'owner']).where('host', '=', 'd.test').execute();
    expect(holders).toEqual([{ slot: 0, owner: 'live' }]);
    await release();
    const aborted = new AbortController();
    const held = await slots[0]!.acquire('e.test', 1, 'w', { ttlMs: 60_000 });
    const waiting = slots[1]!.acquire('e.test', 1, 'w2', { ttlMs: 60_000, signal: aborted.signal });
    setTimeout(() => aborted.abort(), 100);
    await expect(waiting).rejects.toThrow();
    await held();
  });

  it('spaces request starts to one host across processes', async () => {
    const slots = [new SharedHostSlots(storage.db), new SharedHostSlots(storage.db)];
    await Promise.all(slots.map((s, i) => s.reserve(`warm-up-${i}.test`, 1))); // pool connections open
    const starts: number[] = [];
    await Promise.all(
      slots.map(async (s) => {
        for (let i = 0; i < 4; i++) {
          const wait = await s.reserve('h.test', 60);
          await new Promise((r) => setTimeout(r, wait));
          starts.push(Date.now());
        }
      }),
    );
    starts.sort((a, b) => a - b);
    // 8 bookings 60 ms apart: the span is 7 gaps, less what the first start lost to its database round trip
    // (a start is never earlier than its slot; timers only fire late).
    expect(starts[7]! - starts[0]!).toBeGreaterThanOrEqual(7 * 60 - 30);
    expect(await slots[0]!.reserve('h.test', 0)).toBe(0);
  });
});
