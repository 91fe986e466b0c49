import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { RECEIPT_EXTENSION } from '../payments/modes/x402/facilitator.js';
import { decodeReceipt } from '../payments/modes/x402/receipt.js';
import { repoRoot, runChild, runCli } from '../testkit/cli.js';
import { commandLines, docExample, shownHeaders } from './support/doc-examples.js';
import { startTestServer, type TestServer } from '../testkit/upstream-server.js';
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

const article = `<!doctype html><html lang="en"><head><title>Tides explained</title></head><body><article><h1>Tides explained</h1>
<p>Tides are the rise and fall of sea levels caused by the combined effects of the gravitational forces exerted by the
Moon and the Sun and the rotation of the Earth. Most places see two high tides and two low tides every single day.</p>
<p>Spring tides come when the Sun and Moon line up; neap tides when they are at right angles, a week after each spring
tide, with a range smaller than the average range of the tides at that place.</p></article></body></html>`;

/**
 * x402 end to end with real parts: an EVM running in this process (EDR), the EIP-3009 token compiled from source
 * with solc, the real `notary facilitator` command settling on it, notary's API on a real port, and the official
 * client (@x402/fetch with a viem account) paying for /v1/search and /v1/extract. Balances are read from the chain.
 */
describe('x402 end to end on a local EVM chain', () => {
  let stack: X402Stack;
  let dir: string;
  let world: ChainWorld;
  let facilitator: RunningFacilitator;
  let api: ListeningApi;
  let upstream: TestServer;

  beforeAll(async () => {
    stack = await startX402Stack('x402-e2e', { payers: 3, facilitator: 'cli' });
    ({ dir, world, facilitator } = stack);
    upstream = await startTestServer({
      '/article': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(article);
      },
    });
    api = await startListeningApi(x402ApiConfig(path.join(dir, 'api'), world, facilitator));
  });
  afterAll(async () => {
    await api?.close();
    await upstream?.close();
    await stack?.close();
  });

  const balances = (payer: Address) => chainBalances(world, payer);

  it('answers a call without credentials with 402: WWW-Authenticate x402, PAYMENT-REQUIRED and a problem holding both, priced by depth', async () => {
    const one = await challengeFor(`${api.url}/v1/search`, { query: 'vacuum', depth: 1 });
    const two = await challengeFor(`${api.url}/v1/search`, { query: 'vacuum', depth: 2 });
    for (const [c, atomic, decimal] of [
      [one, '1000', '0.001'],
      [two, '2000', '0.002'],
    ] as const) {
      expect(c.wwwAuthenticate).toContain('Bearer realm="notary"');
      expect(c.wwwAuthenticate).toMatch(new RegExp(`x402 amount=${decimal.replace('.', '\\.')}, chain="${world.chain.network}", receiver=${world.payTo}, asset=${world.token.address}, nonce=[A-Za-z0-9_.-]+, expires=\\d+`));
      expect(c.paymentRequired.x402Version).toBe(2);
      const [accept] = c.paymentRequired.accepts;
      expect(accept).toMatchObject({
        scheme: 'exact',
        network: world.chain.network,
        amount: atomic,
        asset: world.token.address,
        payTo: world.payTo,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      });
      expect(typeof accept?.extra['challenge']).toBe('string');
      expect(c.paymentRequired.resource.url).toBe(`${api.url}/v1/search`);
      expect(c.body).toMatchObject({
        code: 'payment_required',
        price: { amount: decimal },
        challenges: { x402: { amount: decimal, chain: world.chain.network, receiver: world.payTo, nonce: accept?.extra['challenge'], payment_required: { x402Version: 2 } } },
      });
    }
    // Every challenge is new.
    expect(one.paymentRequired.accepts[0]?.extra['challenge']).not.toBe((await challengeFor(`${api.url}/v1/search`, { query: 'vacuum', depth: 1 })).paymentRequired.accepts[0]?.extra['challenge']);
  });

  it('the official client pays for a search: payTo rises and the payer falls by exactly the quote, PAYMENT-RESPONSE names the transaction', async () => {
    const payer = world.payers[0];
    if (!payer) throw new Error('no payer');
    const { fetch: paidFetch } = payerClient(world, payer);
    const before = await balances(payer.address);
    const res = await paidFetch(`${api.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'vacuum tables', depth: 2 }) });
    const body = (await res.json()) as { results: unknown[]; facts: unknown[]; credits_used: number };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.credits_used).toBe(2);
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.facts).toEqual(body.results);
    const after = await balances(payer.address);
    expect(after.payTo - before.payTo).toBe(2000n);
    expect(before.payer - after.payer).toBe(2000n);
    const settlement = decodePaymentResponseHeader(res.headers.get('payment-response') ?? '');
    expect(settlement).toMatchObject({ success: true, network: world.chain.network });
    const receipt = await world.chain.client.getTransactionReceipt({ hash: settlement.transaction as Hex });
    expect(receipt.status).toBe('success');
    const transfers = (await world.token.transfers()).filter((t) => t.transactionHash === settlement.transaction);
    expect(transfers).toEqual([{ from: payer.address, to: world.payTo, value: 2000n, transactionHash: settlement.transaction }]);
  });

  it("docs/payments-x402.md's challenge command gets a 402 with the headers it shows", async () => {
    const block = docExample('x402-challenge');
    const command = commandLines(block.code).join('\n').replace('localhost:8080', api.url.replace(/^http:\/\//, ''));
    const run = await runChild('bash', ['-c', command]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^HTTP\/1\.1 402 Payment Required\r?$/m);
    for (const header of shownHeaders(block.code)) expect(run.stdout.toLowerCase()).toContain(`\n${header.toLowerCase()}:`);
    const body = JSON.parse(run.stdout.slice(run.stdout.indexOf('\r\n\r\n') + 4)) as { code: string; price: { credits: number; amount: string } };
    expect(body.code).toBe('payment_required');
    const shown = /"price":\{"credits":(\d+),"amount":"([\d.]+)"/.exec(block.code);
    expect(body.price).toMatchObject({ credits: Number(shown?.[1]), amount: shown?.[2] });
  });

  it("docs/payments-x402.md's official-client program pays for one search", async () => {
    const payer = world.payers[2];
    if (!payer) throw new Error('no payer');
    // The one change a reader makes for a token that is not one of the client's default assets (the docs say so).
    const allow = `client.setSpendControls({ allowedAssets: [{ network: '${world.chain.network}', asset: '${world.token.address}' }] });`;
    const program = docExample('x402-official-client')
      .code.replace('https://search.example', api.url)
      .replace(/^(registerExactEvmScheme\(.*\);)$/m, `$1\n${allow}`);
    expect(program).toContain(allow);
    const file = path.join(repoRoot, `test/.x402-docs-example-${process.pid}.ts`);
    writeFileSync(file, program);
    try {
      const run = await runChild(process.execPath, [path.join(repoRoot, 'node_modules/tsx/dist/cli.mjs'), file], { env: { WALLET_KEY: payer.privateKey } });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^200 /);
      const settlement = decodePaymentResponseHeader(run.stdout.trim().split(/\s+/).at(-1) ?? '');
      expect(settlement).toMatchObject({ success: true, network: world.chain.network });
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('the official client pays for an extraction at the static price', async () => {
    const payer = world.payers[1];
    if (!payer) throw new Error('no payer');
    const { fetch: paidFetch } = payerClient(world, payer);
    const before = await balances(payer.address);
    const res = await paidFetch(`${api.url}/v1/extract`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: `${upstream.origin}/article`, mode: 'text' }) });
    const body = (await res.json()) as { title: string; credits_used: number };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ title: 'Tides explained', credits_used: 1 });
    const after = await balances(payer.address);
    expect(after.payTo - before.payTo).toBe(1000n);
    expect(before.payer - after.payer).toBe(1000n);
    const settlement = decodePaymentResponseHeader(res.headers.get('payment-response') ?? '');
    expect((await world.token.transfers()).filter((t) => t.transactionHash === settlement.transaction)).toHaveLength(1);
  });

  it("the interface's flow: settle first through the facilitator, then the same request with X-402-Receipt", async () => {
    const payer = world.payers[2];
    if (!payer) throw new Error('no payer');
    const { client } = payerClient(world, payer);
    const request = { query: 'autovacuum daemon', depth: 1 };
    const challenge = await challengeFor(`${api.url}/v1/search`, request);
    const { payload } = await signPayment(client, challenge.paymentRequired);
    const before = await balances(payer.address);
    const settled = await fetch(`${facilitator.url}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: challenge.paymentRequired.accepts[0] }),
    });
    const settlement = (await settled.json()) as { success: boolean; transaction: string; extensions: Record<string, { receipt: string }> };
    expect(settlement.success, JSON.stringify(settlement)).toBe(true);
    const receiptHeader = settlement.extensions[RECEIPT_EXTENSION]?.receipt ?? '';
    const receipt = decodeReceipt(receiptHeader);
    expect(receipt).toMatchObject({
      challenge: challenge.paymentRequired.accepts[0]?.extra['challenge'],
      amount: '1000',
      pay_to: world.payTo.toLowerCase(),
      payer: payer.address.toLowerCase(),
      network: world.chain.network,
      transaction: settlement.transaction.toLowerCase(),
      iss: 'cli-facilitator',
    });
    const paid = await fetch(`${api.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-402-receipt': receiptHeader }, body: JSON.stringify(request) });
    const body = (await paid.json()) as { credits_used: number; facts: unknown[] };
    expect(paid.status, JSON.stringify(body)).toBe(200);
    expect(body.credits_used).toBe(1);
    expect(body.facts.length).toBeGreaterThan(0);
    expect(decodePaymentResponseHeader(paid.headers.get('payment-response') ?? '').transaction).toBe(settlement.transaction.toLowerCase());
    const after = await balances(payer.address);
    expect(after.payTo - before.payTo).toBe(1000n);
    expect(before.payer - after.payer).toBe(1000n);
    // Single use.
    const again = await fetch(`${api.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-402-receipt': receiptHeader }, body: JSON.stringify(request) });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe('x402_payment_used');
  });

  it('X-Notary-Sign: required adds the signed receipt to an x402 call, beside facts', async () => {
    const payer = world.payers[0];
    if (!payer) throw new Error('no payer');
    const { fetch: paidFetch } = payerClient(world, payer);
    const before = await balances(payer.address);
    const res = await paidFetch(`${api.url}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-notary-sign': 'required' },
      body: JSON.stringify({ query: 'analyze statistics', depth: 1 }),
    });
    const body = (await res.json()) as { notary_receipt: Record<string, unknown>; facts: unknown[]; results: unknown[]; credits_used: number };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.notary_receipt).toMatchObject({ claim: 'search_call_consumed', credits: 1 });
    expect(String(body.notary_receipt['signature'])).toMatch(/^ed25519:/);
    expect(body.facts).toEqual(body.results);
    expect(before.payer - (await balances(payer.address)).payer).toBe(1000n);
  });

  it('keeps the books: one ledger row per settled call, matching the chain, listed by notary payments list --mode x402 --csv', async () => {
    const rows = await api.runtime.paymentsList({ mode: 'x402' });
    // The search, the docs' program's search, the extraction, the X-402-Receipt call and the signed call.
    expect(rows).toHaveLength(5);
    const onChain = (await world.token.transfers()).filter((t) => t.to === world.payTo);
    expect(rows.map((r) => r.transaction).sort()).toEqual(onChain.map((t) => t.transactionHash.toLowerCase()).sort());
    for (const row of rows) {
      const transfer = onChain.find((t) => t.transactionHash.toLowerCase() === row.transaction);
      expect(row).toMatchObject({ mode: 'x402', asset: world.token.address.toLowerCase(), network: world.chain.network, amount: String(transfer?.value), payer: transfer?.from.toLowerCase() });
      expect(row.request_id).toMatch(/^req_/);
    }
    const csv = await runCli(['--data', path.join(dir, 'api'), 'payments', 'list', '--mode', 'x402', '--csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.trim().split('\n');
    expect(lines[0]).toBe('created_at,mode,payer,amount,asset,network,transaction,credits,request_id');
    expect(lines).toHaveLength(6);
    for (const row of rows) expect(csv.stdout).toContain(`,x402,${row.payer},${row.amount},${row.asset},${row.network},${row.transaction},${row.credits},${row.request_id}`);
  });
});
