import { createHash } from 'node:crypto';
import path from 'node:path';
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { ChallengeIssuer } from '../payments/modes/x402/challenge.js';
import { RECEIPT_EXTENSION } from '../payments/modes/x402/facilitator.js';
import { CHALLENGE_SECRET_NAME, challengeKey } from '../payments/modes/x402/index.js';
import { decodeReceipt, encodeReceipt, signReceipt } from '../payments/modes/x402/receipt.js';
import { X402PaymentsRepository } from '../payments/modes/x402/repository.js';
import { startTestServer, type TestServer } from '../testkit/upstream-server.js';
import type { FundedAccount } from '../testkit/evm-chain.js';
import {
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

interface Problem {
  code: string;
  status: number;
  payment_state?: string;
}

/**
 * The money-safety cases of x402, each against the real chain, the real facilitator and notary's API: replayed
 * payments under concurrency, a settle that times out, failed work, every kind of bad payment, and idempotent
 * replays. "Nothing settled" is always read from the chain and the ledger, not from notary's answer.
 */
describe('x402 money safety', () => {
  let stack: X402Stack;
  let dir: string;
  let world: ChainWorld;
  let facilitator: RunningFacilitator;
  let api: ListeningApi;
  let upstream: TestServer;
  let flakyCalls = 0;

  beforeAll(async () => {
    stack = await startX402Stack('x402-safety', { payers: 8 });
    ({ dir, world, facilitator } = stack);
    upstream = await startTestServer({
      '/article': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><html><head><title>Tides</title></head><body><article><h1>Tides</h1><p>' + 'Tides are the rise and fall of sea levels. '.repeat(20) + '</p></article></body></html>');
      },
      '/broken': (_req, res) => {
        res.writeHead(503, { 'content-type': 'text/html' });
        res.end('<p>down</p>');
      },
      // Fails the first call, then works: a failed call must leave the payment usable for the retry.
      '/flaky': (_req, res) => {
        flakyCalls++;
        if (flakyCalls === 1) {
          res.writeHead(503, { 'content-type': 'text/html' });
          res.end('<p>down</p>');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><html><head><title>Back</title></head><body><article><h1>Back</h1><p>' + 'The page is back up and readable again. '.repeat(20) + '</p></article></body></html>');
      },
    });
    api = await startListeningApi(x402ApiConfig(path.join(dir, 'api'), world, facilitator));
  });
  afterAll(async () => {
    await api?.close();
    await upstream?.close();
    await stack?.close();
  });

  const payer = (i: number): FundedAccount => {
    const p = world.payers[i];
    if (!p) throw new Error(`no payer ${i}`);
    return p;
  };
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const transfersFrom = async (from: Address) => (await world.token.transfers()).filter((t) => t.from === from);
  const ledger = (target: ListeningApi = api) => target.runtime.paymentsList({ mode: 'x402' });
  const paymentRows = (target: ListeningApi = api) => target.runtime.storage.db.selectFrom('x402_payments').selectAll().execute();
  const settleThroughFacilitator = async (paymentPayload: unknown, requirements: unknown) => {
    const res = await post(`${facilitator.url}/settle`, { x402Version: 2, paymentPayload, paymentRequirements: requirements });
    return (await res.json()) as { success: boolean; transaction: string; extensions?: Record<string, { receipt: string }> };
  };

  it('the same PAYMENT-SIGNATURE sent by 20 concurrent requests: one served and settled, 19 refused with x402_payment_used', async () => {
    const p = payer(0);
    const { client } = payerClient(world, p);
    const request = { query: 'vacuum', depth: 1 };
    const challenge = await challengeFor(`${api.url}/v1/search`, request);
    const { header } = await signPayment(client, challenge.paymentRequired);
    const before = await world.token.balanceOf(world.payTo);
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(`${api.url}/v1/search`, request, { 'payment-signature': header })));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of responses.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(409);
      expect(((await r.json()) as Problem).code).toBe('x402_payment_used');
    }
    expect(await transfersFrom(p.address)).toHaveLength(1);
    expect((await world.token.balanceOf(world.payTo)) - before).toBe(1000n);
    expect((await ledger()).filter((r) => r.payer === p.address.toLowerCase())).toHaveLength(1);
    // Once settled it stays used.
    const late = await post(`${api.url}/v1/search`, request, { 'payment-signature': header });
    expect(late.status).toBe(409);
    expect((await late.json()) as Problem).toMatchObject({ code: 'x402_payment_used', payment_state: 'settled' });
  });

  it('the same X-402-Receipt sent by 20 concurrent requests: one served, 19 refused with x402_payment_used', async () => {
    const p = payer(1);
    const { client } = payerClient(world, p);
    const request = { query: 'analyze statistics', depth: 1 };
    const challenge = await challengeFor(`${api.url}/v1/search`, request);
    const { payload } = await signPayment(client, challenge.paymentRequired);
    const settled = await settleThroughFacilitator(payload, challenge.paymentRequired.accepts[0]);
    expect(settled.success).toBe(true);
    const receipt = settled.extensions?.[RECEIPT_EXTENSION]?.receipt ?? '';
    const ledgerBefore = (await ledger()).length;
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(`${api.url}/v1/search`, request, { 'x-402-receipt': receipt })));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of responses.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(409);
      expect(((await r.json()) as Problem).code).toBe('x402_payment_used');
    }
    expect((await ledger()).length - ledgerBefore).toBe(1);
    expect(await transfersFrom(p.address)).toHaveLength(1);
  });

  describe('a settle that times out', () => {
    let slow: ListeningApi;
    beforeAll(async () => {
      slow = await startListeningApi(x402ApiConfig(path.join(dir, 'slow'), world, facilitator, { payments: { modes: { x402: { settle_timeout_ms: 1500 } } } }));
    });
    afterAll(async () => {
      await world.chain.setAutomine(true);
      await slow?.close();
    });

    /** The facilitator's transactions waiting to be mined, once it has broadcast `count` of them (bounded wait). */
    async function pendingTransactions(count = 1): Promise<Hex[]> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const block = await world.chain.rpc<{ transactions: Hex[] }>('eth_getBlockByNumber', ['pending', false]);
        if (block.transactions.length >= count) return block.transactions;
        if (Date.now() > deadline) throw new Error('the facilitator broadcast no transaction');
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    /** Sends a paid call while blocks are not mined: the facilitator broadcasts and waits, notary's settle times out. */
    async function timedOutCall(p: FundedAccount, request: unknown, tamper?: Parameters<typeof signPayment>[2]): Promise<{ header: string; response: Response }> {
      const { client } = payerClient(world, p);
      const challenge = await challengeFor(`${slow.url}/v1/search`, request);
      const { header } = await signPayment(client, challenge.paymentRequired, tamper);
      await world.chain.setAutomine(false);
      const response = await post(`${slow.url}/v1/search`, request, { 'payment-signature': header });
      return { header, response };
    }

    it('is recorded as outcome-unknown and answered 503 x402_settlement_pending, never a 402 asking to pay again', async () => {
      const p = payer(2);
      const request = { query: 'vacuum dead tuples', depth: 1 };
      const { header, response } = await timedOutCall(p, request);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(response.headers.get('payment-required')).toBeNull();
      expect((await response.json()) as Problem).toMatchObject({ code: 'x402_settlement_pending', payment_state: 'unknown' });
      expect((await paymentRows(slow)).map((r) => r.state)).toEqual(['unknown']);
      expect(await ledger(slow)).toHaveLength(0);

      // The transaction lands; the payer retries with the same payment: served once, charged once.
      await pendingTransactions();
      await world.chain.mine();
      await world.chain.setAutomine(true);
      const retry = await post(`${slow.url}/v1/search`, request, { 'payment-signature': header });
      expect(retry.status, await retry.clone().text()).toBe(200);
      const settlement = decodePaymentResponseHeader(retry.headers.get('payment-response') ?? '');
      const transfers = await transfersFrom(p.address);
      expect(transfers).toHaveLength(1);
      expect(settlement.transaction).toBe(transfers[0]?.transactionHash.toLowerCase());
      expect(await ledger(slow)).toHaveLength(1);
      const third = await post(`${slow.url}/v1/search`, request, { 'payment-signature': header });
      expect(third.status).toBe(409);
      expect(await transfersFrom(p.address)).toHaveLength(1);
    });

    it('is reconciled in the background when the payer does not come back, and its one response is still served on a retry', async () => {
      const p = payer(3);
      const request = { query: 'autovacuum', depth: 1 };
      const { header, response } = await timedOutCall(p, request);
      expect(response.status).toBe(503);
      await pendingTransactions();
      await world.chain.mine();
      await world.chain.setAutomine(true);
      expect(await slow.runtime.reconcilePayments()).toMatchObject({ checked: 1, settled: 1, released: 0, pending: 0 });
      const books = (await ledger(slow)).filter((r) => r.payer === p.address.toLowerCase());
      expect(books).toHaveLength(1);
      expect(books[0]?.transaction).toBe((await transfersFrom(p.address))[0]?.transactionHash.toLowerCase());
      const retry = await post(`${slow.url}/v1/search`, request, { 'payment-signature': header });
      expect(retry.status).toBe(200);
      expect((await ledger(slow)).filter((r) => r.payer === p.address.toLowerCase())).toHaveLength(1);
      expect(await transfersFrom(p.address)).toHaveLength(1);
      expect((await post(`${slow.url}/v1/search`, request, { 'payment-signature': header })).status).toBe(409);
    });

    it('is released, never charged, when its transaction never lands and the authorization expires', async () => {
      const p = payer(4);
      const request = { query: 'indexes performance', depth: 1 };
      const before = await world.token.balanceOf(p.address);
      // A short authorization (30 s), so that moving the chain's clock past it stays within the others' validity.
      const { header, response } = await timedOutCall(p, request, (a) => (a.maxTimeoutSeconds = 30));
      expect(response.status).toBe(503);
      for (const tx of await pendingTransactions()) expect(await world.chain.rpc<boolean>('hardhat_dropTransaction', [tx])).toBe(true);
      await world.chain.setAutomine(true);
      await world.chain.increaseTime(40);
      await world.chain.mine();
      expect(await slow.runtime.reconcilePayments()).toMatchObject({ released: 1 });
      expect(await paymentRows(slow)).toHaveLength(2); // the two settled payments of the tests above
      expect(await world.token.balanceOf(p.address)).toBe(before);
      expect(await transfersFrom(p.address)).toHaveLength(0);
      // Now the outcome is known (nothing charged, the authorization is dead on chain): paying again is the answer.
      const retry = await post(`${slow.url}/v1/search`, request, { 'payment-signature': header });
      expect(retry.status).toBe(402);
      expect(retry.headers.get('payment-required')).not.toBeNull();
      expect(await world.token.balanceOf(p.address)).toBe(before);
    });
  });

  it('settles nothing when the work fails, and leaves the payment usable: a receipt retried after a failed call is served once', async () => {
    const p = payer(5);
    const { client } = payerClient(world, p);
    const broken = { url: `${upstream.origin}/broken`, mode: 'text' };
    const challenge = await challengeFor(`${api.url}/v1/extract`, broken);
    const { header } = await signPayment(client, challenge.paymentRequired);
    const rowsBefore = (await paymentRows()).length;
    const failed = await post(`${api.url}/v1/extract`, broken, { 'payment-signature': header });
    expect(failed.status).toBe(502);
    expect(await transfersFrom(p.address)).toHaveLength(0);
    expect((await paymentRows()).length).toBe(rowsBefore);

    const flaky = { url: `${upstream.origin}/flaky`, mode: 'text' };
    const flakyChallenge = await challengeFor(`${api.url}/v1/extract`, flaky);
    const { payload } = await signPayment(client, flakyChallenge.paymentRequired);
    const settled = await settleThroughFacilitator(payload, flakyChallenge.paymentRequired.accepts[0]);
    const receipt = settled.extensions?.[RECEIPT_EXTENSION]?.receipt ?? '';
    const ledgerBefore = (await ledger()).length;
    const first = await post(`${api.url}/v1/extract`, flaky, { 'x-402-receipt': receipt });
    expect(first.status).toBe(502);
    expect((await ledger()).length).toBe(ledgerBefore);
    const second = await post(`${api.url}/v1/extract`, flaky, { 'x-402-receipt': receipt });
    expect(second.status, await second.clone().text()).toBe(200);
    expect((await ledger()).length).toBe(ledgerBefore + 1);
    expect(await transfersFrom(p.address)).toHaveLength(1);
  });

  it('refuses every kind of bad payment with its own code, and settles nothing', async () => {
    const p = payer(6);
    const other = payer(7);
    const { client } = payerClient(world, p);
    const { client: otherClient } = payerClient(world, other);
    // A client without spend controls signs whatever it is asked to (the tampered requirements below).
    const { client: loose } = payerClient(world, p);
    loose.setSpendControls(false);
    const request = { query: 'vacuum', depth: 1 };
    const url = `${api.url}/v1/search`;
    const payToBefore = await world.token.balanceOf(world.payTo);
    const ledgerBefore = (await ledger()).length;
    const fresh = async () => (await challengeFor(url, request)).paymentRequired;
    const expectRefusal = async (headers: Record<string, string>, status: number, code: string, body: unknown = request) => {
      const res = await post(url, body, headers);
      const problem = (await res.json()) as Problem;
      expect({ status: res.status, code: problem.code }, JSON.stringify(problem)).toEqual({ status, code });
      // A 402 carries fresh challenges, so the client can pay correctly.
      if (status === 402) expect(res.headers.get('payment-required')).not.toBeNull();
    };
    const secret = await new X402PaymentsRepository(api.runtime.storage.db).secret(CHALLENGE_SECRET_NAME, () => 'unused');
    const expiredChallenge = (accept: { extra: Record<string, unknown> }, body: unknown) => {
      const issuer = new ChallengeIssuer(challengeKey(secret), 300);
      accept.extra['challenge'] = issuer.issue(
        {
          method: 'POST',
          path: '/v1/search',
          bodyDigest: createHash('sha256').update(JSON.stringify(body)).digest('hex'),
          amount: '1000',
          network: world.chain.network,
          asset: world.token.address,
          payTo: world.payTo,
        },
        Date.now() - 3_600_000,
      ).nonce;
    };

    const sign = async (tamper: Parameters<typeof signPayment>[2] = () => {}) => (await signPayment(loose, await fresh(), tamper)).header;
    await expectRefusal({ 'payment-signature': await sign((a) => (a.amount = '999')) }, 402, 'x402_amount_too_low');
    await expectRefusal({ 'payment-signature': await sign((a) => (a.amount = '1001')) }, 402, 'x402_amount_mismatch');
    await expectRefusal({ 'payment-signature': await sign((a) => (a.payTo = other.address)) }, 402, 'x402_wrong_pay_to');
    await expectRefusal({ 'payment-signature': await sign((a) => (a.network = 'eip155:1')) }, 402, 'x402_wrong_network');
    await expectRefusal({ 'payment-signature': await sign((a) => (a.asset = other.address)) }, 402, 'x402_wrong_asset');
    await expectRefusal({ 'payment-signature': await sign((a) => delete a.extra['challenge']) }, 402, 'x402_challenge_missing');
    await expectRefusal({ 'payment-signature': await sign((a) => expiredChallenge(a, request)) }, 402, 'x402_challenge_expired');
    await expectRefusal({ 'payment-signature': await sign((a) => (a.maxTimeoutSeconds = 2)) }, 402, 'x402_authorization_expired');
    // A challenge answers the request it was issued for, not another one.
    await expectRefusal({ 'payment-signature': await sign() }, 402, 'x402_challenge_invalid', { query: 'analyze', depth: 1 });

    // Forged: the signature altered, or a signature of one payer claiming to be another.
    const good = await signPayment(client, await fresh());
    const sig = (good.payload.payload as { signature: string }).signature;
    const flipped = structuredClone(good.payload);
    (flipped.payload as { signature: string }).signature = `${sig.slice(0, 10)}${sig[10] === 'a' ? 'b' : 'a'}${sig.slice(11)}`;
    await expectRefusal({ 'payment-signature': encodePaymentSignatureHeader(flipped) }, 402, 'x402_invalid_signature');
    const impostor = structuredClone(good.payload);
    (impostor.payload as { authorization: { from: string } }).authorization.from = other.address;
    await expectRefusal({ 'payment-signature': encodePaymentSignatureHeader(impostor) }, 402, 'x402_invalid_signature');

    // Reused: a settled authorization, and a new authorization answering a challenge that was already paid.
    const paidChallenge = await fresh();
    const paid = await signPayment(client, paidChallenge);
    expect((await post(url, request, { 'payment-signature': paid.header })).status).toBe(200);
    await expectRefusal({ 'payment-signature': paid.header }, 409, 'x402_payment_used');
    await expectRefusal({ 'payment-signature': (await signPayment(otherClient, paidChallenge)).header }, 402, 'x402_challenge_used');

    // Malformed headers are 400s before any work.
    await expectRefusal({ 'payment-signature': '%%% not base64 %%%' }, 400, 'x402_malformed_payment');
    await expectRefusal({ 'payment-signature': Buffer.from('{"x402Version":2,').toString('base64') }, 400, 'x402_malformed_payment');
    await expectRefusal({ 'payment-signature': Buffer.from('{"x402Version":2,"accepted":{}}').toString('base64') }, 400, 'x402_malformed_payment');
    await expectRefusal({ 'payment-signature': Buffer.from('{"x402Version":1,"scheme":"exact"}').toString('base64') }, 400, 'x402_unsupported');
    await expectRefusal({ 'x-payment': 'e30=' }, 400, 'x402_unsupported');
    await expectRefusal({ 'payment-signature': paid.header, 'x-402-receipt': 'abc' }, 400, 'ambiguous_credentials');

    // Receipts: malformed, forged (a key the operator does not trust), for another request.
    await expectRefusal({ 'x-402-receipt': 'not a receipt!' }, 400, 'x402_malformed_receipt');
    await expectRefusal({ 'x-402-receipt': Buffer.from('{"v":1}').toString('base64url') }, 400, 'x402_malformed_receipt');
    const receiptChallenge = await fresh();
    const settled = await settleThroughFacilitator((await signPayment(client, receiptChallenge)).payload, receiptChallenge.accepts[0]);
    const genuine = decodeReceipt(settled.extensions?.[RECEIPT_EXTENSION]?.receipt ?? '');
    const { signature: _drop, kid: _kid, v: _v, typ: _typ, ...claims } = genuine;
    const forged = signReceipt(claims, new Uint8Array(32).fill(9));
    await expectRefusal({ 'x-402-receipt': encodeReceipt(forged) }, 402, 'x402_untrusted_receipt');
    const tampered = { ...genuine, amount: '5000' };
    await expectRefusal({ 'x-402-receipt': encodeReceipt(tampered) }, 402, 'x402_untrusted_receipt');
    await expectRefusal({ 'x-402-receipt': encodeReceipt(genuine) }, 402, 'x402_challenge_invalid', { query: 'analyze', depth: 1 });

    // Nothing of the above was charged except the one good call and the receipt settled through the facilitator.
    expect((await world.token.balanceOf(world.payTo)) - payToBefore).toBe(2000n);
    expect((await ledger()).length - ledgerBefore).toBe(1);
    expect(await transfersFrom(p.address)).toHaveLength(2);
    expect(await transfersFrom(other.address)).toHaveLength(0);
  });

  it('replays an Idempotency-Key, and the payment-identifier extension, without a second settlement', async () => {
    const p = payer(6);
    const { fetch: paidFetch, client } = payerClient(world, p);
    const transfersBefore = (await transfersFrom(p.address)).length;
    const body = JSON.stringify({ query: 'query planner statistics', depth: 1 });
    const call = (headers: Record<string, string> = {}) => paidFetch(`${api.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const first = await call({ 'idempotency-key': '"order-1"' });
    const second = await call({ 'idempotency-key': '"order-1"' });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(await second.text()).toBe(await first.text());
    expect((await transfersFrom(p.address)).length - transfersBefore).toBe(1);

    // x402's payment-identifier: the client names the payment; a retry with the same id replays.
    const paymentId = generatePaymentId('order_');
    client.onBeforePaymentCreation(async ({ paymentRequired }) => {
      if (paymentRequired.extensions) appendPaymentIdentifierToExtensions(paymentRequired.extensions, paymentId);
    });
    const a = await call();
    const b = await call();
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get('idempotency-replayed')).toBe('true');
    expect(await b.text()).toBe(await a.text());
    expect((await transfersFrom(p.address)).length - transfersBefore).toBe(2);
    // The same id for another request is refused, and nothing is charged for it.
    const other = await paidFetch(`${api.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'other', depth: 1 }) });
    expect(other.status).toBe(422);
    expect(((await other.json()) as Problem).code).toBe('idempotency_key_reused');
    expect((await transfersFrom(p.address)).length - transfersBefore).toBe(2);
  });

  it('limits each payer address by its tier', async () => {
    const tight = await startListeningApi(x402ApiConfig(path.join(dir, 'tight'), world, facilitator, {
      tiers: { strict: { requests_per_minute: 1, burst: 2 } },
      payments: { modes: { x402: { tier: 'strict' } } },
    }));
    try {
      const p = payer(7);
      const { fetch: paidFetch } = payerClient(world, p);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await paidFetch(`${tight.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `vacuum ${i}`, depth: 1 }) });
        statuses.push(res.status);
        if (res.status === 429) expect(((await res.json()) as Problem).code).toBe('rate_limited');
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(await transfersFrom(p.address)).toHaveLength(2);
    } finally {
      await tight.close();
    }
  });
});
