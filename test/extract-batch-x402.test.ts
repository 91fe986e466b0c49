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
 * x402 and batches (issue 29 item 4). x402's `exact` scheme (EIP-3009 transferWithAuthorization) moves exactly the
 * amount the payer signed, and the interface's receipt flow is paid before the call: neither can take less than the
 * quote when some URLs fail. So a batch of more than one URL is never offered to x402 and is refused, before any
 * fetch or verification, with a 422 naming the alternatives; `urls` with one URL is priced and settled like `url`.
 * Balances are read from a local EVM chain.
 */
describe('x402 and batch extraction', () => {
  let stack: X402Stack;
  let dir: string;
  let world: ChainWorld;
  let facilitator: RunningFacilitator;
  let site: BatchSite;
  let api: ListeningApi;
  let only: ListeningApi;

  beforeAll(async () => {
    stack = await startX402Stack('extract-batch-x402', { payers: 2 });
    ({ dir, world, facilitator } = stack);
    site = await startBatchSite();
    const extract = { allow_private_networks: true, respect_robots_txt: false, render: 'never', total_timeout_ms: 1_500 } as const;
    api = await startListeningApi(x402ApiConfig(path.join(dir, 'api'), world, facilitator, { extract, crawler: { per_host_delay_ms: 0 } }));
    // A deployment whose only mode is x402.
    only = await startListeningApi(
      x402ApiConfig(path.join(dir, 'only'), world, facilitator, { extract, crawler: { per_host_delay_ms: 0 }, payments: { modes: { api_key: { enabled: false }, mpp: { enabled: false } } } }),
    );
  }, 120_000);
  afterAll(async () => {
    await only?.close();
    await api?.close();
    await site?.close();
    await stack?.close();
  });

  const balances = (payer: Address) => chainBalances(world, payer);
  const post = (base: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/v1/extract`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('a batch without credentials is not offered to x402: the challenges are the modes that can charge per success', async () => {
    const res = await post(api.url, { urls: site.urls });
    const body = (await res.json()) as { code: string; challenges?: Record<string, unknown>; price: { credits: number } };
    expect(res.status, JSON.stringify(body)).toBe(401);
    expect(res.headers.get('payment-required')).toBeNull();
    expect(res.headers.get('www-authenticate')).not.toContain('x402');
    expect(res.headers.get('www-authenticate')).toContain('Bearer');
    expect(body.challenges ?? {}).not.toHaveProperty('x402');
    expect(body.price.credits).toBe(20);
  });

  it('a batch paid with PAYMENT-SIGNATURE is refused with 422 batch_payment_unsupported naming url and the other modes; nothing moves, nothing is fetched', async () => {
    const payer = world.payers[0];
    if (!payer) throw new Error('no payer');
    const { client } = payerClient(world, payer);
    // A valid payment for a one-URL call, presented with a batch.
    const challenge = await challengeFor(`${api.url}/v1/extract`, { url: site.urls[0] });
    const { header } = await signPayment(client, challenge.paymentRequired);
    const before = await balances(payer.address);
    const hits = site.articleHits();
    const res = await post(api.url, { urls: site.urls }, { 'payment-signature': header });
    const problem = (await res.json()) as { code: string; detail: string; mode: string; partial_settlement_modes: string[]; quoted_units: number };
    expect(res.status, JSON.stringify(problem)).toBe(422);
    expect(problem).toMatchObject({ code: 'batch_payment_unsupported', mode: 'x402', quoted_units: 20 });
    expect(problem.partial_settlement_modes).toEqual(expect.arrayContaining(['api_key', 'mpp']));
    expect(problem.detail).toContain('x402 settles exactly the amount the payer authorized');
    expect(problem.detail).toContain('"url"');
    expect(problem.detail).toMatch(/pay the batch with (api_key|mpp)/);
    expect(site.articleHits()).toBe(hits);
    expect(await balances(payer.address)).toEqual(before);
    // The same payment still pays the call it was made for.
    const paid = await post(api.url, { url: site.urls[0] }, { 'payment-signature': header });
    expect(paid.status, await paid.clone().text()).toBe(200);
    const after = await balances(payer.address);
    expect(before.payer - after.payer).toBe(1000n);
  });

  it('urls with one URL is paid like url: the official client pays exactly one URL', async () => {
    const payer = world.payers[1];
    if (!payer) throw new Error('no payer');
    const { fetch: paidFetch } = payerClient(world, payer);
    const before = await balances(payer.address);
    const res = await paidFetch(`${api.url}/v1/extract`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ urls: [site.urls[0]], mode: 'text' }) });
    const body = (await res.json()) as { results: Array<{ ok: boolean; title: string }>; credits_used: number };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.credits_used).toBe(1);
    expect(body.results).toMatchObject([{ ok: true, title: 'Tides, part 1' }]);
    const after = await balances(payer.address);
    expect(after.payTo - before.payTo).toBe(1000n);
    expect(before.payer - after.payer).toBe(1000n);
  });

  it('where x402 is the only mode, a batch is refused up front with the one-URL alternative', async () => {
    const res = await post(only.url, { urls: site.urls.slice(0, 3) });
    const problem = (await res.json()) as { code: string; detail: string; partial_settlement_modes: string[] };
    expect(res.status, JSON.stringify(problem)).toBe(422);
    expect(problem.code).toBe('batch_payment_unsupported');
    expect(problem.partial_settlement_modes).toEqual([]);
    expect(problem.detail).toContain('no payment mode of this service (x402) can settle less than it authorized');
    expect(problem.detail).toContain('send the URLs one per call with "url"');
    expect(res.headers.get('payment-required')).toBeNull();
  });
});
