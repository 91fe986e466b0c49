import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../core/config.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { storageBackends } from './support/backends.js';

const { backends, stop } = storageBackends('idem');
afterAll(stop);

describe.each(backends)('Idempotency-Key on $name', (backend) => {
  let dir: string;
  let storage: ConfigInput['storage'];
  let api: ApiHarness;
  const open = async () => startApi(apiTestConfig(dir, { storage, payments: { idempotency: { in_progress_timeout_s: 2 } } }));

  const post = (harness: ApiHarness, key: string, body: unknown, idempotencyKey?: string) =>
    harness.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      payload: JSON.stringify(body),
    });

  const tenantWithKey = async (name: string, credits: number) => {
    const tenant = await api.runtime.accounts.createTenant(name, { credits, tier: 'bulk' });
    const { key } = await api.runtime.accounts.createKey(tenant.id);
    return { tenant, key };
  };
  const debits = async (tenantId: string) => (await api.runtime.accounts.ledger(tenantId)).filter((e) => e.delta < 0);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-idem-'));
    storage = await backend.storage();
    api = await open();
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('50 concurrent identical requests with one key: one charge, never two; the rest get 409 or the replay', async () => {
    const { tenant, key } = await tenantWithKey('concurrent', 100);
    const body = { query: 'vacuum tables', depth: 2 };
    const responses = await Promise.all(Array.from({ length: 50 }, () => post(api, key, body, '"8e03978e-40d5-43e8-bc93-6894a57f9324"')));
    const fresh = responses.filter((r) => r.statusCode === 200 && r.headers['idempotency-replayed'] === undefined);
    const replays = responses.filter((r) => r.statusCode === 200 && r.headers['idempotency-replayed'] === 'true');
    const busy = responses.filter((r) => r.statusCode === 409);
    expect(fresh).toHaveLength(1);
    expect(replays.length + busy.length).toBe(49);
    for (const r of replays) expect(r.body).toBe(fresh[0]?.body);
    for (const r of busy) {
      expect(r.json()).toMatchObject({ code: 'idempotency_in_progress', retryable: true });
      expect(r.headers['retry-after']).toBe('1');
    }
    const charged = await debits(tenant.id);
    expect(charged).toHaveLength(1);
    expect(charged[0]).toMatchObject({ delta: -2, idempotency_key: '8e03978e-40d5-43e8-bc93-6894a57f9324' });
    expect(await api.runtime.accounts.balance(tenant.id)).toBe(98);

    // Once the first is done, every retry is the replay.
    const later = await post(api, key, body, '"8e03978e-40d5-43e8-bc93-6894a57f9324"');
    expect(later.statusCode).toBe(200);
    expect(later.headers['idempotency-replayed']).toBe('true');
    expect(later.body).toBe(fresh[0]?.body);
    expect(await debits(tenant.id)).toHaveLength(1);
  });

  it('replays after a restart of the service', async () => {
    const { tenant, key } = await tenantWithKey('restart', 10);
    const first = await post(api, key, { query: 'analyze', depth: 1 }, 'restart-key-1');
    expect(first.statusCode).toBe(200);
    await api.close();
    api = await open();
    const replay = await post(api, key, { query: 'analyze', depth: 1 }, 'restart-key-1');
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(replay.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await debits(tenant.id)).toHaveLength(1);
    expect(await api.runtime.accounts.balance(tenant.id)).toBe(9);
  });

  it('refuses the same key with another body (422), keeps keys per payer, and refuses malformed keys (400)', async () => {
    const { tenant, key } = await tenantWithKey('reuse', 10);
    expect((await post(api, key, { query: 'vacuum', depth: 1 }, 'k-reuse')).statusCode).toBe(200);
    const other = await post(api, key, { query: 'indexes', depth: 1 }, 'k-reuse');
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ code: 'idempotency_key_reused', retryable: false });
    const deeper = await post(api, key, { query: 'vacuum', depth: 2 }, 'k-reuse');
    expect(deeper.statusCode).toBe(422);

    const { tenant: second, key: secondKey } = await tenantWithKey('reuse-other-payer', 10);
    const sameKeyOtherPayer = await post(api, secondKey, { query: 'indexes', depth: 1 }, 'k-reuse');
    expect(sameKeyOtherPayer.statusCode).toBe(200);
    expect(sameKeyOtherPayer.headers['idempotency-replayed']).toBeUndefined();

    for (const bad of ['', '""', 'has space', 'x'.repeat(256), 'ünïcode', '"unterminated', 'back\\slash']) {
      const res = await post(api, key, { query: 'vacuum', depth: 1 }, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_idempotency_key' });
    }
    expect(await debits(tenant.id)).toHaveLength(1);
    expect(await debits(second.id)).toHaveLength(1);
  });

  it('a failed call frees its key: the retry runs and is charged once', async () => {
    const { tenant, key } = await tenantWithKey('fails-then-works', 3);
    // Too poor for depth 3 (4 credits): 402, nothing charged, the key is not kept.
    const poor = await post(api, key, { query: 'vacuum', depth: 3 }, 'k-retry');
    expect(poor.statusCode).toBe(402);
    await api.runtime.accounts.grantCredits(tenant.id, 5, 'test top-up');
    const retried = await post(api, key, { query: 'vacuum', depth: 3 }, 'k-retry');
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.headers['idempotency-replayed']).toBeUndefined();
    expect(await debits(tenant.id)).toHaveLength(1);
    expect(await api.runtime.accounts.balance(tenant.id)).toBe(4);
  });

  it('a call whose process died after the charge: the retry after the lease is served without a second debit', async () => {
    const { tenant, key } = await tenantWithKey('crashed', 10);
    const body = JSON.stringify({ query: 'autovacuum', depth: 1 });
    // The state a crash between the charge and the stored response leaves behind: a running record and a debit.
    const now = Date.now();
    const { requestFingerprint } = await import('../payments/paid-call.js');
    const fingerprint = requestFingerprint(
      { method: 'POST', path: '/v1/search', url: '', headers: {}, clientAddress: '', requestId: '' },
      Buffer.from(body),
    );
    await api.runtime.idempotency.begin({ scope: `tenant:${tenant.id}`, key: 'k-crash', fingerprint, requestId: 'req_crashed', now, leaseMs: 2000 });
    await api.runtime.accounts.debit({ tenantId: tenant.id, credits: 1, requestId: 'req_crashed', reason: 'search depth 1', idempotencyKey: 'k-crash' });
    const res = () =>
      api.app.inject({
        method: 'POST',
        url: '/v1/search',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': 'k-crash' },
        payload: body,
      });
    expect((await res()).statusCode).toBe(409);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const served = await res();
    expect(served.statusCode, served.body).toBe(200);
    expect(served.json()).toMatchObject({ credits_used: 1 });
    expect(await debits(tenant.id)).toHaveLength(1);
    expect(await api.runtime.accounts.balance(tenant.id)).toBe(9);
    const replay = await res();
    expect(replay.headers['idempotency-replayed']).toBe('true');
  });
});
