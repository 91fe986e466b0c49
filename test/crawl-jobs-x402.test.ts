import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import {
  chainBalances,
  challengeFor,
  payerClient,
  signPayment,
  startListeningApi,
  startX402Stack,
  x402ApiConfig,
  type ChainWorld,
  type ListeningApi,
  type RunningFacilitator,
  type X402Stack,
} from '../testkit/x402.js';
import { startBatchSite, type BatchSite } from './support/batch-site.js';

/**
 * x402 and crawl jobs (issue 33 item 3): a job is quoted at max_pages and charged when it ends for the pages it
 * stored, and x402's `exact` payments move exactly the signed amount with the call, so POST /v1/crawl is never
 * offered to x402 and is refused with 422 deferred_payment_unsupported before anything is settled. Balances are
 * read from a local EVM chain.
 */
describe('x402 and crawl jobs', () => {
  let stack: X402Stack;
  let dir: string;
  let world: ChainWorld;
  let facilitator: RunningFacilitator;
  let site: BatchSite;
  let api: ListeningApi;

  beforeAll(async () => {
    stack = await startX402Stack('crawl-x402', { payers: 1 });
    ({ dir, world, facilitator } = stack);
    site = await startBatchSite();
    const extract = { allow_private_networks: true, respect_robots_txt: false, render: 'never' } as const;
    api = await startListeningApi(x402ApiConfig(path.join(dir, 'api'), world, facilitator, { extract, crawler: { per_host_delay_ms: 0 } }));
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await site?.close();
    await stack?.close();
  });

  const balances = (payer: Address) => chainBalances(world, payer);
  const crawl = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${api.url}/v1/crawl`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('a job without credentials is not offered to x402', async () => {
    const res = await crawl({ url: site.urls[0], max_pages: 1 });
    const body = (await res.json()) as { code: string; challenges?: Record<string, unknown> };
    expect(res.status, JSON.stringify(body)).toBe(401);
    expect(res.headers.get('payment-required')).toBeNull();
    expect(res.headers.get('www-authenticate')).toContain('Bearer');
    expect(res.headers.get('www-authenticate')).not.toContain('x402');
    expect(body.challenges ?? {}).not.toHaveProperty('x402');
  });

  it('a job paid with PAYMENT-SIGNATURE is refused with 422 deferred_payment_unsupported: nothing moves, no job is made', async () => {
    const payer = world.payers[0];
    if (!payer) throw new Error('no payer');
    const { client } = payerClient(world, payer);
    // A valid payment for a one-URL extraction, presented with a job of one page (quoted at the same credits).
    const challenge = await challengeFor(`${api.url}/v1/extract`, { url: site.urls[0] });
    const { header } = await signPayment(client, challenge.paymentRequired);
    const before = await balances(payer.address);
    const res = await crawl({ url: site.urls[0], max_pages: 1 }, { 'payment-signature': header });
    const problem = (await res.json()) as { code: string; detail: string; mode: string; deferred_payment_modes: string[] };
    expect(res.status, JSON.stringify(problem)).toBe(422);
    expect(problem).toMatchObject({ code: 'deferred_payment_unsupported', mode: 'x402' });
    expect(problem.deferred_payment_modes).toContain('api_key');
    expect(problem.detail).toContain('x402 settles exactly the amount the payer authorized');
    expect(await balances(payer.address)).toEqual(before);
    expect(await api.runtime.crawlJobs.claim('test:1', 1000)).toBeNull();
  });
});
