import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crawlJobWorker } from '../cli/crawl-jobs.js';
import type { NotaryConfig } from '../core/config.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { startCrawlJobSite, until } from './support/crawl-job-site.js';

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

describe('POST /v1/crawl', () => {
  it('runs a job to completion: its pages searchable in its collection only, the tenant charged exactly the stored pages', async () => {
    const site = await startCrawlJobSite(8);
    cleanups.push(() => site.close());
    const { api, key, tenantId, startWorker } = await harness(config());
    const auth = { authorization: `Bearer ${key}` };
    const posted = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: auth, payload: { url: `${site.url}/docs/index.html`, collection: 'handbook', max_pages: 50 } });
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
});
