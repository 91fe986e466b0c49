import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../plugins.js'; // the registered plug-ins: their migrations (party keys) and codes
import type { z } from 'zod';
import { configSchema } from '../../../core/config.js';
import { NotaryError } from '../../../core/errors.js';
import { migrateToLatest, openSqlite, type Storage } from '../../../storage/db.js';
import { Accounts } from '../../accounts.js';
import type { PaymentRequest } from '../../mode.js';
import { Pricing } from '../../pricing.js';
import { publicKeyFromSeed } from '../../crypto/ed25519.js';
import { toBase64Url } from '../../crypto/encoding.js';
import { buildEnvelope } from './envelope.js';
import { mppModeSchema } from './config.js';
import { mppMode } from './mode.js';
import { Parties } from './parties.js';

const URL_OF_CALL = 'https://search.example.org/v1/search';
const BODY = '{"query":"vacuum","depth":1}';
const T0 = Date.parse('2026-11-23T10:00:00Z');

describe('MPP mode', () => {
  let dir: string;
  let storage: Storage;
  let accounts: Accounts;
  let parties: Parties;
  let clock = T0;
  // Depth 2 priced above depth 1 (the default prices them alike), so the challenge shows the price it was given.
  const pricing = new Pricing(configSchema.parse({ pricing: { search: { credits_by_depth: [1, 2, 4] } } }).pricing);
  const seeds = { alice: new Uint8Array(32).fill(7), bob: new Uint8Array(32).fill(8) };

  const modeWith = (mpp: z.input<typeof mppModeSchema> = {}) => mppMode({ config: mppModeSchema.parse(mpp), accounts, parties, now: () => clock });
  const request = (encoded: string, url = URL_OF_CALL, headers: Record<string, string[]> = {}): PaymentRequest => ({
    method: 'POST',
    path: new URL(url).pathname,
    url,
    headers: { authorization: [`MPP envelope=${encoded}`], ...headers },
    clientAddress: '127.0.0.1',
    requestId: 'req_mode_test',
  });
  const envelope = (options: { issuedAt?: Date; url?: string; ttlSeconds?: number } = {}) =>
    buildEnvelope({
      method: 'POST',
      url: options.url ?? URL_OF_CALL,
      body: BODY,
      totalCredits: 1,
      parties: [
        { party: 'alice', share: '0.5', seed: seeds.alice },
        { party: 'bob', share: '0.5', seed: seeds.bob },
      ],
      issuedAt: options.issuedAt ?? new Date(clock),
      ...(options.ttlSeconds ? { ttlSeconds: options.ttlSeconds } : {}),
    }).encoded;
  const codeOf = async (mode: ReturnType<typeof modeWith>, call: PaymentRequest): Promise<string> => {
    try {
      const payer = await mode.identify(call)?.authenticate();
      const authorization = await payer?.authorize({ request: call, rawBody: new TextEncoder().encode(BODY), price: pricing.price({ operation: 'search', depth: 1 }) });
      if (!authorization) return 'not recognised';
      await authorization.settle({ requestId: call.requestId, idempotencyKey: null });
      return 'paid';
    } catch (err) {
      if (err instanceof NotaryError) return err.code;
      throw err;
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-mpp-mode-'));
    storage = openSqlite(path.join(dir, 'notary.sqlite'));
    await migrateToLatest(storage);
    accounts = new Accounts(storage.db);
    parties = new Parties(storage.db);
    for (const [name, seed] of Object.entries(seeds)) {
      const tenant = await accounts.createTenant(name, { credits: 1000 });
      await parties.addKey(tenant, toBase64Url(publicKeyFromSeed(seed)));
    }
  });
  afterAll(async () => {
    await storage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ignores other schemes and reads the MPP one case-insensitively', () => {
    const mode = modeWith();
    expect(mode.identify({ ...request('x'), headers: { authorization: ['Bearer sk_live_abc'] } })).toBeNull();
    expect(mode.identify({ ...request('x'), headers: {} })).toBeNull();
    expect(mode.identify({ ...request(envelope()), headers: { authorization: [`mpp envelope=${envelope()}`] } })).not.toBeNull();
    expect(() => mode.identify({ ...request('x'), headers: { authorization: ['MPP envelope=a', 'MPP envelope=b'] } })).toThrow(/sent 2 times/);
  });

  it('accepts the clock skew at both ends and refuses one second past it', async () => {
    const mode = modeWith({ clock_skew_s: 30 });
    clock = T0;
    const issuedAhead = envelope({ issuedAt: new Date(T0 + 30_000) });
    const issuedTooFar = envelope({ issuedAt: new Date(T0 + 31_000) });
    expect(await codeOf(mode, request(issuedAhead))).toBe('paid');
    expect(await codeOf(mode, request(issuedTooFar))).toBe('mpp_issued_in_future');
    const shortLived = envelope({ issuedAt: new Date(T0), ttlSeconds: 10 });
    clock = T0 + 40_000;
    expect(await codeOf(mode, request(shortLived))).toBe('paid');
    const other = envelope({ issuedAt: new Date(T0), ttlSeconds: 10 });
    clock = T0 + 41_000;
    expect(await codeOf(mode, request(other))).toBe('mpp_envelope_expired');
    clock = T0;
  });

  it('takes a shorter configured lifetime', async () => {
    clock = T0;
    expect(await codeOf(modeWith({ max_lifetime_s: 60 }), request(envelope({ ttlSeconds: 61 })))).toBe('mpp_expiry_too_far');
    expect(await codeOf(modeWith({ max_lifetime_s: 60 }), request(envelope({ ttlSeconds: 60 })))).toBe('paid');
  });

  it('binds path and query always, and the origin when origins are configured', async () => {
    clock = T0;
    const open = modeWith();
    // Behind a proxy the service sees another origin: by default only the path and query are bound.
    expect(await codeOf(open, request(envelope(), 'http://10.0.0.5:8080/v1/search'))).toBe('paid');
    const bound = modeWith({ origins: ['https://search.example.org/'] });
    expect(await codeOf(bound, request(envelope()))).toBe('paid');
    expect(await codeOf(bound, request(envelope({ url: 'https://evil.example.net/v1/search' }), 'https://evil.example.net/v1/search'))).toBe('mpp_url_mismatch');
    expect(await codeOf(open, request(envelope(), `${URL_OF_CALL}?x=1`))).toBe('mpp_url_mismatch');
  });

  it('offers a 401 challenge with the price and the limits', async () => {
    const mode = modeWith({ max_parties: 5, max_lifetime_s: 120 });
    const challenge = await mode.challenge({ request: request('x'), price: pricing.price({ operation: 'search', depth: 2 }) });
    expect(challenge).toEqual({
      status: 401,
      wwwAuthenticate: 'MPP realm="notary", credits=2, max_parties=5, max_lifetime=120',
      hint: 'Authorization: MPP envelope=<envelope signed by every paying party>',
      body: { total_credits: 2, max_parties: 5, max_lifetime_s: 120 },
    });
    const failed = await mode.challenge({ request: request('x'), error: new NotaryError('mpp_bad_signature') });
    expect(failed?.wwwAuthenticate).toBe('MPP realm="notary", max_parties=5, max_lifetime=120, error="mpp_bad_signature"');
  });

  it('forgets nonces of expired envelopes, and keeps the others', async () => {
    clock = T0;
    const db = storage.db;
    await db.deleteFrom('mpp_nonces').execute();
    const mode = modeWith();
    expect(await codeOf(mode, request(envelope({ ttlSeconds: 10 })))).toBe('paid');
    expect(await codeOf(mode, request(envelope({ ttlSeconds: 300 })))).toBe('paid');
    expect((await db.selectFrom('mpp_nonces').selectAll().execute()).length).toBe(2);
    // A minute later the next charge prunes: the 10 s envelope (plus 30 s of skew) is gone, the 300 s one stays.
    clock = T0 + 61_000;
    expect(await codeOf(mode, request(envelope({ ttlSeconds: 60 })))).toBe('paid');
    const left = await db.selectFrom('mpp_nonces').select('expires_at').orderBy('expires_at').execute();
    expect(left.map((r) => r.expires_at)).toEqual([new Date(T0 + 61_000 + 60_000).toISOString(), new Date(T0 + 300_000).toISOString()]);
    clock = T0;
  });

  it('registers keys once per tenant, refuses them for a second tenant or after revocation', async () => {
    const carol = await accounts.createTenant('carol');
    const dave = await accounts.createTenant('dave');
    const key = toBase64Url(publicKeyFromSeed(new Uint8Array(32).fill(9)));
    const first = await parties.addKey(carol, key, 'laptop');
    expect(first.created).toBe(true);
    expect(first.key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await parties.addKey(carol, key)).created).toBe(false);
    await expect(parties.addKey(dave, key)).rejects.toMatchObject({ code: 'party_key_exists' });
    await parties.revokeKey(first.key.kid);
    await expect(parties.addKey(carol, key)).rejects.toMatchObject({ code: 'party_key_exists' });
    await expect(parties.revokeKey('nope')).rejects.toMatchObject({ code: 'party_key_not_found' });
    for (const bad of ['', 'abc', toBase64Url(new Uint8Array(31)), toBase64Url(new Uint8Array(33)), `${key}!`]) {
      await expect(parties.addKey(carol, bad)).rejects.toMatchObject({ code: 'invalid_public_key' });
    }
    const listed = await parties.listKeys(await accounts.listTenants(), carol.id);
    expect(listed).toEqual([expect.objectContaining({ kid: first.key.kid, tenant: 'carol', name: 'laptop', revoked_at: expect.any(String) })]);
  });

  it('limits a call to the collections every party key may read', async () => {
    const mode = modeWith();
    clock = T0;
    const limited = { carol: new Uint8Array(32).fill(21), dave: new Uint8Array(32).fill(22) };
    await parties.addKey(await accounts.createTenant('cara', { credits: 10 }), toBase64Url(publicKeyFromSeed(limited.carol)), undefined, ['col_a']);
    await parties.addKey(await accounts.createTenant('dan', { credits: 10 }), toBase64Url(publicKeyFromSeed(limited.dave)), undefined, ['col_a', 'col_b']);
    const payerOf = async (members: Array<{ party: string; seed: Uint8Array }>) => {
      const encoded = buildEnvelope({
        method: 'POST',
        url: URL_OF_CALL,
        body: BODY,
        totalCredits: 1,
        parties: members.map((m, i) => ({ ...m, share: i === 0 ? '1' : '0' })),
        issuedAt: new Date(clock),
      }).encoded;
      return mode.identify(request(encoded))?.authenticate();
    };
    expect((await payerOf([{ party: 'cara', seed: limited.carol }, { party: 'dan', seed: limited.dave }]))?.collections).toEqual(['col_a']);
    expect((await payerOf([{ party: 'dan', seed: limited.dave }, { party: 'alice', seed: seeds.alice }]))?.collections).toEqual(['col_a', 'col_b']);
    // No party limited: every collection (no list).
    expect((await payerOf([{ party: 'alice', seed: seeds.alice }, { party: 'bob', seed: seeds.bob }]))?.collections).toBeUndefined();
    // A tenant limited by the operator narrows every party key of it, an unlimited one included.
    const fran = { seed: new Uint8Array(32).fill(24) };
    const franTenant = await accounts.createTenant('fran', { credits: 10 });
    await parties.addKey(franTenant, toBase64Url(publicKeyFromSeed(fran.seed)));
    expect((await payerOf([{ party: 'fran', seed: fran.seed }]))?.collections).toBeUndefined();
    await accounts.updateTenant(franTenant.id, { collections: ['col_b'] });
    expect((await payerOf([{ party: 'fran', seed: fran.seed }]))?.collections).toEqual(['col_b']);
    expect((await payerOf([{ party: 'fran', seed: fran.seed }, { party: 'cara', seed: limited.carol }]))?.collections).toEqual([]);
    await expect(parties.addKey(await accounts.createTenant('erin'), toBase64Url(publicKeyFromSeed(new Uint8Array(32).fill(23))), undefined, [])).rejects.toThrow(/at least one/);
  });
});
