import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { CrawlJobStore, type NewCrawlJob } from './crawl-jobs.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from './db.js';

let pgServer: TestPostgres;
const dir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-jobs-store-'));
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => {
  pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// PostgreSQL: two connection pools to one database (two API nodes). SQLite: one connection (better-sqlite3 waits for
// a lock synchronously, so two connections in one process would only wait on each other; across processes its
// read-write transactions begin IMMEDIATE, storage/db.ts).
const backends: Array<[string, () => Promise<[Storage, Storage]>]> = [
  [
    'sqlite',
    async () => {
      const one = openSqlite(path.join(dir, 'a.sqlite'));
      return [one, one];
    },
  ],
  [
    'postgres',
    async () => {
      const url = await createDatabase(pgServer.url, `crawl_jobs_${Date.now()}_${Math.floor(Math.random() * 1e6)}`);
      return [openPostgres(url), openPostgres(url)];
    },
  ],
];

function job(id: string): NewCrawlJob {
  return {
    id,
    payer: 'tenant:ten_race',
    tenant_id: null,
    tier: 'free',
    collection_id: 'col_default',
    collection_name: 'default',
    seeds: '["https://a.test/"]',
    scope: 'path',
    max_pages: 5,
    max_depth: 1,
    include: '[]',
    exclude: '[]',
    webhook: null,
    credits_quoted: 5,
    hold: '{}',
    request_id: 'req_race',
    created_at: new Date().toISOString(),
    allow_private: 0,
  };
}

describe.each(backends)('CrawlJobStore.createWithinLimits on %s', (_name, open) => {
  let stores: [CrawlJobStore, CrawlJobStore];
  let storages: [Storage, Storage];
  beforeAll(async () => {
    storages = await open();
    await migrateToLatest(storages[0]);
    stores = [new CrawlJobStore(storages[0].db, storages[0].dialect), new CrawlJobStore(storages[1].db, storages[1].dialect)];
  }, 60_000);
  afterAll(async () => {
    for (const s of new Set(storages ?? [])) await s.close();
  });

  it('eight orders at once from two processes: the count and the insert are one step, so two jobs at most are made', async () => {
    const limits = {
      since: '1970-01-01T00:00:00.000Z',
      check(active: number) {
        if (active >= 2) throw new Error('over the limit');
      },
    };
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => stores[i % 2]!.createWithinLimits(job(`crawl_race${i}`), limits)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).toEqual(new Array(6).fill('Error: over the limit'));
    expect(await stores[0].active('tenant:ten_race')).toBe(2);
  });
});
