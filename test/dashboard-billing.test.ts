import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../api/app.js';
import { configSchema } from '../core/config.js';
import { parseApiKey } from '../payments/api-keys.js';
import { buildEnvelope } from '../payments/modes/mpp/index.js';
import { publicKeyFromSeed } from '../payments/crypto/ed25519.js';
import { toBase64Url } from '../payments/crypto/encoding.js';
import { Runtime, silentLog } from '../runtime/index.js';
import type { SearchRequest, SearchResponse, SearchService } from '../search/service.js';
import { apiIndexDocs, apiTestConfig } from '../testkit/app.js';
import { startDashboard, type DashboardClient, type DashboardHarness } from './support/dashboard.js';

async function balance(client: DashboardClient): Promise<number> {
  return ((await client.get('tenant')).body['tenant'] as { credits: number }).credits;
}

async function createKey(client: DashboardClient, body: object = {}): Promise<{ key: string; id: string }> {
  const answer = await client.post('keys', { name: 'k', ...body });
  if (answer.status !== 201) throw new Error(`key creation failed: ${answer.text}`);
  return { key: answer.body['key'] as string, id: (answer.body['record'] as { id: string }).id };
}

async function tenantId(h: DashboardHarness, client: DashboardClient): Promise<string> {
  return ((await client.get('tenant')).body['tenant'] as { id: string }).id;
}

describe('test keys, scopes, features, tiers and live prices', () => {
  let h: DashboardHarness;
  let operator: DashboardClient;

  beforeAll(async () => {
    h = await startDashboard();
    operator = await h.operator();
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('test keys (sk_test_)', () => {
    it('call the same API, consume no credits, mark the response as test, and show in usage apart from live calls', async () => {
      const member = await h.member('tester@example.org');
      const { key } = await createKey(member, { environment: 'test' });
      expect(key).toMatch(/^sk_test_[0-9A-Za-z]{38}$/);
      expect(parseApiKey(key).environment).toBe('test');
      const ledgerBefore = (await member.get('ledger')).body['entries'];
      const answer = await h.call(key, { query: 'vacuum', depth: 2 });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ test: true, credits_used: 0, query: 'vacuum', depth: 2 });
      expect((answer.body['results'] as unknown[]).length).toBeGreaterThan(0);
      expect(answer.headers.get('notary-test-mode')).toBe('true');
      expect(answer.headers.get('ratelimit-policy')).toMatch(/^"free";/);
      expect(await balance(member)).toBe(100);
      expect((await member.get('ledger')).body['entries']).toEqual(ledgerBefore);
      const usage = (await member.get('usage?by=environment')).body as { series: Array<{ key: string; calls: number[]; credits: number[] }> };
      expect(usage.series.map((s) => [s.key, s.calls.reduce((a, b) => a + b), s.credits.reduce((a, b) => a + b)])).toEqual([['test', 1, 0]]);
      // A live key of the same tenant is charged, and its response carries no test marker.
      const live = await createKey(member);
      const charged = await h.call(live.key, { query: 'vacuum', depth: 2 });
      expect(charged.body['credits_used']).toBe(2);
      expect(charged.body['test']).toBeUndefined();
      expect(charged.headers.get('notary-test-mode')).toBeNull();
      expect(await balance(member)).toBe(98);
    });

    it('keep the checksum scheme: a mistyped test key is refused before any lookup, and the prefix tells live from test', async () => {
      const member = await h.member('checksum@example.org');
      const { key } = await createKey(member, { environment: 'test' });
      const typo = `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;
      const refused = await h.call(typo);
      expect(refused.status).toBe(401);
      expect(refused.body['detail']).toContain('checksum');
      // The same secret under the live prefix is another key, unknown here.
      const swapped = await h.call(key.replace('sk_test_', 'sk_live_'));
      expect(swapped.status).toBe(401);
      expect(swapped.body['code']).toBe('invalid_api_key');
    });

    it('are refused for what the tenant has not enabled, exactly like its live keys', async () => {
      const member = await h.member('narrow@example.org');
      const id = await tenantId(h, member);
      const test = await createKey(member, { environment: 'test' });
      const live = await createKey(member);
      expect((await operator.request('PATCH', `operator/tenants/${id}`, { body: { features: ['search', 'test_keys'] } })).status).toBe(200);
      for (const key of [test.key, live.key]) {
        const deep = await h.call(key, { query: 'vacuum', depth: 2 });
        expect(deep.status).toBe(403);
        expect(deep.body).toMatchObject({ code: 'feature_not_enabled', feature: 'search_reflection' });
        const extract = await fetch(`${h.url}/v1/extract`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: 'https://example.org/' }),
        });
        expect(extract.status).toBe(403);
        expect(((await extract.json()) as { feature: string }).feature).toBe('extract');
        expect((await h.call(key, { query: 'vacuum', depth: 1 })).status).toBe(200);
      }
      expect(await balance(member)).toBe(99);
      // Without the test_keys feature the test key itself is refused, and no new one can be made.
      await operator.request('PATCH', `operator/tenants/${id}`, { body: { features: ['search'] } });
      const off = await h.call(test.key);
      expect(off.status).toBe(403);
      expect(off.body).toMatchObject({ code: 'feature_not_enabled', feature: 'test_keys' });
      expect((await member.post('keys', { name: 'again', environment: 'test' })).body['code']).toBe('feature_not_enabled');
      // Back to the tier's features.
      await operator.request('PATCH', `operator/tenants/${id}`, { body: { features: null } });
      expect((await h.call(test.key, { query: 'vacuum', depth: 2 })).status).toBe(200);
    });
  });

  describe('keys', () => {
    it('scopes limit what a key may call; expired keys and suspended tenants are refused; nothing of that is charged', async () => {
      const member = await h.member('scoped@example.org');
      const extractOnly = await createKey(member, { scopes: ['extract'] });
      const scoped = await h.call(extractOnly.key);
      expect(scoped.status).toBe(403);
      expect(scoped.body).toMatchObject({ code: 'insufficient_scope', required_scope: 'search' });

      const expiring = await createKey(member, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
      expect((await h.call(expiring.key)).status).toBe(200);
      await h.runtime.storage.db.updateTable('api_keys').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', expiring.id).execute();
      const expired = await h.call(expiring.key);
      expect(expired.status).toBe(401);
      expect(expired.body['code']).toBe('expired_api_key');
      expect(expired.headers.get('www-authenticate')).toContain('invalid_token');
      expect((await member.post('keys', { name: 'past', expires_at: '2001-01-01' })).status).toBe(400);

      const id = await tenantId(h, member);
      const live = await createKey(member);
      await operator.request('PATCH', `operator/tenants/${id}`, { body: { suspended: true } });
      const suspended = await h.call(live.key);
      expect(suspended.status).toBe(403);
      expect(suspended.body['code']).toBe('tenant_suspended');
      expect((await member.get('tenant')).body['tenant']).toMatchObject({ suspended: true });
      expect((await member.post('keys', { name: 'while suspended' })).body['code']).toBe('tenant_suspended');
      await operator.request('PATCH', `operator/tenants/${id}`, { body: { suspended: false } });
      expect((await h.call(live.key)).status).toBe(200);
      expect(await balance(member)).toBe(98);
    });
  });

  describe('tiers', () => {
    it('a tier applies to keys through the rate-limit store and shows alike in rate_limit, the RateLimit headers and the dashboard', async () => {
      const member = await h.member('tiered@example.org');
      const id = await tenantId(h, member);
      const { key } = await createKey(member);
      const free = await h.call(key);
      expect(free.body['rate_limit']).toMatchObject({ limit: 10 });
      expect(free.headers.get('ratelimit-policy')).toBe('"free";q=10;w=10');
      expect((await member.get('tenant')).body['tier']).toMatchObject({ name: 'free', burst: 10, rate_limit_policy: '"free";q=10;w=10' });

      expect((await operator.request('PATCH', `operator/tenants/${id}`, { body: { tier: 'tiny' } })).status).toBe(200);
      const tiny = await h.call(key);
      expect(tiny.body['rate_limit']).toMatchObject({ limit: 2 });
      expect(tiny.headers.get('ratelimit-policy')).toBe('"tiny";q=2;w=2');
      expect((await member.get('tenant')).body['tier']).toMatchObject({ name: 'tiny', burst: 2, rate_limit_policy: '"tiny";q=2;w=2' });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await h.call(key)).status);
      expect(statuses).toContain(429);
      expect((await operator.request('PATCH', `operator/tenants/${id}`, { body: { tier: 'gold' } })).status).toBe(400);
    });

    it("an operator's edit of a tier's limits applies to the next call without a restart, and is validated", async () => {
      const member = await h.member('limits@example.org');
      const { key } = await createKey(member);
      const tiers = (await operator.get('operator/tiers')).body['tiers'] as Record<string, Record<string, unknown>>;
      const edited: Record<string, Record<string, unknown>> = Object.fromEntries(
        Object.entries(tiers).map(([name, t]) => [name, { requests_per_minute: t['requests_per_minute'], burst: t['burst'], monthly_credits: t['monthly_credits'], features: t['features'] }]),
      );
      edited['free'] = { ...edited['free'], requests_per_minute: 600, burst: 25 };
      expect((await operator.request('PUT', 'operator/tiers', { body: { tiers: edited } })).status).toBe(200);
      const after = await h.call(key);
      expect(after.body['rate_limit']).toMatchObject({ limit: 25 });
      expect(after.headers.get('ratelimit-policy')).toBe('"free";q=25;w=3');
      const withoutDefault = { ...edited };
      delete withoutDefault['free'];
      const refused = await operator.request('PUT', 'operator/tiers', { body: { tiers: withoutDefault } });
      expect(refused.status).toBe(400);
      expect(refused.body['code']).toBe('invalid_settings');
      expect((await operator.request('PUT', 'operator/tiers', { body: { tiers: { ...edited, 'Bad Name': edited['free'] } } })).body['code']).toBe('invalid_settings');
      expect((await operator.request('PUT', 'operator/tiers', { body: { tiers: { ...edited, free: { requests_per_minute: -1, burst: 1 } } } })).body['code']).toBe('invalid_settings');
      expect((await operator.request('DELETE', 'operator/tiers')).body['origin']).toMatchObject({ source: 'config' });
      expect((await h.call(key)).body['rate_limit']).toMatchObject({ limit: 10 });
    });

    it("grants a tier's monthly credits once per calendar month, however many calls race for it", async () => {
      const member = await h.member('monthly@example.org');
      const id = await tenantId(h, member);
      const tiers = (await operator.get('operator/tiers')).body['tiers'] as Record<string, Record<string, unknown>>;
      const edited: Record<string, Record<string, unknown>> = Object.fromEntries(
        Object.entries(tiers).map(([name, t]) => [name, { requests_per_minute: t['requests_per_minute'], burst: t['burst'], monthly_credits: 0, features: t['features'] }]),
      );
      edited['bulk'] = { ...edited['bulk'], monthly_credits: 500 };
      await operator.request('PUT', 'operator/tiers', { body: { tiers: edited } });
      await operator.request('PATCH', `operator/tenants/${id}`, { body: { tier: 'bulk' } });
      const { key } = await createKey(member);
      const answers = await Promise.all(Array.from({ length: 10 }, () => h.call(key)));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(await balance(member)).toBe(100 + 500 - 10);
      const grants = ((await member.get('ledger?kind=credit')).body['entries'] as Array<{ reason: string; delta: number }>).filter((e) => e.reason.startsWith('monthly grant'));
      expect(grants.map((g) => g.delta)).toEqual([500]);
      await operator.request('DELETE', 'operator/tiers');
    });
  });

  describe('prices', () => {
    it("an operator's price change applies to the next search; invalid prices are refused; reset goes back to the config", async () => {
      const member = await h.member('prices@example.org');
      const { key } = await createKey(member);
      expect((await h.call(key)).body['credits_used']).toBe(1);
      const current = (await operator.get('operator/pricing')).body['pricing'] as Record<string, unknown>;
      const raised = { ...current, search: { credits_by_depth: [5, 7, 9] } };
      const saved = await operator.request('PUT', 'operator/pricing', { body: raised });
      expect(saved.status).toBe(200);
      expect(saved.body['origin']).toMatchObject({ source: 'operator', updated_by: 'operator@notary.test' });
      expect((await h.call(key)).body['credits_used']).toBe(5);
      expect((await h.call(key, { query: 'vacuum', depth: 2 })).body['credits_used']).toBe(7);
      expect((await member.get('tenant')).body['prices']).toContainEqual({ call: 'search depth 1', credits: 5, amount: '0.005 USDC' });
      for (const bad of [
        { ...current, search: { credits_by_depth: [-1] } },
        { ...current, search: { credits_by_depth: [] } },
        { ...current, credit_price: { amount: '0.0000001', asset: 'USDC', decimals: 6 } },
        { ...current, credit_price: { amount: 'one', asset: 'USDC', decimals: 6 } },
      ]) {
        const refused = await operator.request('PUT', 'operator/pricing', { body: bad });
        expect(refused.status).toBe(400);
        expect(refused.body['code']).toBe('invalid_settings');
      }
      expect((await h.call(key)).body['credits_used']).toBe(5);
      await operator.request('DELETE', 'operator/pricing');
      expect((await h.call(key)).body['credits_used']).toBe(1);
      expect(await balance(member)).toBe(100 - 1 - 5 - 7 - 5 - 1);
      // Revenue counts the live calls by payment mode.
      const revenue = (await operator.get('operator/revenue')).body['modes'] as Array<{ mode: string; total_credits: number; total_amount: string }>;
      expect(revenue.find((r) => r.mode === 'api_key')?.total_credits).toBeGreaterThanOrEqual(19);
      // Money settled by a pay-per-call mode comes from the payments ledger, exact to the smallest unit.
      for (const amount of ['1000', '2000', '1']) {
        await h.runtime.storage.db
          .insertInto('payment_ledger')
          .values({ mode: 'x402', payer: '0xabc', amount, asset: 'USDC', network: 'eip155:8453', pay_to: '0xdef', transaction_hash: `0x${amount}`, credits: 1, request_id: `req_${amount}`, reference: `pay_${amount}`, created_at: new Date().toISOString() })
          .execute();
      }
      const settled = (await operator.get('operator/revenue')).body['settled'] as Array<{ mode: string; total_calls: number; total_amount: string }>;
      expect(settled).toContainEqual(expect.objectContaining({ mode: 'x402', total_calls: 3, total_amount: '0.003001' }));
    });
  });

  describe('MPP party keys registered on the dashboard', () => {
    it('pay MPP calls; revoked on the page, the next envelope is refused; a suspended party is refused', async () => {
      const member = await h.member('parties@example.org', 'party-org');
      const seed = new Uint8Array(randomBytes(32));
      const registered = await member.post('party-keys', { public_key: toBase64Url(publicKeyFromSeed(seed)), name: 'agent' });
      expect(registered.status).toBe(201);
      const kid = (registered.body['key'] as { kid: string }).kid;
      const body = JSON.stringify({ query: 'vacuum', depth: 1 });
      const pay = async () => {
        const { encoded } = buildEnvelope({ method: 'POST', url: `${h.url}/v1/search`, body, totalCredits: 5, parties: [{ party: 'party-org', share: '1', seed }] });
        const res = await fetch(`${h.url}/v1/search`, { method: 'POST', headers: { authorization: `MPP envelope=${encoded}`, 'content-type': 'application/json' }, body });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const before = await balance(member);
      const paid = await pay();
      expect(paid.status).toBe(200);
      expect(paid.body['receipts']).toEqual([expect.objectContaining({ party: 'party-org', credits: 1 })]);
      expect(await balance(member)).toBe(before - 1);

      expect((await member.post(`party-keys/${kid}/revoke`)).status).toBe(200);
      const revoked = await pay();
      expect([revoked.status, revoked.body['code']]).toEqual([401, 'mpp_key_revoked']);

      const second = new Uint8Array(randomBytes(32));
      expect((await member.post('party-keys', { public_key: toBase64Url(publicKeyFromSeed(second)) })).status).toBe(201);
      await operator.request('PATCH', `operator/tenants/${await tenantId(h, member)}`, { body: { suspended: true } });
      const { encoded } = buildEnvelope({ method: 'POST', url: `${h.url}/v1/search`, body, totalCredits: 5, parties: [{ party: 'party-org', share: '1', seed: second }] });
      const res = await fetch(`${h.url}/v1/search`, { method: 'POST', headers: { authorization: `MPP envelope=${encoded}`, 'content-type': 'application/json' }, body });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'tenant_suspended', party: 'party-org' });
      expect(await balance(member)).toBe(before - 1);
    });
  });
});

describe('prices are read while serving', () => {
  it('a call keeps the quote it was admitted with when the price changes during its work', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-quote-'));
    const config = apiTestConfig(dataDir, { dashboard: { settings_refresh_ms: 0 } });
    const runtime = await Runtime.open(config, { env: {}, log: silentLog });
    try {
      await runtime.index.upsert(apiIndexDocs());
      const inner = await runtime.search();
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started: () => void = () => {};
      const working = new Promise<void>((resolve) => (started = resolve));
      const slow: SearchService = {
        async search(request: SearchRequest): Promise<SearchResponse> {
          started();
          await gate;
          return inner.search(request);
        },
      };
      const app = await buildApp({ config, gate: runtime.paidCallGate(), search: slow, health: async () => ({}) });
      const tenant = await runtime.accounts.createTenant('quoted', { credits: 50 });
      const { key } = await runtime.accounts.createKey(tenant.id);
      const call = app.inject({ method: 'POST', url: '/v1/search', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: { query: 'vacuum', depth: 1 } });
      await working;
      await runtime.catalog.setPricing({ ...config.pricing, search: { credits_by_depth: [9] } }, 'test');
      release();
      const answer = await call;
      expect(JSON.parse(answer.body)['credits_used']).toBe(1);
      expect(await runtime.accounts.balance(tenant.id)).toBe(49);
      const next = await app.inject({ method: 'POST', url: '/v1/search', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: { query: 'vacuum', depth: 1 } });
      expect(JSON.parse(next.body)['credits_used']).toBe(9);
      await app.close();
    } finally {
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("another node sharing the database follows an operator's edit within its refresh interval", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-nodes-'));
    const config = configSchema.parse({ ...apiTestConfig(dataDir), dashboard: { settings_refresh_ms: 200 } });
    const editor = await Runtime.open(config, { env: {}, log: silentLog });
    const other = await Runtime.open(config, { env: {}, log: silentLog });
    try {
      expect((await other.catalog.current()).pricing.price({ operation: 'search', depth: 1 }).credits).toBe(1);
      await editor.catalog.setPricing({ ...config.pricing, search: { credits_by_depth: [3] } }, 'ops');
      expect((await editor.catalog.current()).pricing.price({ operation: 'search', depth: 1 }).credits).toBe(3);
      await new Promise((r) => setTimeout(r, 250));
      expect((await other.catalog.current()).pricing.price({ operation: 'search', depth: 1 }).credits).toBe(3);
    } finally {
      await editor.close();
      await other.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
