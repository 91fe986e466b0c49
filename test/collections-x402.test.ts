import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { htmlPageFetched } from '../storage/pages.js';
import {
  chainBalances,
  payerClient,
  startListeningApi,
  startX402Stack,
  x402ApiConfig,
  type ChainWorld,
  type ListeningApi,
  type RunningFacilitator,
  type X402Stack,
} from '../testkit/x402.js';

/** A page of one paragraph about `topic`, long enough to make passages. */
function page(title: string, topic: string): string {
  const words = `${topic} `.repeat(6) + 'the team keeps this page current with the schedule, the contacts and the rules that apply to everyone this year';
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${words}.</p><p>${words} again.</p></main></body></html>`;
}

/**
 * x402 payers have no account to hold limits (issue 33 item 2): they read the collections the operator made public
 * (the default collection is public; a new one is private until `notary collections set NAME --public`). A paid
 * search naming a private collection is refused with 403 collection_forbidden before anything is settled: no token
 * moves on the local chain.
 */
describe('collections and x402 payers', () => {
  let stack: X402Stack;
  let dir: string;
  let world: ChainWorld;
  let facilitator: RunningFacilitator;
  let api: ListeningApi;

  beforeAll(async () => {
    stack = await startX402Stack('collections-x402', { payers: 1 });
    ({ dir, world, facilitator } = stack);
    api = await startListeningApi(x402ApiConfig(path.join(dir, 'api'), world, facilitator));
    const { runtime } = api;
    const open = await runtime.collections.ensure('open');
    await runtime.collections.setPublic('open', true);
    const closed = await runtime.collections.ensure('closed');
    const stored: Array<[string, string, string[]]> = [
      ['https://open.test/tides', page('Tide tables', 'tide harbour lighthouse'), [open.id]],
      ['https://closed.test/tides', page('Tide secrets', 'tide harbour lighthouse'), [closed.id]],
      ['https://www.test/tides', page('Tide notes', 'tide harbour lighthouse'), []],
    ];
    for (const [url, html, collections] of stored) {
      await runtime.pages.saveFetched(htmlPageFetched(url, html));
      for (const id of collections) await runtime.pages.joinCollection(url, id);
    }
    expect((await runtime.indexer().runOnce()).indexedPages).toBe(3);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await stack?.close();
  });

  const balances = (payer: Address) => chainBalances(world, payer);
  const paidSearch = async (collection?: string) => {
    const payer = world.payers[0];
    if (!payer) throw new Error('no payer');
    const { fetch: paidFetch } = payerClient(world, payer);
    const before = await balances(payer.address);
    const res = await paidFetch(`${api.url}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'tide harbour lighthouse', depth: 1, ...(collection ? { collection } : {}) }),
    });
    const body = (await res.json()) as { results?: Array<{ url: string }>; code?: string };
    const after = await balances(payer.address);
    return { status: res.status, body, paid: before.payer - after.payer };
  };

  it('reads a public collection and the default one, paying for each search', async () => {
    const open = await paidSearch('open');
    expect(open.status, JSON.stringify(open.body)).toBe(200);
    expect(open.body.results?.map((r) => r.url)).toEqual(['https://open.test/tides']);
    expect(open.paid).toBeGreaterThan(0n);
    const plain = await paidSearch();
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body.results?.map((r) => r.url)).toEqual(['https://www.test/tides']);
  });

  it('is refused a private collection with 403 collection_forbidden, and nothing moves on the chain', async () => {
    const closed = await paidSearch('closed');
    expect(closed.status, JSON.stringify(closed.body)).toBe(403);
    expect(closed.body.code).toBe('collection_forbidden');
    expect(closed.paid).toBe(0n);
  });

  it('reads a collection once the operator makes it public', async () => {
    await api.runtime.collections.setPublic('closed', true);
    try {
      const closed = await paidSearch('closed');
      expect(closed.status, JSON.stringify(closed.body)).toBe(200);
      expect(closed.body.results?.map((r) => r.url)).toEqual(['https://closed.test/tides']);
    } finally {
      await api.runtime.collections.setPublic('closed', false);
    }
  });
});
