import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../plugins.js'; // the registered plug-ins: their migrations (party keys) and codes
import { configSchema } from '../../../core/config.js';
import { NotaryError } from '../../../core/errors.js';
import { migrateToLatest, openSqlite, type Storage } from '../../../storage/db.js';
import { Accounts } from '../../accounts.js';
import type { PaymentRequest } from '../../mode.js';
import { Pricing, type Price } from '../../pricing.js';
import { publicKeyFromSeed } from '../../crypto/ed25519.js';
import { toBase64Url, toHex } from '../../crypto/encoding.js';
import { canonicalJson } from '../../crypto/jcs.js';
import { encodeEnvelope, envelopeSigningInput, kidOfSeed, signEnvelope, type Envelope, type UnsignedEnvelope } from './envelope.js';
import { mppModeSchema } from './config.js';
import { mppMode } from './mode.js';
import { Parties } from './parties.js';
import { parseShare, splitCredits } from './shares.js';

const vectorsDir = path.resolve(import.meta.dirname, '../../../spec/vectors');
const load = <T>(name: string): T => JSON.parse(readFileSync(path.join(vectorsDir, name), 'utf8')) as T;

interface SplitVectors {
  cases: Array<{ name: string; total: number; shares: string[]; credits: number[] }>;
}

interface VectorRequest {
  method: string;
  url: string;
  body: string;
}

interface EnvelopeVectors {
  signing_prefix: string;
  valid_at: string;
  clock_skew_s: number;
  max_lifetime_s: number;
  cases: Array<{
    name: string;
    request: VectorRequest;
    price_credits: number;
    parties: Array<{ party: string; seed_hex: string; public_key: string; kid: string; share: string }>;
    unsigned: UnsignedEnvelope;
    jcs: string;
    signing_input_hex: string;
    envelope: Envelope;
    encoded: string;
    receipts: Array<{ party: string; credits: number; share: string }>;
  }>;
  invalid: Array<{ name: string; encoded: string; request: VectorRequest; price_credits: number; now: string; code: string; party?: string }>;
}

const splits = load<SplitVectors>('mpp-splits.json');
const envelopes = load<EnvelopeVectors>('mpp-envelopes.json');
const seedOf = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));

describe('MPP split vectors (spec/vectors/mpp-splits.json)', () => {
  it('covers the cases the issue names', () => {
    const names = splits.cases.map((c) => c.name).join('\n');
    for (const named of [/1\/3-1\/3-1\/3 of 1 credit/, /7 parties/, /0\.000001/, /1 credit among 3/, /tie/i]) expect(names).toMatch(named);
  });

  it.each(splits.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const parts = splitCredits(c.total, c.shares.map((s) => parseShare(s) ?? -1n));
    expect(parts).toEqual(c.credits);
    expect(parts.reduce((a, b) => a + b, 0)).toBe(c.total);
  });
});

describe('MPP envelope vectors (spec/vectors/mpp-envelopes.json)', () => {
  let dir: string;
  let storage: Storage;
  let accounts: Accounts;
  let parties: Parties;
  let clock = Date.parse(envelopes.valid_at);
  const pricing = new Pricing(configSchema.parse({}).pricing);
  const mode = () =>
    mppMode({
      config: mppModeSchema.parse({ clock_skew_s: envelopes.clock_skew_s, max_lifetime_s: envelopes.max_lifetime_s }),
      accounts,
      parties,
      now: () => clock,
    });
  const priceOf = (credits: number): Price => ({
    operation: 'search',
    request: { operation: 'search', depth: 1 },
    features: ['search'],
    credits,
    units: 1,
    amount: pricing.amountFor(credits),
    description: 'vector call',
    claim: 'search_call_consumed',
  });
  const requestOf = (r: VectorRequest, encoded: string): PaymentRequest => ({
    method: r.method,
    path: new URL(r.url).pathname,
    url: r.url,
    headers: { authorization: [`MPP envelope=${encoded}`] },
    clientAddress: '127.0.0.1',
    requestId: 'req_vector',
  });

  /** identify -> authenticate -> authorize, as the paid-call gate runs them. */
  const authorize = async (encoded: string, request: VectorRequest, credits: number) => {
    const call = requestOf(request, encoded);
    const credential = mode().identify(call);
    if (!credential) throw new Error('the MPP mode did not recognise its own header');
    const payer = await credential.authenticate();
    return payer.authorize({ request: call, rawBody: new TextEncoder().encode(request.body), price: priceOf(credits) });
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-mpp-vectors-'));
    storage = openSqlite(path.join(dir, 'notary.sqlite'));
    await migrateToLatest(storage);
    accounts = new Accounts(storage.db);
    parties = new Parties(storage.db);
    const keys = new Map(envelopes.cases.flatMap((c) => c.parties).map((p) => [p.party, p.public_key]));
    for (const [name, publicKey] of keys) {
      const tenant = await accounts.createTenant(name, { credits: 100 });
      await parties.addKey(tenant, publicKey);
    }
  });
  afterAll(async () => {
    await storage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(envelopes.cases.map((c) => [c.name, c] as const))('reproduces "%s" byte for byte from its keys', (_name, c) => {
    for (const p of c.parties) {
      const seed = seedOf(p.seed_hex);
      expect(toBase64Url(publicKeyFromSeed(seed))).toBe(p.public_key);
      expect(kidOfSeed(seed)).toBe(p.kid);
    }
    expect(canonicalJson(c.unsigned)).toBe(c.jcs);
    expect(toHex(envelopeSigningInput(c.unsigned))).toBe(c.signing_input_hex);
    expect(Buffer.from(c.signing_input_hex, 'hex').toString('utf8')).toBe(envelopes.signing_prefix + c.jcs);
    // Ed25519 is deterministic: signing again gives the same signatures.
    const signed = signEnvelope(c.unsigned, new Map(c.parties.map((p) => [p.party, seedOf(p.seed_hex)])));
    expect(signed).toEqual(c.envelope);
    expect(encodeEnvelope(signed)).toBe(c.encoded);
  });

  it.each(envelopes.cases.map((c) => [c.name, c] as const))('accepts "%s" and charges each party its receipt', async (_name, c) => {
    clock = Date.parse(envelopes.valid_at);
    const authorization = await authorize(c.encoded, c.request, c.price_credits);
    expect(authorization.members).toEqual({ receipts: c.receipts });
    expect(authorization.facts).toBe(true);
    const tenants = await accounts.listTenants();
    const ids = c.parties.map((p) => tenants.find((t) => t.name === p.party)?.id ?? '');
    const before = await accounts.balances(ids);
    const settled = await authorization.settle({ requestId: `req_${c.encoded.slice(0, 8)}`, idempotencyKey: null });
    expect(settled.creditsUsed).toBe(c.price_credits);
    const after = await accounts.balances(ids);
    for (const [i, id] of ids.entries()) expect((before.get(id) ?? 0) - (after.get(id) ?? 0)).toBe(c.receipts[i]?.credits);
    // The nonce is spent now.
    await expect(authorize(c.encoded, c.request, c.price_credits)).rejects.toMatchObject({ code: 'mpp_nonce_replayed' });
  });

  it.each(envelopes.invalid.map((c) => [c.name, c] as const))('refuses "%s" with its code', async (_name, c) => {
    clock = Date.parse(c.now);
    let error: unknown;
    try {
      await authorize(c.encoded, c.request, c.price_credits);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(NotaryError);
    expect((error as NotaryError).code).toBe(c.code);
    expect((error as NotaryError).extra['party']).toBe(c.party);
  });
});
