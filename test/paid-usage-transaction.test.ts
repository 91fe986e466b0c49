import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';

/**
 * An API-key call's charge and its usage row are one transaction (issue 28: one commit a paid call instead of two):
 * the usage charts never miss a charged call, and a call whose usage row cannot be written is not charged.
 */
describe('API-key charge and usage row in one transaction (SQLite)', () => {
  let dir: string;
  let api: ApiHarness;
  const post = (key: string, body: unknown) =>
    api.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      payload: JSON.stringify(body),
    });
  const tenantWithKey = async (name: string, credits: number) => {
    const tenant = await api.runtime.accounts.createTenant(name, { credits, tier: 'bulk' });
    const { key } = await api.runtime.accounts.createKey(tenant.id);
    return { tenant, key };
  };
  const usageOf = (tenantId: string) =>
    api.runtime.storage.db.selectFrom('usage_events').select(['request_id', 'credits', 'mode', 'depth']).where('tenant_id', '=', tenantId).execute();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-usage-tx-'));
    api = await startApi(apiTestConfig(dir));
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('records the usage row of a charged call beside its ledger row, once', async () => {
    const { tenant, key } = await tenantWithKey('usage-once', 10);
    const response = await post(key, { query: 'vacuum tables', depth: 2 });
    expect(response.statusCode).toBe(200);
    const debits = (await api.runtime.accounts.ledger(tenant.id)).filter((e) => e.delta < 0);
    expect(debits.map((e) => e.delta)).toEqual([-2]);
    expect(await usageOf(tenant.id)).toEqual([{ request_id: debits[0]?.request_id, credits: 2, mode: 'api_key', depth: 2 }]);
  });

  it('charges nothing when the usage row cannot be written (the debit rolls back with it)', async () => {
    const { tenant, key } = await tenantWithKey('usage-refused', 10);
    const sqlite = api.runtime.storage.sqlite;
    if (!sqlite) throw new Error('this test needs SQLite');
    sqlite.exec(`CREATE TRIGGER refuse_usage BEFORE INSERT ON usage_events WHEN NEW.tenant_id = '${tenant.id}' BEGIN SELECT RAISE(ABORT, 'usage refused'); END`);
    try {
      const response = await post(key, { query: 'vacuum tables', depth: 1 });
      expect(response.statusCode).toBe(500);
      expect(await api.runtime.accounts.balance(tenant.id)).toBe(10);
      expect((await api.runtime.accounts.ledger(tenant.id)).filter((e) => e.delta < 0)).toEqual([]);
      expect(await usageOf(tenant.id)).toEqual([]);
    } finally {
      sqlite.exec('DROP TRIGGER refuse_usage');
    }
  });
});
