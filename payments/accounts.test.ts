import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotaryError } from '../core/errors.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { Accounts } from './accounts.js';
import { generateApiKey } from './api-keys.js';

let pgServer: TestPostgres | undefined;
const tempDirs: string[] = [];
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => {
  pgServer?.stop();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

interface Backend {
  open(): Promise<Storage>;
  /**
   * A second handle for the concurrency test. PostgreSQL: a separate pool on the same database. SQLite: the same
   * handle, as in production (one handle per process): better-sqlite3 waits for a lock synchronously, so two handles
   * on one file inside one process would block the event loop while the other holds a transaction open.
   */
  second(first: Storage): Promise<Storage | null>;
}

async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-accounts-'));
  tempDirs.push(dir);
  const file = path.join(dir, 'notary.sqlite');
  return { open: async () => openSqlite(file), second: async () => null };
}

async function postgresBackend(): Promise<Backend> {
  if (!pgServer) throw new Error('PostgreSQL did not start');
  const url = await createDatabase(pgServer.url, `accounts_${Date.now()}_${Math.floor(Math.random() * 1e6)}`);
  return { open: async () => openPostgres(url), second: async () => openPostgres(url) };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof NotaryError) return err.code;
    throw err;
  }
  return 'no error';
}

describe.each([
  ['sqlite', sqliteBackend],
  ['postgres', postgresBackend],
] as const)('Accounts on %s', (_name, makeBackend) => {
  let backend: Backend;
  let storage: Storage;
  let accounts: Accounts;
  const extraStorages: Storage[] = [];

  beforeAll(async () => {
    backend = await makeBackend();
    storage = await backend.open();
    await migrateToLatest(storage);
    accounts = new Accounts(storage.db, { tiers: ['free', 'pro'], defaultTier: 'free' });
  });
  afterAll(async () => {
    for (const s of extraStorages) await s.close();
    await storage?.close();
  });

  it('creates tenants, idempotently with ensureTenant, and records the opening balance in the ledger', async () => {
    const tenant = await accounts.createTenant('acme', { tier: 'pro', credits: 100 });
    expect(tenant).toMatchObject({ name: 'acme', tier: 'pro', credits: 100 });
    expect(tenant.id).toMatch(/^ten_[0-9A-Za-z]{20}$/);
    expect(await codeOf(accounts.createTenant('acme'))).toBe('tenant_exists');
    const again = await accounts.ensureTenant('acme', { credits: 5000 });
    expect(again.id).toBe(tenant.id);
    expect(again.credits).toBe(100);
    const ledger = await accounts.ledger(tenant.id);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ delta: 100, balance_after: 100, reason: 'opening balance' });

    const fresh = await accounts.ensureTenant('newco');
    expect(fresh).toMatchObject({ tier: 'free', credits: 0 });
    expect(await accounts.ledger(fresh.id)).toEqual([]);
  });

  it('ensureTenant under concurrency creates one tenant', async () => {
    const tenants = await Promise.all(Array.from({ length: 8 }, () => accounts.ensureTenant('racy', { credits: 3 })));
    expect(new Set(tenants.map((t) => t.id)).size).toBe(1);
    const id = tenants[0]?.id ?? '';
    expect(await accounts.balance(id)).toBe(3);
    expect(await accounts.ledger(id)).toHaveLength(1);
  });

  it('rejects bad tenant input with clear codes', async () => {
    expect(await codeOf(accounts.createTenant('x', { tier: 'platinum' }))).toBe('invalid_request');
    expect(await codeOf(accounts.createTenant('   '))).toBe('invalid_request');
    expect(await codeOf(accounts.createTenant('y', { credits: -1 }))).toBe('invalid_request');
    expect(await codeOf(accounts.createTenant('z', { credits: 1.5 }))).toBe('invalid_request');
    expect(await codeOf(accounts.createKey('ten_doesnotexist'))).toBe('tenant_not_found');
    expect(await codeOf(accounts.grantCredits('ten_doesnotexist', 5, 'x'))).toBe('tenant_not_found');
    expect(await codeOf(accounts.debit({ tenantId: 'ten_doesnotexist', credits: 1, requestId: 'req_x' }))).toBe('tenant_not_found');
    expect(await codeOf(accounts.revokeKey('key_doesnotexist'))).toBe('api_key_not_found');
  });

  it('creates, lists, authenticates and revokes keys without ever exposing the hash or plaintext', async () => {
    const tenant = await accounts.createTenant('keys-tenant', { tier: 'pro' });
    const other = await accounts.createTenant('other-tenant');
    const { key, record } = await accounts.createKey(tenant.id, 'ci');
    const second = await accounts.createKey(tenant.id);
    await accounts.createKey(other.id, 'theirs');
    expect(record.id).toMatch(/^key_[0-9A-Za-z]{20}$/);
    expect(record).toMatchObject({ tenant_id: tenant.id, name: 'ci', prefix: key.slice(0, 12), last4: key.slice(-4), revoked_at: null });
    expect(second.record.name).toBeNull();

    const listed = await accounts.listKeys(tenant.id);
    expect(new Set(listed.map((k) => k.id))).toEqual(new Set([record.id, second.record.id]));
    expect((await accounts.listKeys()).length).toBeGreaterThanOrEqual(3);
    for (const k of await accounts.listKeys()) {
      expect(Object.keys(k).sort()).toEqual(['collections', 'created_at', 'environment', 'expires_at', 'id', 'last4', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes', 'tenant_id']);
      expect(JSON.stringify(k)).not.toContain(key);
    }
    // The database holds the SHA-256, never the key.
    const stored = await storage.db.selectFrom('api_keys').selectAll().where('id', '=', record.id).executeTakeFirstOrThrow();
    expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(key.slice(8, 40));

    const auth = await accounts.authenticate(key);
    expect(auth.keyId).toBe(record.id);
    expect(auth.tenant).toMatchObject({ id: tenant.id, tier: 'pro' });
    expect((await accounts.listKeys(tenant.id)).find((k) => k.id === record.id)?.last_used_at).not.toBeNull();

    expect(await codeOf(accounts.authenticate(generateApiKey().key))).toBe('invalid_api_key');
    const revoked = await accounts.revokeKey(record.id);
    expect(revoked.revoked_at).not.toBeNull();
    expect((await accounts.revokeKey(record.id)).revoked_at).toBe(revoked.revoked_at);
    expect(await codeOf(accounts.authenticate(key))).toBe('revoked_api_key');
    expect((await accounts.authenticate(second.key)).keyId).toBe(second.record.id);
  });

  it('rejects malformed keys before any database work', async () => {
    let queries = 0;
    const counter: KyselyPlugin = {
      transformQuery: (args) => {
        queries++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const counted = new Accounts(storage.db.withPlugin(counter));
    const tenant = await counted.createTenant('counted');
    const { key } = await counted.createKey(tenant.id);
    await counted.authenticate(key);
    expect(queries).toBeGreaterThan(0); // the counter does see real work
    const before = queries;
    const lastChar = key.at(-1) === 'a' ? 'b' : 'a';
    for (const bad of [key.slice(0, -1) + lastChar, key.slice(0, -1), 'sk_prod_' + key.slice(8), 'sk_test_' + key.slice(8, -1) + lastChar, '', 'sk_live_' + '!'.repeat(38)]) {
      expect(await codeOf(counted.authenticate(bad))).toBe('invalid_api_key');
    }
    expect(queries).toBe(before);
  });

  it('grants and debits with ledger rows carrying request and key ids', async () => {
    const tenant = await accounts.createTenant('ledger-tenant', { credits: 10 });
    const { record } = await accounts.createKey(tenant.id);
    expect(await accounts.grantCredits(tenant.id, 5, 'top-up')).toEqual({ balance: 15 });
    expect(await accounts.debit({ tenantId: tenant.id, credits: 4, requestId: 'req_one', keyId: record.id })).toEqual({ balance: 11, already: false });
    expect(await accounts.debit({ tenantId: tenant.id, credits: 11, requestId: 'req_two', reason: 'search depth 3' })).toEqual({ balance: 0, already: false });
    expect(await codeOf(accounts.grantCredits(tenant.id, 0, 'nothing'))).toBe('invalid_request');

    let error: unknown;
    try {
      await accounts.debit({ tenantId: tenant.id, credits: 2, requestId: 'req_three' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(NotaryError);
    expect((error as NotaryError).code).toBe('insufficient_credits');
    expect((error as NotaryError).status).toBe(402);
    expect((error as NotaryError).extra).toEqual({ required_credits: 2, available_credits: 0 });

    const ledger = await accounts.ledger(tenant.id);
    expect(ledger.map((e) => [e.delta, e.balance_after, e.reason, e.request_id, e.key_id])).toEqual([
      [10, 10, 'opening balance', null, null],
      [5, 15, 'top-up', null, null],
      [-4, 11, 'search', 'req_one', record.id],
      [-11, 0, 'search depth 3', 'req_two', null],
    ]);
    expect(await accounts.balance(tenant.id)).toBe(0);
  });

  it('the database itself refuses a negative balance', async () => {
    const tenant = await accounts.createTenant('check-tenant', { credits: 1 });
    await expect(storage.db.updateTable('tenants').set({ credits: -1 }).where('id', '=', tenant.id).execute()).rejects.toThrow();
    expect(await accounts.balance(tenant.id)).toBe(1);
  });

  it('50 concurrent debits against a balance of 17: exactly 17 succeed', async () => {
    const tenant = await accounts.createTenant('concurrent-tenant', { credits: 17 });
    const secondStorage = await backend.second(storage);
    if (secondStorage) extraStorages.push(secondStorage);
    const pools = [accounts, new Accounts((secondStorage ?? storage).db)];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        (pools[i % 2] as Accounts).debit({ tenantId: tenant.id, credits: 1, requestId: `req_concurrent${String(i).padStart(2, '0')}` }),
      ),
    );
    const fulfilled = outcomes.filter((o) => o.status === 'fulfilled');
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(fulfilled).toHaveLength(17);
    expect(rejected).toHaveLength(33);
    for (const r of rejected) {
      expect(r.reason).toBeInstanceOf(NotaryError);
      expect((r.reason as NotaryError).code).toBe('insufficient_credits');
    }
    expect(await accounts.balance(tenant.id)).toBe(0);
    const debits = (await accounts.ledger(tenant.id)).filter((e) => e.delta < 0);
    expect(debits).toHaveLength(17);
    expect(new Set(debits.map((e) => e.request_id)).size).toBe(17);
    // Balances after each debit are 16..0, each exactly once: no lost update.
    expect(debits.map((e) => e.balance_after).sort((a, b) => a - b)).toEqual(Array.from({ length: 17 }, (_, i) => i));
  });

  it('a debit with an Idempotency-Key is single-use, also when 20 run at once on two connections', async () => {
    const tenant = await accounts.createTenant('keyed-debits', { credits: 10 });
    const first = await accounts.debit({ tenantId: tenant.id, credits: 3, requestId: 'req_keyed1', idempotencyKey: 'k1' });
    expect(first).toEqual({ balance: 7, already: false });
    expect(await accounts.debit({ tenantId: tenant.id, credits: 3, requestId: 'req_keyed2', idempotencyKey: 'k1' })).toEqual({ balance: 7, already: true });
    const secondStorage = await backend.second(storage);
    if (secondStorage) extraStorages.push(secondStorage);
    const pools = [accounts, new Accounts((secondStorage ?? storage).db)];
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (pools[i % 2] as Accounts).debit({ tenantId: tenant.id, credits: 2, requestId: `req_race${i}`, idempotencyKey: 'k2' })),
    );
    expect(outcomes.filter((o) => !o.already)).toHaveLength(1);
    expect(await accounts.balance(tenant.id)).toBe(5);
    const debits = (await accounts.ledger(tenant.id)).filter((e) => e.delta < 0);
    expect(debits.map((e) => [e.delta, e.idempotency_key])).toEqual([
      [-3, 'k1'],
      [-2, 'k2'],
    ]);
  });

  it('debits several tenants in one transaction or none: a short tenant leaves every balance and the ledger unchanged', async () => {
    const a = await accounts.createTenant('multi-a', { credits: 10 });
    const b = await accounts.createTenant('multi-b', { credits: 1 });
    const rows = async () => (await accounts.ledger(a.id)).length + (await accounts.ledger(b.id)).length;
    const rowsBefore = await rows();
    const refused = await accounts.debitMany({
      debits: [
        { tenantId: a.id, credits: 5, reason: 'share a' },
        { tenantId: b.id, credits: 2, reason: 'share b' },
      ],
      requestId: 'req_multi_refused',
    });
    expect(refused).toEqual({ ok: false, reason: 'insufficient_credits', tenantId: b.id, required: 2, available: 1 });
    expect([await accounts.balance(a.id), await accounts.balance(b.id)]).toEqual([10, 1]);
    expect(await rows()).toBe(rowsBefore);

    // `within` runs in the same transaction: its failure undoes the debits too.
    await expect(
      accounts.debitMany({ debits: [{ tenantId: a.id, credits: 1, reason: 'x' }], requestId: 'req_multi_within' }, async () => {
        throw new Error('nonce already used');
      }),
    ).rejects.toThrow('nonce already used');
    expect(await accounts.balance(a.id)).toBe(10);

    const done = await accounts.debitMany({
      debits: [
        { tenantId: b.id, credits: 1, reason: 'share b' },
        { tenantId: a.id, credits: 0, reason: 'share a' },
      ],
      requestId: 'req_multi_ok',
      idempotencyKey: 'mpp:scope:k1',
    });
    expect(done).toEqual({ ok: true, already: false, balances: new Map([[a.id, 10], [b.id, 0]]) });
    const again = await accounts.debitMany({ debits: [{ tenantId: b.id, credits: 1, reason: 'share b' }, { tenantId: a.id, credits: 0, reason: 'share a' }], requestId: 'req_multi_again', idempotencyKey: 'mpp:scope:k1' });
    expect(again).toMatchObject({ ok: true, already: true });
    const multiRows = [...(await accounts.ledger(a.id)), ...(await accounts.ledger(b.id))].filter((e) => e.request_id === 'req_multi_ok');
    expect(multiRows.map((e) => [e.tenant_id, e.delta, e.balance_after, e.reason, e.idempotency_key]).sort()).toEqual(
      [
        [a.id, 0, 10, 'share a', 'mpp:scope:k1'],
        [b.id, -1, 0, 'share b', 'mpp:scope:k1'],
      ].sort(),
    );
    expect(await codeOf(accounts.debitMany({ debits: [], requestId: 'req_none' }))).toBe('invalid_request');
    expect(await codeOf(accounts.debitMany({ debits: [{ tenantId: a.id, credits: -1, reason: 'x' }], requestId: 'req_neg' }))).toBe('invalid_request');
  });

  it('60 concurrent multi-party debits listing the tenants in both orders: no deadlock, no overdraft, all or none each', async () => {
    const a = await accounts.createTenant('multi-race-a', { credits: 40 });
    const b = await accounts.createTenant('multi-race-b', { credits: 23 });
    const secondStorage = await backend.second(storage);
    if (secondStorage) extraStorages.push(secondStorage);
    const pools = [accounts, new Accounts((secondStorage ?? storage).db)];
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const debits = [
          { tenantId: a.id, credits: 1, reason: 'a' },
          { tenantId: b.id, credits: 1, reason: 'b' },
        ];
        return (pools[i % 2] as Accounts).debitMany({ debits: i % 3 === 0 ? debits.reverse() : debits, requestId: `req_race${i}` });
      }),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(23);
    for (const o of outcomes.filter((x) => !x.ok)) expect(o).toMatchObject({ ok: false, reason: 'insufficient_credits', tenantId: b.id });
    expect([await accounts.balance(a.id), await accounts.balance(b.id)]).toEqual([17, 0]);
    const debitsA = (await accounts.ledger(a.id)).filter((e) => e.delta < 0);
    const debitsB = (await accounts.ledger(b.id)).filter((e) => e.delta < 0);
    expect(debitsA).toHaveLength(23);
    expect(new Set(debitsA.map((e) => e.request_id))).toEqual(new Set(debitsB.map((e) => e.request_id)));
  });
});
