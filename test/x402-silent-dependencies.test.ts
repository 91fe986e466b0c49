import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../core/config.js';
import { startBlackHole, type BlackHole } from './support/black-hole.js';
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

/**
 * Every wait of x402 has a limit: the facilitator's verify and settle, and the chain RPC that reconciliation reads,
 * each against a server on 127.0.0.1 that accepts the connection and never answers. Nothing is charged, and the
 * call ends within the configured bound with a problem that names what did not answer.
 */
describe('x402 with a dependency that never answers', () => {
  let stack: X402Stack;
  let dir: string;
  let world: ChainWorld;
  let facilitator: RunningFacilitator;
  let hole: BlackHole;
  /** The real facilitator for everything but POST /settle, which it holds without answering. */
  let settleHole: http.Server;
  let settleHoleUrl: string;
  const held = new Set<http.ServerResponse>();
  const apis: ListeningApi[] = [];
  const search = { query: 'vacuum', depth: 1 };

  beforeAll(async () => {
    stack = await startX402Stack('x402-silent', { payers: 4 });
    ({ dir, world, facilitator } = stack);
    hole = await startBlackHole();
    settleHole = http.createServer((req, res) => {
      if (req.url?.startsWith('/settle')) {
        held.add(res);
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        fetch(`${facilitator.url}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers: { 'content-type': 'application/json' }, ...(body ? { body } : {}) })
          .then(async (answer) => {
            res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
            res.end(Buffer.from(await answer.arrayBuffer()));
          })
          .catch(() => res.destroy());
      });
    });
    await new Promise<void>((resolve) => settleHole.listen(0, '127.0.0.1', resolve));
    const address = settleHole.address();
    settleHoleUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }, 120_000);
  afterAll(async () => {
    for (const api of apis) await api.close();
    for (const res of held) res.destroy();
    await new Promise<void>((resolve) => settleHole?.close(() => resolve()));
    await hole?.close();
    await stack?.close();
  });

  const payer = (i: number): FundedAccount => {
    const p = world.payers[i];
    if (!p) throw new Error(`no payer ${i}`);
    return p;
  };
  const api = async (name: string, x402: Record<string, unknown>): Promise<ListeningApi> => {
    const started = await startListeningApi(x402ApiConfig(path.join(dir, name), world, facilitator, { payments: { modes: { x402 } } } as ConfigInput));
    apis.push(started);
    return started;
  };
  /** One paid search with a fresh signed payment: its problem and how long it took. */
  const paidSearch = async (target: ListeningApi, p: FundedAccount): Promise<{ status: number; code: string; detail: string; ms: number }> => {
    const challenge = await challengeFor(`${target.url}/v1/search`, search);
    const { header } = await signPayment(payerClient(world, p).client, challenge.paymentRequired);
    const started = Date.now();
    const res = await fetch(`${target.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json', 'payment-signature': header }, body: JSON.stringify(search) });
    const body = (await res.json()) as { code: string; detail: string };
    return { status: res.status, code: body.code, detail: body.detail, ms: Date.now() - started };
  };
  const nothingCharged = async (target: ListeningApi, p: FundedAccount) => {
    expect((await world.token.transfers()).filter((t) => t.from === p.address)).toHaveLength(0);
    expect((await target.runtime.paymentsList({ mode: 'x402' })).filter((r) => r.payer === p.address.toLowerCase())).toHaveLength(0);
  };

  it('verify: a facilitator that never answers fails the call within verify_timeout_ms, nothing charged', async () => {
    const target = await api('verify', { facilitator_url: hole.url, verify_timeout_ms: 1000 });
    const p = payer(0);
    const before = hole.accepted();
    const answer = await paidSearch(target, p);
    expect(hole.accepted()).toBeGreaterThan(before);
    expect(answer.code, answer.detail).toBe('x402_facilitator_unavailable');
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(answer.detail).toMatch(/1000 ?ms|timed out|timeout/i);
    expect(answer.ms).toBeGreaterThanOrEqual(900);
    expect(answer.ms).toBeLessThan(1000 + 3000);
    await nothingCharged(target, p);
  });

  it('settle: a facilitator that never answers the settle leaves the payment outcome-unknown within settle_timeout_ms', async () => {
    const target = await api('settle', { facilitator_url: settleHoleUrl, settle_timeout_ms: 1500 });
    const p = payer(1);
    const answer = await paidSearch(target, p);
    expect(answer.code, answer.detail).toBe('x402_settlement_pending');
    expect(answer.ms).toBeGreaterThanOrEqual(1400);
    expect(answer.ms).toBeLessThan(1500 + 3000);
    await nothingCharged(target, p);
    const rows = await target.runtime.storage.db.selectFrom('x402_payments').selectAll().execute();
    expect(rows.map((r) => r.state)).toEqual(['unknown']);
  });

  it('chain RPC: a settle with no answer and an RPC that never answers ends within the bounds; reconcile gives up within rpc_timeout_ms and says so', async () => {
    const target = await api('rpc', { facilitator_url: settleHoleUrl, settle_timeout_ms: 1500, rpc_url: hole.url, rpc_timeout_ms: 1000 });
    const p = payer(2);
    const answer = await paidSearch(target, p);
    expect(answer.code, answer.detail).toBe('x402_settlement_pending');
    expect(answer.ms).toBeLessThan(1500 + 1000 + 3000);
    await nothingCharged(target, p);
    // A second undecided payment: reconciliation stops at the first chain read that does not answer.
    expect((await paidSearch(target, payer(3))).code).toBe('x402_settlement_pending');
    const started = Date.now();
    const summary = await target.runtime.reconcilePayments();
    expect(Date.now() - started).toBeLessThan(1000 + 2000);
    expect(summary).toMatchObject({ checked: 1, settled: 0, released: 0, pending: 1 });
    expect(summary.unreachable?.join(' ')).toMatch(/payments\.modes\.x402\.rpc_url.*did not answer within 1000 ms.*rpc_timeout_ms/);
  }, 60_000);
});
