import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crawlJobWorker } from '../cli/crawl-jobs.js';
import { startTestServer } from '../testkit/upstream-server.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { html } from '../testkit/crawl-site.js';
import { until } from './support/crawl-job-site.js';

/** POST /v1/crawl: the tier's crawl limits, the request checks, and the SSRF suite; nothing charged for a refusal. */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function api(allowPrivate: boolean): Promise<{ harness: ApiHarness; post(body: object, key?: string): Promise<{ status: number; body: Record<string, unknown> }>; key: string; tenantId: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-limits-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = apiTestConfig(dataDir, {
    extract: { allow_private_networks: allowPrivate },
    crawler: { respect_robots_txt: false, use_sitemaps: false, per_host_delay_ms: 0 },
    tiers: { small: { requests_per_minute: 60_000, burst: 1000, crawl_concurrent_jobs: 2, crawl_pages_per_job: 10, crawl_pages_per_day: 15 } },
    default_tier: 'small',
  });
  const harness = await startApi(config);
  cleanups.push(() => harness.close());
  const tenant = await harness.runtime.accounts.createTenant('limited', { credits: 100 });
  const { key } = await harness.runtime.accounts.createKey(tenant.id);
  return {
    harness,
    key,
    tenantId: tenant.id,
    async post(body, withKey = key) {
      const res = await harness.app.inject({ method: 'POST', url: '/v1/crawl', headers: { authorization: `Bearer ${withKey}` }, payload: body });
      return { status: res.statusCode, body: res.json() as Record<string, unknown> };
    },
  };
}

describe('POST /v1/crawl refusals', () => {
  it("keeps to the tier's limits and checks the request, charging nothing for a refusal", async () => {
    const { harness, post, tenantId, key } = await api(true);
    const seed = 'http://127.0.0.1:9/docs/';
    const refused: Array<[object, number, string, string?]> = [
      [{ url: seed, max_pages: 11 }, 429, 'crawl_limit_reached', 'crawl_pages_per_job'],
      [{ url: seed, scope: 'any' }, 400, 'invalid_request'],
      [{ url: seed, urls: [seed] }, 422, 'invalid_batch'],
      [{}, 422, 'invalid_batch'],
      [{ url: 'ftp://example.org/' }, 400, 'invalid_url'],
      [{ url: seed, include: ['(unclosed'] }, 422, 'invalid_crawl_pattern'],
      // Valid JavaScript, not RE2: lookaround and backreferences would let a pattern backtrack.
      [{ url: seed, exclude: ['^(?!.*docs)'] }, 422, 'invalid_crawl_pattern'],
      [{ url: seed, include: ['(a)\\1'] }, 422, 'invalid_crawl_pattern'],
      [{ url: seed, max_depth: 21 }, 400, 'invalid_request'],
      [{ url: seed, collection: 'nowhere' }, 404, 'collection_not_found'],
    ];
    for (const [body, status, code, limit] of refused) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body) + JSON.stringify(res.body)).toBe(status);
      expect(res.body['code']).toBe(code);
      if (limit) expect(res.body['limit']).toBe(limit);
    }
    expect(await harness.runtime.accounts.balance(tenantId)).toBe(100);

    // Without max_pages, the tier's per-job limit when it is below the default of 100. A retry with the same
    // Idempotency-Key answers the same job, held once.
    const keyed = () =>
      harness.app.inject({ method: 'POST', url: '/v1/crawl', headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'crawl-once' }, payload: { url: seed } });
    const firstRes = await keyed();
    const first = { status: firstRes.statusCode, body: firstRes.json() as Record<string, unknown> };
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body).toMatchObject({ max_pages: 10, credits_quoted: 10 });
    const retried = await keyed();
    expect(retried.statusCode).toBe(202);
    expect(retried.headers['idempotency-replayed']).toBe('true');
    expect((retried.json() as { id: string }).id).toBe(first.body['id']);
    expect(await harness.runtime.accounts.balance(tenantId)).toBe(90);
    // 10 pages today already: 6 more would pass 15 a day.
    const daily = await post({ url: seed, max_pages: 6 });
    expect(daily.status).toBe(429);
    expect(daily.body).toMatchObject({ code: 'crawl_limit_reached', limit: 'crawl_pages_per_day' });
    expect(await post({ url: seed, max_pages: 5 })).toMatchObject({ status: 202 });
    const third = await post({ url: seed, max_pages: 1 });
    expect(third.body).toMatchObject({ code: 'crawl_limit_reached', limit: 'crawl_concurrent_jobs' });
    expect(await harness.runtime.accounts.balance(tenantId)).toBe(100 - 15);

    // A key limited to other collections may not crawl into this one.
    await harness.runtime.collections.ensure('mine');
    const other = await harness.runtime.collections.ensure('theirs');
    const limitedKey = (await harness.runtime.accounts.createKey(tenantId, { collections: [other.id] })).key;
    const forbidden = await post({ url: seed, collection: 'mine' }, limitedKey);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body['code']).toBe('collection_forbidden');
  });

  it('eight orders at once: the tier allows two jobs at once and 15 pages a day, and exactly that many are held', async () => {
    const { post, tenantId, harness } = await api(true);
    const seed = 'http://127.0.0.1:9/docs/';
    // 8 jobs of 5 pages: crawl_concurrent_jobs 2 lets two through (10 pages, within crawl_pages_per_day 15).
    const answers = await Promise.all(Array.from({ length: 8 }, () => post({ url: seed, max_pages: 5 })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([202, 202, 429, 429, 429, 429, 429, 429]);
    for (const refused of answers.filter((a) => a.status === 429)) expect(refused.body).toMatchObject({ code: 'crawl_limit_reached' });
    expect(await harness.runtime.crawlJobs.active(`tenant:${tenantId}`)).toBe(2);
    // Held: two quotes of 5 pages; every refusal gave its hold back.
    expect(await harness.runtime.accounts.balance(tenantId)).toBe(100 - 2 * 5);
  });

  it('refuses loopback and metadata seeds before any charge, and never follows a redirect to metadata inside the crawl', async () => {
    const site = await startTestServer({
      '/docs/': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(html('Docs', '<p>The docs.</p><a href="/docs/a">a</a> <a href="/docs/to-metadata">meta</a> <a href="/docs/to-mapped">mapped</a>'));
      },
      '/docs/a': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(html('A', '<p>Page a.</p>'));
      },
      '/docs/to-metadata': (_req, res) => {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
      },
      '/docs/to-mapped': (_req, res) => {
        res.writeHead(302, { location: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/' });
        res.end();
      },
    });
    cleanups.push(() => site.close());
    const strict = await api(false);
    for (const url of [`${site.origin}/docs/`, `http://localhost:${site.port}/docs/`, 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/', 'http://[::1]/']) {
      const res = await strict.post({ url });
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body['code']).toBe('blocked_address');
    }
    const mixed = await strict.post({ urls: ['http://93.184.215.14/', 'http://169.254.169.254/'] });
    expect(mixed.body['code']).toBe('blocked_address');
    expect(await strict.harness.runtime.accounts.balance(strict.tenantId)).toBe(100);
    expect(await strict.harness.runtime.crawlJobs.list(`tenant:${strict.tenantId}`, 10)).toEqual([]);

    // The operator allows private networks (the site is on 127.0.0.1): metadata stays closed, also behind a redirect.
    const open = await api(true);
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/']) {
      expect((await open.post({ url })).body['code']).toBe('blocked_address');
    }
    const posted = await open.post({ url: `${site.origin}/docs/`, max_pages: 10 });
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const stop = new AbortController();
    const worker = crawlJobWorker(open.harness.runtime, undefined, stop.signal, { log: () => {}, pollMs: 100 });
    cleanups.push(async () => {
      stop.abort();
      await worker;
    });
    const id = String(posted.body['id']);
    const done = await until('the job to end', async () => {
      const row = await open.harness.runtime.crawlJobs.get(id);
      return row?.settled_at ? row : undefined;
    });
    expect(done).toMatchObject({ status: 'completed', stored: 2, credits_used: 2 });
    const skips = await open.harness.runtime.runs.skips(done.run_id ?? '');
    expect(skips.filter((s) => s.reason === 'blocked_address').map((s) => s.url).sort()).toEqual([`${site.origin}/docs/to-mapped`, `${site.origin}/docs/to-metadata`]);
  }, 60_000);
});
