import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../payments/plugins.js'; // the registered plug-ins' migrations (party keys)
import { configSchema } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { Accounts } from '../payments/accounts.js';
import { Catalog, catalogDefaults } from '../payments/catalog.js';
import { Parties } from '../payments/modes/mpp/index.js';
import { SqlUsageRecorder } from '../payments/usage.js';
import { CrawlSeedStore, DEFAULT_SEED_OPTIONS } from '../storage/crawl-seeds.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../storage/db.js';
import { SettingsRepository } from '../storage/settings.js';
import { UsageRepository } from '../storage/usage.js';
import { UsersRepository } from '../storage/users.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { PasswordHasher } from './passwords.js';
import { Sessions } from './sessions.js';
import { SigninThrottle } from './throttle.js';
import { SignupLimit } from './signup-limit.js';
import { Users } from './users.js';

let pg: TestPostgres | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(() => {
  pg?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function sqlite(): Promise<Storage> {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-people-'));
  dirs.push(dir);
  return openSqlite(path.join(dir, 'notary.sqlite'));
}

async function postgres(): Promise<Storage> {
  if (!pg) throw new Error('PostgreSQL did not start');
  return openPostgres(await createDatabase(pg.url, `people_${Date.now()}_${Math.floor(Math.random() * 1e6)}`));
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

/** The storage behind accounts, sessions, throttling, the catalog, usage, party keys and seeds, on both engines. */
describe.each([
  ['sqlite', sqlite],
  ['postgres', postgres],
] as const)('accounts storage on %s', (_name, open) => {
  let storage: Storage;
  let clock = Date.parse('2026-11-23T10:00:00Z');
  const now = () => clock;
  let repository: UsersRepository;
  let users: Users;
  let sessions: Sessions;
  let accounts: Accounts;
  const config = configSchema.parse({ tiers: { free: { requests_per_minute: 60, burst: 10, monthly_credits: 30 }, pro: { requests_per_minute: 600, burst: 60 } } });

  beforeAll(async () => {
    storage = await open();
    await migrateToLatest(storage);
    repository = new UsersRepository(storage.db);
    const throttle = new SigninThrottle(repository, { maxFailures: 3, maxFailuresPerAddress: 100, lockoutMs: 60_000, lockoutMaxMs: 600_000, windowMs: 900_000, now });
    users = new Users(repository, new PasswordHasher({ logN: 14, r: 8, p: 1 }), throttle, { passwordMinLength: 10, signup: 'open', signupCredits: 25, defaultTier: 'free' });
    sessions = new Sessions(repository, { ttlMs: 7 * 86_400_000, idleMs: 86_400_000, now });
    accounts = new Accounts(storage.db, { tiers: ['free', 'pro'] });
  });
  afterAll(async () => {
    await storage?.close();
  });

  it('signs up a member with its own tenant in one transaction; a second sign-up with the email leaves nothing behind', async () => {
    const { user, tenant } = await users.signUp({ email: ' Ada@Example.org ', password: 'a long password', organisation: 'Analytical' });
    expect(user).toMatchObject({ email: 'ada@example.org', role: 'member', tenant_id: tenant.id });
    expect(tenant).toMatchObject({ name: 'Analytical', tier: 'free', credits: 25 });
    expect((await accounts.ledger(tenant.id)).map((e) => [e.delta, e.reason])).toEqual([[25, 'sign-up credits']]);
    expect(await codeOf(users.signUp({ email: 'ada@example.org', password: 'a long password' }))).toBe('email_taken');
    expect(await codeOf(users.signUp({ email: 'other@example.org', password: 'a long password', organisation: 'Analytical' }))).toBe('tenant_exists');
    expect(await repository.getUserByEmail('other@example.org')).toBeUndefined();
    expect(await codeOf(users.signUp({ email: 'weak@example.org', password: 'password123' }))).toBe('weak_password');
    expect(await codeOf(users.signUp({ email: 'not an email', password: 'a long password' }))).toBe('invalid_request');
    // Ten concurrent sign-ups with one email: exactly one account, exactly one tenant.
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => users.signUp({ email: 'race@example.org', password: 'a long password', organisation: `race ${i}` })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await accounts.listTenants()).filter((t) => t.name.startsWith('race '))).toHaveLength(1);
  });

  it('signs in, throttles failures (known and unknown emails alike), and rehashes a hash made with weaker parameters', async () => {
    await users.signUp({ email: 'grace@example.org', password: 'a long password' });
    expect((await users.signIn({ email: 'GRACE@example.org', password: 'a long password' }, '10.0.0.1')).email).toBe('grace@example.org');
    for (let i = 0; i < 3; i++) expect(await codeOf(users.signIn({ email: 'grace@example.org', password: 'wrong' }, '10.0.0.1'))).toBe('invalid_credentials');
    expect(await codeOf(users.signIn({ email: 'grace@example.org', password: 'a long password' }, '10.0.0.2'))).toBe('signin_throttled');
    clock += 61_000;
    expect((await users.signIn({ email: 'grace@example.org', password: 'a long password' }, '10.0.0.2')).email).toBe('grace@example.org');
    const weak = await new PasswordHasher({ logN: 12, r: 8, p: 1 }).hash('old password 1');
    const user = await repository.insertUser({ id: 'usr_old', email: 'old@example.org', password_hash: weak, role: 'operator', tenant_id: null });
    expect(user).toBeDefined();
    await users.signIn({ email: 'old@example.org', password: 'old password 1' }, '10.0.0.3');
    expect((await repository.getUserByEmail('old@example.org'))?.password_hash).toMatch(/^\$scrypt\$ln=14,/);
  });

  it('sign-ups per address: 12 racing from one address get exactly the limit; another address and a later window are free', async () => {
    const limit = new SignupLimit(repository, { maxPerAddress: 3, windowMs: 3_600_000, now });
    const limited = new Users(repository, new PasswordHasher({ logN: 14, r: 8, p: 1 }), new SigninThrottle(repository, { maxFailures: 3, maxFailuresPerAddress: 100, lockoutMs: 60_000, lockoutMaxMs: 600_000, windowMs: 900_000, now }), {
      passwordMinLength: 10,
      signup: 'open',
      signupCredits: 5,
      defaultTier: 'free',
      signupLimit: limit,
    });
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => limited.signUp({ email: `race-${i}@example.org`, password: 'correct horse battery' }, '203.0.113.7').then(() => 'ok', (err: unknown) => codeOf(Promise.reject(err)))));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'signup_throttled')).toHaveLength(9);
    expect(await limited.signUp({ email: 'race-other@example.org', password: 'correct horse battery' }, '203.0.113.8')).toBeTruthy();
    clock += 3_600_001;
    expect(await limited.signUp({ email: 'race-later@example.org', password: 'correct horse battery' }, '203.0.113.7')).toBeTruthy();
  });

  it('sessions: only the token hash is stored; expiry, idleness and destroy end them', async () => {
    const user = (await repository.getUserByEmail('grace@example.org'))!;
    const created = await sessions.create(user, { address: '10.0.0.1', userAgent: 'test' });
    const stored = await storage.db.selectFrom('sessions').selectAll().where('user_id', '=', user.id).execute();
    expect(stored.some((row) => row.id === created.token)).toBe(false);
    expect((await sessions.resolve(created.token))?.user?.id).toBe(user.id);
    expect(await sessions.resolve('not-a-token')).toBeUndefined();
    clock += 86_400_000 + 1;
    expect(await sessions.resolve(created.token)).toBeUndefined();
    const second = await sessions.create(user);
    const third = await sessions.create(user);
    expect(await sessions.destroyForUser(user.id, third.id)).toBeGreaterThanOrEqual(1);
    expect(await sessions.resolve(second.token)).toBeUndefined();
    expect((await sessions.resolve(third.token))?.user?.id).toBe(user.id);
  });

  it('grants a monthly tier credit once per month even when 20 grants race, and filters the ledger', async () => {
    const tenant = await accounts.createTenant('monthly', { credits: 5 });
    const results = await Promise.all(Array.from({ length: 20 }, () => accounts.applyMonthlyGrant(tenant, 30, new Date('2026-11-23T12:00:00Z'))));
    expect(Math.max(...results.map((t) => t.credits))).toBe(35);
    expect(await accounts.balance(tenant.id)).toBe(35);
    await accounts.applyMonthlyGrant(await accounts.getTenant(tenant.id), 30, new Date('2026-12-01T00:00:00Z'));
    expect(await accounts.balance(tenant.id)).toBe(65);
    const { record } = await accounts.createKey(tenant.id, { name: 'k' });
    await accounts.debit({ tenantId: tenant.id, credits: 2, requestId: 'req_1', keyId: record.id });
    expect((await accounts.ledgerPage(tenant.id, { kind: 'debit', limit: 10 })).map((e) => e.delta)).toEqual([-2]);
    expect((await accounts.ledgerPage(tenant.id, { kind: 'credit', limit: 10 })).map((e) => e.delta)).toEqual([30, 30, 5]);
    expect((await accounts.ledgerPage(tenant.id, { keyId: record.id, limit: 10 })).length).toBe(1);
    const page = await accounts.ledgerPage(tenant.id, { limit: 2 });
    expect((await accounts.ledgerPage(tenant.id, { limit: 10, beforeId: page.at(-1)!.id })).length).toBe(2);
  });

  it('keeps operator settings with revisions; the catalog serves them and refuses invalid ones', async () => {
    const catalog = new Catalog(new SettingsRepository(storage.db), catalogDefaults(config), { refreshMs: 0 });
    expect((await catalog.current()).origins.pricing.source).toBe('config');
    await catalog.setPricing({ search: { credits_by_depth: [2, 3] } }, 'ops@example.org');
    await catalog.setPricing({ search: { credits_by_depth: [4, 5] } }, 'ops@example.org');
    const snapshot = await catalog.current();
    expect(snapshot.origins.pricing).toMatchObject({ source: 'operator', revision: 2, updated_by: 'ops@example.org' });
    expect(snapshot.pricing.price({ operation: 'search', depth: 2 }).credits).toBe(5);
    expect(await codeOf(catalog.setTiers({ pro: { requests_per_minute: 1, burst: 1 } }, 'ops'))).toBe('invalid_settings');
    expect((await catalog.reset('pricing')).pricing.price({ operation: 'search', depth: 1 }).credits).toBe(1);
  });

  it('sums usage per day exactly (money in smallest units as big integers) by endpoint, depth and mode', async () => {
    const usage = new UsageRepository(storage.db);
    const recorder = new SqlUsageRecorder(usage);
    const base = { tenantId: 'ten_u', keyId: null, payer: 'tenant:ten_u', environment: 'live' as const, render: null, asset: 'USDC', requestId: 'req' };
    await recorder.record({ ...base, at: '2026-11-22T10:00:00.000Z', mode: 'api_key', operation: 'search', depth: 1, credits: 1, amount: '1000' });
    await recorder.record({ ...base, at: '2026-11-23T10:00:00.000Z', mode: 'api_key', operation: 'search', depth: 2, credits: 2, amount: '2000' });
    await recorder.record({ ...base, at: '2026-11-23T11:00:00.000Z', mode: 'x402', operation: 'search', depth: 2, credits: 2, amount: '9007199254740993' });
    await recorder.record({ ...base, at: '2026-11-23T12:00:00.000Z', mode: 'api_key', operation: 'extract', depth: null, credits: 1, amount: '1000' });
    const range = { tenantId: 'ten_u', from: '2026-11-22T00:00:00.000Z', to: '2026-11-24T00:00:00.000Z' };
    expect(await usage.daily(range, 'operation')).toEqual([
      { day: '2026-11-22', key: 'search', asset: 'USDC', calls: 1, credits: 1, amount: '1000' },
      { day: '2026-11-23', key: 'extract', asset: 'USDC', calls: 1, credits: 1, amount: '1000' },
      { day: '2026-11-23', key: 'search', asset: 'USDC', calls: 2, credits: 4, amount: '9007199254742993' },
    ]);
    expect((await usage.daily(range, 'depth')).map((b) => [b.day, b.key, b.calls])).toEqual([
      ['2026-11-22', '1', 1],
      ['2026-11-23', '2', 2],
    ]);
    expect((await usage.daily({ ...range, tenantId: 'ten_other' }, 'mode')).length).toBe(0);
  });

  it('party keys as the dashboard registers them: RFC 7638 thumbprint, raw key or public JWK, revoked only by their tenant', async () => {
    const tenant = await accounts.createTenant('parties');
    const other = await accounts.createTenant('parties-other');
    const parties = new Parties(storage.db);
    // RFC 8037 appendix A.3: the thumbprint of the example Ed25519 key.
    const x = '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo';
    const { key, created } = await parties.addKey(tenant, x, 'main');
    expect([key.kid, created]).toEqual(['kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k', true]);
    const again = await parties.addKey(tenant, `{"kty":"OKP","crv":"Ed25519","x":"${x}"}`);
    expect([again.key.kid, again.created]).toEqual([key.kid, false]);
    expect(await codeOf(parties.addKey(other, x))).toBe('party_key_exists');
    expect(await codeOf(parties.addKey(tenant, 'short'))).toBe('invalid_public_key');
    // A private JWK is refused, and its secret is not echoed.
    const privateJwk = `{"kty":"OKP","crv":"Ed25519","x":"${x}","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}`;
    const refused = await parties.addKey(tenant, privateJwk).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(NotaryError);
    expect((refused as NotaryError).message).not.toContain('nWGxne');
    expect(await codeOf(parties.revokeKey(key.kid, other.id))).toBe('party_key_not_found');
    expect((await parties.repository.getKey(key.kid))?.revoked_at).toBeNull();
    expect((await parties.revokeKey(key.kid, tenant.id)).revoked_at).not.toBeNull();
    expect((await parties.listKeys([tenant], tenant.id)).map((k) => [k.kid, k.tenant, k.name])).toEqual([[key.kid, 'parties', 'main']]);
    expect(await parties.listKeys([other], other.id)).toEqual([]);
  });

  it('crawl seeds: due when new, asked for or past their interval; paused and removed ones are not; config seeds never come back', async () => {
    const seeds = new CrawlSeedStore(storage.db);
    expect(await seeds.importConfigSeeds(['https://a.example/', 'https://b.example/'], 60)).toBe(2);
    const listed = await seeds.list();
    const a = listed.find((s) => s.url === 'https://a.example/');
    const b = listed.find((s) => s.url === 'https://b.example/');
    await seeds.markCrawled(a!.id, new Date().toISOString());
    await seeds.update(b!.id, { paused: true });
    expect((await seeds.due()).map((s) => s.url)).toEqual([]);
    await seeds.requestCrawl(a!.id);
    expect((await seeds.due()).map((s) => s.url)).toEqual(['https://a.example/']);
    expect((await seeds.due(new Date(Date.now() + 2 * 3_600_000))).map((s) => s.url)).toEqual(['https://a.example/']);
    expect(await seeds.remove(a!.id)).toBe(true);
    expect(await seeds.importConfigSeeds(['https://a.example/'], 60)).toBe(0);
    expect(await seeds.add({ url: 'https://b.example/', source: 'operator', options: DEFAULT_SEED_OPTIONS, recrawlMinutes: 60 })).toBeUndefined();
    expect((await seeds.add({ url: 'https://a.example/', source: 'operator', options: DEFAULT_SEED_OPTIONS, recrawlMinutes: 30 }))?.recrawl_minutes).toBe(30);
  });
});
