import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crawlJobWorker } from '../cli/crawl-jobs.js';
import { apiTestConfig, startApi } from '../testkit/app.js';
import { startCrawlJobSite, until } from './support/crawl-job-site.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Issue 33: a tenant's crawl jobs reach private addresses only when the operator allows them for that tenant; the
 * deployment stays strict (extract.allow_private_networks false) for every other tenant, and metadata addresses stay
 * closed for the allowed one.
 */
describe('private addresses per tenant (POST /v1/crawl)', () => {
  it('an allowed tenant crawls its intranet site; another tenant is refused at POST; metadata stays closed', async () => {
    const site = await startCrawlJobSite(3);
    cleanups.push(() => site.close());
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-private-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const api = await startApi(
      apiTestConfig(dataDir, { extract: { allow_private_networks: false }, crawler: { respect_robots_txt: false, use_sitemaps: false, per_host_delay_ms: 0 }, default_tier: 'bulk' }),
    );
    cleanups.push(() => api.close());
    const accounts = api.runtime.accounts;
    const intranet = await accounts.createTenant('intranet', { credits: 100 });
    const outsider = await accounts.createTenant('outsider', { credits: 100 });
    await accounts.updateTenant(intranet.id, { allowPrivateNetworks: true });
    const keyOf = async (tenantId: string) => (await accounts.createKey(tenantId)).key;
    const post = async (key: string, url: string) => {
      const res = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: { authorization: `Bearer ${key}` }, payload: { url, max_pages: 5 } });
      return { status: res.statusCode, body: res.json() as { id?: string; code?: string } };
    };
    const seed = `${site.url}/docs/index.html`;

    const refused = await post(await keyOf(outsider.id), seed);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('blocked_address');
    expect(await accounts.balance(outsider.id)).toBe(100);

    const intranetKey = await keyOf(intranet.id);
    const metadata = await post(intranetKey, 'http://169.254.169.254/latest/meta-data/');
    expect(metadata.status).toBe(403);
    expect(metadata.body.code).toBe('blocked_address');

    const accepted = await post(intranetKey, seed);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const stop = new AbortController();
    const worker = crawlJobWorker(api.runtime, undefined, stop.signal, { log: () => {}, pollMs: 100 });
    cleanups.push(async () => {
      stop.abort();
      await worker;
    });
    const done = await until('the job to end', async () => {
      const row = await api.runtime.crawlJobs.get(accepted.body.id ?? '');
      return row && row.settled_at !== null ? row : undefined;
    });
    // The worker crawled under the tenant's allowance too: every page of the loopback site stored.
    expect(done).toMatchObject({ status: 'completed', stored: 3 });
    expect(await accounts.balance(intranet.id)).toBe(100 - 3);

    // Taken back, the tenant is refused like the others.
    await accounts.updateTenant(intranet.id, { allowPrivateNetworks: false });
    expect((await post(intranetKey, seed)).status).toBe(403);
  }, 90_000);
});
