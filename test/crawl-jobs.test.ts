import { tmpdir } from 'node:os';
import path from 'node:path';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { crawlJobWorker } from '../cli/crawl-jobs.js';
import { settleCrawlJob } from '../runtime/index.js';
import type { NotaryConfig } from '../core/config.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { available } from '../testkit/components.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { startCrawlJobSite, until } from './support/crawl-job-site.js';
import { docExample } from './support/doc-examples.js';

/** The body docs/crawl-jobs.md posts, with this test's site and max_pages. */
function documentedBody(url: string, maxPages: number): Record<string, unknown> {
  const match = /-d '([^']+)'/.exec(docExample('crawl-job-post').code);
  if (!match?.[1]) throw new Error('docs/crawl-jobs.md: no body in the crawl-job-post example');
  return { ...(JSON.parse(match[1]) as Record<string, unknown>), url, max_pages: maxPages };
}

/** Crawl jobs over the API, run by the crawl-job worker in this process: real app, real SQLite, a real site on 127.0.0.1. */

interface Job {
  id: string;
  status: string;
  collection: string;
  progress: { stored: number; queued: number; failed: number; pages_per_minute: number | null; eta_seconds: number | null };
  credits_quoted: number;
  credits_used: number | null;
  ended_at: string | null;
  error: { code: string; detail: string } | null;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function config(overrides: Record<string, unknown> = {}): NotaryConfig {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-jobs-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  return apiTestConfig(dataDir, {
    // The operator lets this deployment fetch private addresses (the test site is on 127.0.0.1).
    extract: { allow_private_networks: true },
    crawler: { respect_robots_txt: false, use_sitemaps: false, per_host_delay_ms: 0 },
    pricing: { crawl: { credits_per_page: 2 } },
    default_tier: 'bulk',
    ...overrides,
  });
}

async function harness(cfg: NotaryConfig, credits = 1000): Promise<{ api: ApiHarness; key: string; tenantId: string; startWorker(): void }> {
  const api = await startApi(cfg);
  cleanups.push(() => api.close());
  const tenant = await api.runtime.accounts.createTenant('crawler', { credits });
  const { key } = await api.runtime.accounts.createKey(tenant.id);
  await api.runtime.collections.ensure('handbook');
  await api.runtime.collections.ensure('other');
  return {
    api,
    key,
    tenantId: tenant.id,
    startWorker() {
      const stop = new AbortController();
      const worker = crawlJobWorker(api.runtime, undefined, stop.signal, { log: () => {}, pollMs: 100 });
      cleanups.push(async () => {
        stop.abort();
        await worker;
      });
    },
  };
}

/** The job's life and its single settlement, on a storage: SQLite (embedded) or PostgreSQL (the scaled topology). */
function jobLifeSuite(name: string, storage: () => Promise<Record<string, unknown>>): void {
  describe(`POST /v1/crawl (${name})`, () => {
    it('runs a job to completion: its pages searchable in its collection only, the tenant charged exactly the stored pages', async () => {
      const site = await startCrawlJobSite(8);
      cleanups.push(() => site.close());
      const { api, key, tenantId, startWorker } = await harness(config(await storage()));
      const auth = { authorization: `Bearer ${key}` };
      const posted = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: auth, payload: documentedBody(`${site.url}/docs/index.html`, 50) });
      expect(posted.statusCode, posted.body).toBe(202);
      const job = posted.json() as Job;
      expect(job.id).toMatch(/^crawl_[A-Za-z0-9]{20}$/);
      expect(posted.headers['location']).toBe(`/v1/crawl/${job.id}`);
      expect(job).toMatchObject({ status: 'queued', collection: 'handbook', credits_quoted: 100, credits_used: null, progress: { stored: 0, pages_per_minute: null, eta_seconds: null } });
      // The quote is held: nothing else can spend it while the job runs.
      expect(await api.runtime.accounts.balance(tenantId)).toBe(900);

      startWorker();
      const done = await until('the job to complete', async () => {
        const got = await api.app.inject({ method: 'GET', url: `/v1/crawl/${job.id}`, headers: auth });
        expect(got.statusCode, got.body).toBe(200);
        const body = got.json() as Job;
        return body.status === 'completed' ? body : undefined;
      });
      expect(done.progress.stored).toBe(8);
      expect(done.credits_used).toBe(16);
      expect(done.ended_at).not.toBeNull();
      expect(await api.runtime.accounts.balance(tenantId)).toBe(1000 - 16);
      // Recorded once for usage and revenue, as a crawl of 16 credits.
      const usage = await api.runtime.storage.db.selectFrom('usage_events').select(['operation', 'credits', 'mode']).where('operation', '=', 'crawl').execute();
      expect(usage).toEqual([{ operation: 'crawl', credits: 16, mode: 'api_key' }]);

      const search = async (collection?: string) => {
        const res = await api.app.inject({ method: 'POST', url: '/v1/search', headers: auth, payload: { query: 'marmalade lighthouse', depth: 1, ...(collection ? { collection } : {}) } });
        expect(res.statusCode, res.body).toBe(200);
        return (res.json() as { results: Array<{ url: string }> }).results.map((r) => r.url);
      };
      const found = await search('handbook');
      expect(found.length).toBeGreaterThan(0);
      expect(found.every((url) => url.startsWith(`${site.url}/docs/`))).toBe(true);
      expect(await search('other')).toEqual([]);
      expect(await search()).toEqual([]);

      const list = await api.app.inject({ method: 'GET', url: '/v1/crawl', headers: auth });
      expect((list.json() as { jobs: Job[] }).jobs.map((j) => j.id)).toEqual([job.id]);
      const stranger = await api.runtime.accounts.createTenant('stranger', { credits: 10 });
      const { key: strangerKey } = await api.runtime.accounts.createKey(stranger.id);
      const theirs = await api.app.inject({ method: 'GET', url: `/v1/crawl/${job.id}`, headers: { authorization: `Bearer ${strangerKey}` } });
      expect(theirs.statusCode).toBe(404);
      expect((theirs.json() as { code: string }).code).toBe('crawl_job_not_found');
    }, 90_000);

    it('a job is claimed by one of two racing workers, and two settlements of it charge once', async () => {
      const site = await startCrawlJobSite(3);
      cleanups.push(() => site.close());
      const { api, key, tenantId } = await harness(config(await storage()));
      const posted = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: { authorization: `Bearer ${key}` }, payload: { url: `${site.url}/docs/index.html`, max_pages: 10 } });
      expect(posted.statusCode, posted.body).toBe(202);
      const { id } = posted.json() as Job;
      const jobs = api.runtime.crawlJobs;
      const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => jobs.claim(`racer:${i}`, 60_000)));
      expect(claims.filter((c) => c !== null)).toHaveLength(1);
      // Held by a live owner, it is nobody else's.
      expect(await jobs.claim('late:1', 60_000)).toBeNull();
      const row = await jobs.get(id);
      if (!row) throw new Error('no job');
      expect(await api.runtime.accounts.balance(tenantId)).toBe(1000 - 20);
      const modes = api.runtime.paidCallGate().modes;
      const outcome = { status: 'completed' as const, progress: { stored: 3, queued: 0, failed: 0, pages_per_minute: null, eta_seconds: null } };
      const settled = await Promise.all([settleCrawlJob(jobs, modes, row, outcome), settleCrawlJob(jobs, modes, row, outcome), settleCrawlJob(jobs, modes, row, outcome)]);
      expect(settled.map((s) => s.creditsUsed)).toEqual([6, 6, 6]);
      expect(settled.filter((s) => s.ended !== undefined)).toHaveLength(1);
      expect(await api.runtime.accounts.balance(tenantId)).toBe(1000 - 6);
      // After a crash between the settlement and the job's end, a settlement again moves nothing.
      const again = await settleCrawlJob(jobs, modes, row, { ...outcome, progress: { ...outcome.progress, stored: 9 } });
      expect(again).toMatchObject({ creditsUsed: 6, already: true, ended: undefined });
      expect(await api.runtime.accounts.balance(tenantId)).toBe(1000 - 6);
      expect((await api.runtime.accounts.ledger(tenantId)).filter((e) => e.idempotency_key === `settle ${id}`)).toHaveLength(1);
    });
  });
}

jobLifeSuite('SQLite', async () => ({}));

let databases = 0;
describe.runIf(available('PostgreSQL (Debian)', existsSync('/usr/lib/postgresql')))('on PostgreSQL storage', () => {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.stop());
  jobLifeSuite('PostgreSQL', async () => {
    if (!server) throw new Error('PostgreSQL did not start');
    const url = await createDatabase(server.url, `notary_crawl_jobs_${process.pid}_${databases++}`);
    return { storage: { driver: 'postgres', postgres_url: url }, indexer: { backend: 'postgres' } };
  });
});

describe('POST /v1/crawl', () => {
  it('a job that stores nothing fails and is charged nothing; a cancelled one stops and is charged for what it stored', async () => {
    const site = await startCrawlJobSite(40);
    cleanups.push(() => site.close());
    const cfg = config({ crawler: { respect_robots_txt: false, use_sitemaps: false, per_host_delay_ms: 200, per_host_concurrency: 1 } });
    const { api, key, tenantId, startWorker } = await harness(cfg);
    const auth = { authorization: `Bearer ${key}` };
    const job = async (id: string) => (await api.app.inject({ method: 'GET', url: `/v1/crawl/${id}`, headers: auth })).json() as Job;
    // Nothing listens on the seed's port.
    const closed = await startCrawlJobSite(1);
    const deadUrl = `${closed.url}/docs/index.html`;
    await closed.close();
    const dead = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: auth, payload: { url: deadUrl, max_pages: 5 } });
    expect(dead.statusCode, dead.body).toBe(202);
    startWorker();
    const failed = await until('the dead job to fail', async () => {
      const now = await job((dead.json() as Job).id);
      return now.status === 'failed' ? now : undefined;
    });
    expect(failed).toMatchObject({ credits_used: 0, progress: { stored: 0 }, error: { code: 'nothing_stored' } });
    expect(await api.runtime.accounts.balance(tenantId)).toBe(1000);

    const slow = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: auth, payload: { url: `${site.url}/docs/index.html`, max_pages: 40 } });
    expect(slow.statusCode, slow.body).toBe(202);
    const { id } = slow.json() as Job;
    await until('the job to store pages', async () => ((await job(id)).progress.stored >= 2 ? true : undefined));
    const deleted = await api.app.inject({ method: 'DELETE', url: `/v1/crawl/${id}`, headers: auth });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((deleted.json() as Job).status).toBe('cancelled');
    const ended = await until('the cancelled job to be settled', async () => {
      const now = await job(id);
      return now.credits_used !== null ? now : undefined;
    }, 15_000);
    expect(ended.status).toBe('cancelled');
    expect(ended.progress.stored).toBeLessThan(40);
    expect(ended.credits_used).toBe(ended.progress.stored * 2);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(1000 - ended.progress.stored * 2);
    const fetched = site.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(site.requests.length).toBe(fetched);
    // Cancelling again answers with the final state.
    const twice = await api.app.inject({ method: 'DELETE', url: `/v1/crawl/${id}`, headers: auth });
    expect(twice.json()).toMatchObject({ status: 'cancelled', credits_used: ended.credits_used });
  }, 90_000);
});
