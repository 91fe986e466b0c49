import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlJobWorker } from '../cli/crawl-jobs.js';
import { publicKeyFromSeed } from '../payments/crypto/ed25519.js';
import { toBase64Url } from '../payments/crypto/encoding.js';
import { buildEnvelope, mppParties } from '../payments/modes/mpp/index.js';
import { chargeShares } from '../payments/modes/mpp/holds.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import type { StaticServer } from '../testkit/serve-static.js';
import { startCrawlJobSite, until } from './support/crawl-job-site.js';

/** A paying party: its tenant and the seed of its registered key. */
interface Party {
  name: string;
  tenant: { id: string };
  seed: Uint8Array;
}

/**
 * A crawl job paid by an MPP envelope: every party's share of the quote is held in one transaction (claiming the
 * envelope's nonce), and the job's end gives each party back what it was not charged, in one transaction keyed by
 * the job: the parties together pay exactly the stored pages, each in proportion to its share.
 */
describe('POST /v1/crawl paid with an MPP envelope', () => {
  let dir: string;
  let site: StaticServer;
  let api: ApiHarness;
  const stop = new AbortController();
  let worker: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-mpp-'));
    site = await startCrawlJobSite(3);
    api = await startApi(
      apiTestConfig(dir, {
        extract: { allow_private_networks: true },
        crawler: { respect_robots_txt: false, use_sitemaps: false, per_host_delay_ms: 0 },
        pricing: { crawl: { credits_per_page: 1 } },
      }),
    );
    worker = crawlJobWorker(api.runtime, undefined, stop.signal, { log: () => {}, pollMs: 100 });
  }, 60_000);
  afterAll(async () => {
    stop.abort();
    await worker;
    await api?.close();
    await site?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds each share of the quote, then charges the parties exactly the stored pages, split by their shares', async () => {
    const parties: Party[] = [];
    for (const name of ['crawl-a', 'crawl-b']) {
      const tenant = await api.runtime.accounts.createTenant(name, { credits: 50, tier: 'bulk' });
      const seed = new Uint8Array(randomBytes(32));
      await api.runtime.service(mppParties).addKey(tenant, toBase64Url(publicKeyFromSeed(seed)));
      parties.push({ name, tenant, seed });
    }
    const [a, b] = parties as [Party, Party];
    const body = JSON.stringify({ url: `${site.url}/docs/index.html`, max_pages: 10 });
    const envelope = buildEnvelope({
      method: 'POST',
      url: 'http://localhost:80/v1/crawl',
      body,
      totalCredits: 10,
      parties: [
        { party: a.name, seed: a.seed, share: '0.75' },
        { party: b.name, seed: b.seed, share: '0.25' },
      ],
    });
    const res = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: { 'content-type': 'application/json', authorization: `MPP envelope=${envelope.encoded}` }, payload: body });
    expect(res.statusCode, res.body).toBe(202);
    const { id } = res.json() as { id: string };
    const balances = async () => {
      const map = await api.runtime.accounts.balances([a.tenant.id, b.tenant.id]);
      return [map.get(a.tenant.id), map.get(b.tenant.id)];
    };
    // 10 credits by 0.75/0.25: 7.5 and 2.5, the leftover credit to the first listed on a tie.
    const held = await api.runtime.accounts.ledger(a.tenant.id);
    expect(held.filter((e) => e.idempotency_key === `hold ${id}`).map((e) => e.delta)).toEqual([-8]);

    const done = await until('the job to end', async () => {
      const row = await api.runtime.crawlJobs.get(id);
      return row?.settled_at ? row : undefined;
    });
    expect(done).toMatchObject({ status: 'completed', stored: 3, credits_used: 3 });
    // 3 credits over the 8 and 2 held: 2.4 and 0.6, the leftover to the larger remainder.
    expect(chargeShares([8, 2], 3)).toEqual([2, 1]);
    expect(await balances()).toEqual([48, 49]);
    for (const p of [a, b]) {
      const rows = (await api.runtime.accounts.ledger(p.tenant.id)).filter((e) => e.idempotency_key !== null);
      expect(rows.map((e) => e.idempotency_key)).toEqual([`hold ${id}`, `settle ${id}`]);
    }
    // The parties read their job with an envelope for the GET (0 credits: reads are not charged); a party alone is
    // another payer, to whom the job is as absent as an unknown id.
    const read = async (signers: Party[]) => {
      const shares = signers.length === 1 ? ['1'] : ['0.75', '0.25'];
      const { encoded } = buildEnvelope({
        method: 'GET',
        url: `http://localhost:80/v1/crawl/${id}`,
        body: '',
        totalCredits: 0,
        parties: signers.map((p, i) => ({ party: p.name, seed: p.seed, share: shares[i] ?? '1' })),
      });
      return api.app.inject({ method: 'GET', url: `/v1/crawl/${id}`, headers: { authorization: `MPP envelope=${encoded}` } });
    };
    const both = await read([a, b]);
    expect(both.statusCode, both.body).toBe(200);
    expect(both.json()).toMatchObject({ id, status: 'completed', credits_used: 3, progress: { stored: 3 } });
    const alone = await read([a]);
    expect([alone.statusCode, (alone.json() as { code: string }).code]).toEqual([404, 'crawl_job_not_found']);
    expect(await balances()).toEqual([48, 49]);
    // The envelope's nonce was used by the hold: the same envelope cannot pay a second job.
    const again = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: { 'content-type': 'application/json', authorization: `MPP envelope=${envelope.encoded}` }, payload: body });
    expect((again.json() as { code: string }).code).toBe('mpp_nonce_replayed');
    expect(await balances()).toEqual([48, 49]);
  }, 60_000);

  it('never charges a party more than was held from it', () => {
    for (let total = 1; total <= 30; total++) {
      for (let first = 0; first <= total; first++) {
        const held = [first, total - first];
        for (let credits = 0; credits <= total; credits++) {
          const parts = chargeShares(held, credits);
          expect(parts.reduce((s, p) => s + p, 0)).toBe(credits);
          parts.forEach((p, i) => expect(p).toBeLessThanOrEqual(held[i] ?? 0));
        }
      }
    }
  });
});

/**
 * The other uncharged job routes under an envelope for the request (0 credits, empty body): listing and cancelling.
 * No crawl worker here, so the job stays queued until it is cancelled.
 */
describe('GET /v1/crawl and DELETE /v1/crawl/{id} with an MPP envelope', () => {
  let dir: string;
  let api: ApiHarness;
  const parties: Party[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-mpp-delete-'));
    api = await startApi(apiTestConfig(dir, { extract: { allow_private_networks: true }, pricing: { crawl: { credits_per_page: 1 } } }));
    for (const name of ['cancel-a', 'cancel-b']) {
      const tenant = await api.runtime.accounts.createTenant(name, { credits: 50, tier: 'bulk' });
      const seed = new Uint8Array(randomBytes(32));
      await api.runtime.service(mppParties).addKey(tenant, toBase64Url(publicKeyFromSeed(seed)));
      parties.push({ name, tenant, seed });
    }
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A request under an envelope signed by `signers` for exactly this method, path and body. */
  const send = (method: 'GET' | 'POST' | 'DELETE', url: string, signers: Party[], options: { body?: string; credits?: number; signedFor?: string; issuedAt?: Date } = {}) => {
    const shares = signers.length === 1 ? ['1'] : ['0.5', '0.5'];
    const { encoded } = buildEnvelope({
      method: options.signedFor ?? method,
      url: `http://localhost:80${url}`,
      body: options.body ?? '',
      totalCredits: options.credits ?? 0,
      parties: signers.map((p, i) => ({ party: p.name, seed: p.seed, share: shares[i] ?? '1' })),
      ...(options.issuedAt ? { issuedAt: options.issuedAt } : {}),
    });
    const headers = { authorization: `MPP envelope=${encoded}`, ...(options.body ? { 'content-type': 'application/json' } : {}) };
    return api.app.inject({ method, url, headers, ...(options.body ? { payload: options.body } : {}) });
  };

  it('lists the job to its parties (in any order) only, and cancels it for them only', async () => {
    const [a, b] = parties as [Party, Party];
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/docs/', max_pages: 4 });
    const ordered = await send('POST', '/v1/crawl', [a, b], { body, credits: 4 });
    expect(ordered.statusCode, ordered.body).toBe(202);
    const { id } = ordered.json() as { id: string };
    const balances = async () => [...(await api.runtime.accounts.balances([a.tenant.id, b.tenant.id])).values()];
    const held = await balances();
    expect(held).toEqual([48, 48]);

    const listed = await send('GET', '/v1/crawl', [b, a]);
    expect(listed.statusCode, listed.body).toBe(200);
    expect((listed.json() as { jobs: Array<{ id: string }> }).jobs.map((j) => j.id)).toEqual([id]);
    // An old envelope reads nothing, though these reads charge nothing: times are checked on every call.
    const stale = await send('GET', '/v1/crawl', [a, b], { issuedAt: new Date(Date.now() - 24 * 3_600_000) });
    expect([stale.statusCode, (stale.json() as { code: string }).code]).toEqual([401, 'mpp_envelope_expired']);
    const alonesList = await send('GET', '/v1/crawl', [a]);
    expect((alonesList.json() as { jobs: unknown[] }).jobs).toEqual([]);

    // Another party set is another payer: its cancel finds nothing, and the job is still queued.
    const alone = await send('DELETE', `/v1/crawl/${id}`, [a]);
    expect([alone.statusCode, (alone.json() as { code: string }).code]).toEqual([404, 'crawl_job_not_found']);
    expect((await api.runtime.crawlJobs.get(id))?.status).toBe('queued');
    // An envelope signed for the GET does not cancel: the method is bound.
    const asRead = await send('DELETE', `/v1/crawl/${id}`, [a, b], { signedFor: 'GET' });
    expect([asRead.statusCode, (asRead.json() as { code: string }).code]).toEqual([401, 'mpp_method_mismatch']);
    expect((await api.runtime.crawlJobs.get(id))?.status).toBe('queued');

    const cancelled = await send('DELETE', `/v1/crawl/${id}`, [b, a]);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json()).toMatchObject({ id, status: 'cancelled' });
    const read = await send('GET', `/v1/crawl/${id}`, [a, b]);
    expect(read.json()).toMatchObject({ id, status: 'cancelled' });
    // Reading, listing and cancelling are not charged.
    expect(await balances()).toEqual(held);
  }, 60_000);
});
