import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../payments/plugins.js'; // the registered plug-ins' migrations
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../storage/db.js';
import { X402PaymentsRepository, type NewX402Payment } from '../payments/modes/x402/repository.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';

let pgServer: TestPostgres | undefined;
afterAll(() => pgServer?.stop());

const backends: Array<{ name: string; open: () => Promise<{ storage: Storage; cleanup: () => void }> }> = [
  {
    name: 'SQLite',
    open: async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'notary-x402-store-'));
      return { storage: openSqlite(path.join(dir, 'notary.sqlite')), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      pgServer ??= await startPostgres();
      return { storage: openPostgres(await createDatabase(pgServer.url, `x402_${process.pid}`)), cleanup: () => {} };
    },
  },
];

let serial = 0;
function payment(overrides: Partial<NewX402Payment> = {}): NewX402Payment {
  serial++;
  return {
    id: `pay_${serial}`,
    flow: 'signature',
    challenge: `challenge-${serial}`,
    payment_key: `auth:eip155:1:0xasset:0xpayer:${serial}`,
    payer: '0xpayer',
    network: 'eip155:1',
    asset: '0xasset',
    pay_to: '0xpayto',
    amount: '1000',
    credits: 1,
    auth_nonce: `0x${serial}`,
    valid_before: '1800000000',
    fingerprint: 'f',
    state: 'reserved',
    transaction_hash: null,
    request_id: `req_${serial}`,
    lease_until: new Date(Date.now() + 60_000).toISOString(),
    ...overrides,
  };
}

const ledgerEntry = (id: string, tx: string) => ({
  mode: 'x402',
  payer: '0xpayer',
  amount: '1000',
  asset: '0xasset',
  network: 'eip155:1',
  pay_to: '0xpayto',
  transaction_hash: tx,
  credits: 1,
  request_id: 'req_x',
  reference: id,
});

/** The single-use guarantees of x402 payments come from the database: checked on both engines, under concurrency. */
describe.each(backends)('x402 payments storage on $name', (backend) => {
  let storage: Storage;
  let cleanup: () => void;
  let repo: X402PaymentsRepository;

  beforeAll(async () => {
    ({ storage, cleanup } = await backend.open());
    await migrateToLatest(storage);
    repo = new X402PaymentsRepository(storage.db);
  }, 120_000);
  afterAll(async () => {
    await storage?.close();
    cleanup?.();
  });

  it('holds a payment once among 50 concurrent reservations, and a challenge once across payments', async () => {
    const base = payment();
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => repo.reserve({ ...base, id: `${base.id}_${i}` })));
    expect(outcomes.filter((o) => o.reserved)).toHaveLength(1);
    for (const o of outcomes.filter((x) => !x.reserved)) expect(o).toMatchObject({ reserved: false, existing: { payment_key: base.payment_key } });
    const sameChallenge = await repo.reserve(payment({ challenge: base.challenge }));
    expect(sameChallenge).toMatchObject({ reserved: false, existing: { challenge: base.challenge } });
  });

  it('moves a payment between states once, settles it with exactly one ledger row, and keeps transactions unique', async () => {
    const p = payment();
    await repo.reserve(p);
    const moves = await Promise.all(Array.from({ length: 10 }, () => repo.transition(p.id, ['reserved'], 'settling', { countAttempt: true })));
    expect(moves.filter(Boolean)).toHaveLength(1);
    expect((await repo.get(p.id))?.attempts).toBe(1);
    const settles = await Promise.all(Array.from({ length: 10 }, () => repo.settle(p.id, ['settling', 'unknown'], '0xtx1', true, ledgerEntry(p.id, '0xtx1'))));
    expect(settles.filter(Boolean)).toHaveLength(1);
    expect((await repo.ledger()).filter((r) => r.reference === p.id)).toHaveLength(1);
    // The same transaction cannot pay for a second payment.
    const q = payment({ transaction_hash: '0xtx1', flow: 'receipt' });
    expect(await repo.reserve(q)).toMatchObject({ reserved: false });
    expect(await repo.markServed(p.id)).toBe(false); // served at settle already
  });

  it('releases only what was never charged, and finds undecided payments', async () => {
    const p = payment();
    await repo.reserve(p);
    expect(await repo.release(p.id, ['unknown'])).toBe(false);
    expect(await repo.transition(p.id, ['reserved'], 'unknown', { lastError: 'timeout' })).toBe(true);
    expect((await repo.undecided(new Date().toISOString(), 100)).map((r) => r.id)).toContain(p.id);
    expect(await repo.release(p.id, ['unknown'])).toBe(true);
    expect(await repo.get(p.id)).toBeUndefined();
  });

  it('keeps one challenge secret per deployment, whoever creates it first', async () => {
    const secrets = await Promise.all(Array.from({ length: 10 }, (_, i) => repo.secret('x402_test', () => `secret-${i}`)));
    expect(new Set(secrets).size).toBe(1);
  });
});
