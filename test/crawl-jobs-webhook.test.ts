import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { crawlJobWorker, webhookOnEnded } from '../cli/crawl-jobs.js';
import { apiTestConfig, startApi } from '../testkit/app.js';
import { startCrawlJobSite, until } from './support/crawl-job-site.js';
import { receiver, signed } from './support/webhook-receiver.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Issue 33: a crawl job that names a webhook endpoint calls it once when it ends, signed per Standard Webhooks with the
 * endpoint's secret; the delivery is listed. The worker's end hook is the one `notary serve` and `notary crawl-worker`
 * install (cli/crawl-jobs.ts webhookOnEnded), the delivery the outbox's.
 */
describe('POST /v1/crawl with a webhook', () => {
  it('delivers crawl.completed once, with a valid signature, carrying the job as GET shows it', async () => {
    const site = await startCrawlJobSite(4);
    cleanups.push(() => site.close());
    const hooks = await receiver();
    cleanups.push(() => hooks.close());
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-webhook-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const api = await startApi(
      apiTestConfig(dataDir, {
        extract: { allow_private_networks: true },
        webhooks: { allow_private_networks: true },
        crawler: { respect_robots_txt: false, use_sitemaps: false, per_host_delay_ms: 0 },
        default_tier: 'bulk',
      }),
    );
    cleanups.push(() => api.close());
    const tenant = await api.runtime.accounts.createTenant('hooked', { credits: 100 });
    const { key } = await api.runtime.accounts.createKey(tenant.id);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    const registered = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: auth, payload: JSON.stringify({ url: hooks.url }) });
    expect(registered.statusCode, registered.body).toBe(201);
    const endpoint = registered.json() as { id: string; secret: string };
    // An endpoint that is not the tenant's (unknown, or another tenant's) is refused before anything is held.
    const stranger = await api.runtime.accounts.createTenant('stranger', { credits: 10 });
    const theirs = await api.runtime.webhooks.registerEndpoint({ url: hooks.url, tenantId: stranger.id });
    for (const webhook of ['whe_doesnotexist', theirs.id]) {
      const refused = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: auth, payload: JSON.stringify({ url: `${site.url}/docs/index.html`, max_pages: 10, webhook }) });
      expect(refused.statusCode, refused.body).toBe(404);
      expect(refused.json()).toMatchObject({ code: 'webhook_not_found' });
    }
    expect(await api.runtime.accounts.balance(tenant.id)).toBe(100);
    const posted = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: auth, payload: JSON.stringify({ url: `${site.url}/docs/index.html`, max_pages: 10, webhook: endpoint.id }) });
    expect(posted.statusCode, posted.body).toBe(202);
    const job = posted.json() as { id: string; webhook: string };
    expect(job.webhook).toBe(endpoint.id);

    const stop = new AbortController();
    const logs: string[] = [];
    const worker = crawlJobWorker(api.runtime, undefined, stop.signal, { log: (m) => logs.push(m), pollMs: 100, onEnded: webhookOnEnded(api.runtime, (m) => logs.push(m)) });
    const delivery = api.runtime.startWebhookDelivery(() => {});
    cleanups.push(async () => {
      stop.abort();
      await worker;
      await delivery.stop(2000);
    });
    await until('the webhook to be delivered', async () => (hooks.got.length > 0 ? true : undefined));
    const done = await api.app.inject({ method: 'GET', url: `/v1/crawl/${job.id}`, headers: auth });
    const shown = done.json() as { status: string; credits_used: number; progress: { stored: number } };
    expect(shown).toMatchObject({ status: 'completed', credits_used: 4, progress: { stored: 4 } });

    const [got] = hooks.got;
    if (!got) throw new Error('no delivery');
    const message = new Webhook(endpoint.secret).verify(got.body, signed(got)) as { type: string; data: Record<string, unknown> };
    expect(message).toMatchObject({ type: 'crawl.completed', data: { id: job.id, status: 'completed', credits_used: 4 } });
    // Signed with this endpoint's secret only: another secret does not verify it.
    expect(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(got.body, signed(got))).toThrow();
    // Once: the worker's end hook again (a crash between the end and the hook) queues nothing more.
    const row = await api.runtime.crawlJobs.get(job.id);
    if (!row) throw new Error('no job row');
    await webhookOnEnded(api.runtime, () => {})(row);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(hooks.got).toHaveLength(1);
    const deliveries = await api.app.inject({ method: 'GET', url: `/v1/webhooks/${endpoint.id}/deliveries`, headers: auth });
    expect(deliveries.statusCode, deliveries.body).toBe(200);
    expect(JSON.stringify(deliveries.json())).toContain('crawl.completed');
  }, 90_000);
});
