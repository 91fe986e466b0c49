import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotaryError } from '../core/errors.js';
import { singleHeader, type PaymentMode } from '../payments/mode.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { repoRoot } from '../testkit/components.js';
import { startTestServer, type TestServer } from '../testkit/upstream-server.js';

/**
 * A payment mode that exists only in this file: `X-Dummy-Wallet: <wallet>` pays from an in-memory wallet in the
 * asset's smallest units, reserving the quoted amount at authorize, taking it at settle, giving it back at release.
 * It is registered through the composition root's extraModes, without touching any route.
 */
class DummyWallets {
  readonly balances = new Map<string, bigint>();
  readonly held = new Map<string, bigint>();
  readonly settled: Array<{ wallet: string; atomic: bigint; requestId: string }> = [];
  releases = 0;
}

function dummyMode(wallets: DummyWallets): PaymentMode {
  return {
    name: 'dummy',
    identify(request) {
      const wallet = singleHeader(request, 'x-dummy-wallet');
      if (wallet === undefined) return null;
      if (!/^w_[a-z]+$/.test(wallet)) throw new NotaryError('unauthenticated', 'X-Dummy-Wallet must look like w_name');
      return {
        mode: 'dummy',
        async authenticate() {
          if (!wallets.balances.has(wallet)) throw new NotaryError('unauthenticated', `no wallet ${wallet}`);
          return {
            mode: 'dummy',
            payerId: `dummy:${wallet}`,
            rateLimits: [{ key: `dummy:${wallet}`, tier: 'bulk' }],
            async authorize({ price }) {
              const atomic = price.amount.atomic;
              const balance = wallets.balances.get(wallet) ?? 0n;
              if (balance < atomic) {
                throw new NotaryError('insufficient_credits', `wallet ${wallet} holds ${balance}, the call costs ${atomic}`);
              }
              wallets.balances.set(wallet, balance - atomic);
              wallets.held.set(wallet, (wallets.held.get(wallet) ?? 0n) + atomic);
              const unhold = () => wallets.held.set(wallet, (wallets.held.get(wallet) ?? 0n) - atomic);
              return {
                facts: true,
                async settle({ requestId }) {
                  unhold();
                  wallets.settled.push({ wallet, atomic, requestId });
                  return { creditsUsed: price.credits, headers: { 'X-Dummy-Settlement': `${wallet}:${atomic}` } };
                },
                async release() {
                  unhold();
                  wallets.balances.set(wallet, (wallets.balances.get(wallet) ?? 0n) + atomic);
                  wallets.releases++;
                },
              };
            },
          };
        },
      };
    },
    async challenge({ price }) {
      if (!price) return null;
      return {
        status: 402,
        wwwAuthenticate: `Dummy amount=${price.amount.decimal} asset=${price.amount.asset}`,
        headers: { 'X-Dummy-Price': price.amount.atomic.toString() },
        body: { amount: price.amount.decimal, asset: price.amount.asset, header: 'X-Dummy-Wallet' },
      };
    },
  };
}

const article = `<!doctype html><html lang="en"><head><title>Tides explained</title></head><body><article><h1>Tides explained</h1>
<p>Tides are the rise and fall of sea levels caused by the combined effects of the gravitational forces exerted by the
Moon and the Sun and the rotation of the Earth. Most places see two high tides and two low tides every single day.</p>
<p>Spring tides come when the Sun and Moon line up; neap tides when they are at right angles, a week after each spring
tide, with a range smaller than the average range of the tides at that place.</p></article></body></html>`;

describe('a payment mode defined only in a test pays for search and extract', () => {
  let dir: string;
  let api: ApiHarness;
  let upstream: TestServer;
  const wallets = new DummyWallets();

  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    api.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-modes-'));
    upstream = await startTestServer({
      '/article': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(article);
      },
      '/broken': (_req, res) => {
        res.writeHead(503, { 'content-type': 'text/html' });
        res.end('<p>down</p>');
      },
    });
    const config = apiTestConfig(dir, {
      extract: { allow_private_networks: true, respect_robots_txt: false, render: 'never' },
      pricing: { credit_price: { amount: '0.001', asset: 'USDC', decimals: 6 } },
    });
    api = await startApi(config, { withExtract: true, extraModes: () => [dummyMode(wallets)] });
  });
  afterAll(async () => {
    await api?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a call without credentials with 402 and every mode challenge, priced by depth', async () => {
    const res = await post('/v1/search', { query: 'vacuum', depth: 2 });
    expect(res.statusCode, res.body).toBe(402);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toEqual([
      'Bearer realm="notary"',
      'MPP realm="notary", credits=2, max_parties=16, max_lifetime=300',
      'Dummy amount=0.002 asset=USDC',
    ]);
    expect(res.headers['x-dummy-price']).toBe('2000');
    expect(res.json()).toMatchObject({
      code: 'payment_required',
      price: { credits: 2, amount: '0.002', asset: 'USDC' },
      challenges: { dummy: { amount: '0.002', asset: 'USDC', header: 'X-Dummy-Wallet' } },
    });
    const deeper = await post('/v1/search', { query: 'vacuum', depth: 3 });
    expect(deeper.headers['www-authenticate']).toContain('Dummy amount=0.004 asset=USDC');
  });

  it('pays a search: the wallet loses exactly the quote, the response carries credits_used, facts and the settlement header', async () => {
    wallets.balances.set('w_alice', 10_000n);
    const res = await post('/v1/search', { query: 'vacuum tables', depth: 2 }, { 'x-dummy-wallet': 'w_alice' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { results: unknown[]; facts: unknown[]; credits_used: number };
    expect(body.credits_used).toBe(2);
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.facts).toEqual(body.results);
    expect(res.headers['x-dummy-settlement']).toBe('w_alice:2000');
    expect(wallets.balances.get('w_alice')).toBe(8_000n);
    expect(wallets.held.get('w_alice')).toBe(0n);
    expect(wallets.settled.at(-1)).toEqual({ wallet: 'w_alice', atomic: 2000n, requestId: res.headers['x-request-id'] });
    expect(api.search.calls.at(-1)?.requestId).toBe(res.headers['x-request-id']);
  });

  it('pays a static extraction at the static price, and releases the reservation when the extraction fails', async () => {
    wallets.balances.set('w_bob', 1_000n);
    const ok = await post('/v1/extract', { url: `${upstream.origin}/article`, mode: 'text' }, { 'x-dummy-wallet': 'w_bob' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ credits_used: 1, title: 'Tides explained' });
    expect(ok.json()).not.toHaveProperty('facts');
    expect(wallets.balances.get('w_bob')).toBe(0n);

    wallets.balances.set('w_bob', 1_000n);
    const releasesBefore = wallets.releases;
    const settledBefore = wallets.settled.length;
    const failed = await post('/v1/extract', { url: `${upstream.origin}/broken`, mode: 'text' }, { 'x-dummy-wallet': 'w_bob' });
    expect(failed.statusCode).toBe(502);
    expect(wallets.releases).toBe(releasesBefore + 1);
    expect(wallets.settled.length).toBe(settledBefore);
    expect(wallets.balances.get('w_bob')).toBe(1_000n);
  });

  it('refuses 20 concurrent calls beyond the wallet: exactly the affordable ones are served and settled', async () => {
    wallets.balances.set('w_carol', 7_000n);
    const settledBefore = wallets.settled.length;
    const responses = await Promise.all(Array.from({ length: 20 }, () => post('/v1/search', { query: 'vacuum', depth: 1 }, { 'x-dummy-wallet': 'w_carol' })));
    const ok = responses.filter((r) => r.statusCode === 200);
    expect(ok).toHaveLength(7);
    for (const r of responses.filter((x) => x.statusCode !== 200)) {
      expect(r.statusCode).toBe(402);
      expect(r.json()).toMatchObject({ code: 'insufficient_credits' });
      expect(r.headers['www-authenticate']).toEqual([
        'Bearer realm="notary"',
        'MPP realm="notary", credits=1, max_parties=16, max_lifetime=300',
        'Dummy amount=0.001 asset=USDC',
      ]);
    }
    expect(wallets.balances.get('w_carol')).toBe(0n);
    expect(wallets.settled.length - settledBefore).toBe(7);
  });

  it('replays an Idempotency-Key in this mode too, without a second settlement', async () => {
    wallets.balances.set('w_dave', 5_000n);
    const headers = { 'x-dummy-wallet': 'w_dave', 'idempotency-key': '"dave-1"' };
    const first = await post('/v1/search', { query: 'analyze', depth: 1 }, headers);
    const again = await post('/v1/search', { query: 'analyze', depth: 1 }, headers);
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(again.headers['x-dummy-settlement']).toBe('w_dave:1000');
    expect(wallets.balances.get('w_dave')).toBe(4_000n);
  });

  it('refuses credentials of two modes at once, and an unknown wallet with 401', async () => {
    const tenant = await api.runtime.accounts.createTenant('both', { credits: 10 });
    const { key } = await api.runtime.accounts.createKey(tenant.id);
    const both = await post('/v1/search', { query: 'vacuum', depth: 1 }, { authorization: `Bearer ${key}`, 'x-dummy-wallet': 'w_alice' });
    expect(both.statusCode).toBe(400);
    expect(both.json()).toMatchObject({ code: 'ambiguous_credentials', modes: ['api_key', 'dummy'] });
    const unknown = await post('/v1/search', { query: 'vacuum', depth: 1 }, { 'x-dummy-wallet': 'w_nobody' });
    expect(unknown.statusCode).toBe(401);
    expect(await api.runtime.accounts.balance(tenant.id)).toBe(10);
  });

  it('no route file names a payment mode', () => {
    const routesDir = path.join(repoRoot, 'api', 'routes');
    for (const file of readdirSync(routesDir)) {
      const source = readFileSync(path.join(routesDir, file), 'utf8');
      expect(source, file).not.toMatch(/api[_-]?key|apiKey|Bearer|x402|\bmpp\b|PaymentMode|modes\//i);
    }
  });
});
