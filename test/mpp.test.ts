import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../core/config.js';
import { publicKeyFromSeed } from '../payments/crypto/ed25519.js';
import { toBase64Url } from '../payments/crypto/encoding.js';
import {
  buildEnvelope,
  encodeEnvelope,
  equalShares,
  mppParties,
  mppPayerId,
  signEnvelope,
  type Envelope,
  type PartySigner,
} from '../payments/modes/mpp/index.js';
import { requestFingerprint } from '../payments/paid-call.js';
import { signedReceipts, verifyReceipt } from '../payments/receipts/index.js';
import { parseJwks } from '../payments/crypto/index.js';
import type { Tenant } from '../storage/schema.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { storageBackends } from './support/backends.js';

const { backends, stop } = storageBackends('mpp');
afterAll(stop);

/** What inject addresses: Fastify's light-my-request sends Host localhost:80 over http. */
const SEARCH_URL = 'http://localhost:80/v1/search';

interface Party {
  name: string;
  tenant: Tenant;
  seed: Uint8Array;
  kid: string;
}

interface Receipt {
  party: string;
  credits: number;
  share: string;
}

describe.each(backends)('MPP on $name', (backend) => {
  let dir: string;
  let storage: ConfigInput['storage'];
  let api: ApiHarness;
  let partyCount = 0;

  const open = () => startApi(apiTestConfig(dir, { storage, payments: { modes: { mpp: { max_parties: 4 } }, idempotency: { in_progress_timeout_s: 2 } } }));

  /** A tenant with credits and a registered Ed25519 key, as `notary parties add-key` makes it. */
  const party = async (label: string, credits: number, tier = 'bulk'): Promise<Party> => {
    const name = `${label}-${++partyCount}`;
    const tenant = await api.runtime.accounts.createTenant(name, { credits, tier });
    const seed = new Uint8Array(randomBytes(32));
    const { key } = await api.runtime.service(mppParties).addKey(tenant, toBase64Url(publicKeyFromSeed(seed)));
    return { name, tenant, seed, kid: key.kid };
  };

  const signers = (parties: readonly Party[], shares: readonly string[]): PartySigner[] =>
    parties.map((p, i) => ({ party: p.name, seed: p.seed, share: shares[i] ?? '0' }));

  const envelope = (
    body: string,
    parties: readonly PartySigner[],
    options: { totalCredits?: number; url?: string; method?: string; issuedAt?: Date; ttlSeconds?: number } = {},
  ) =>
    buildEnvelope({
      method: options.method ?? 'POST',
      url: options.url ?? SEARCH_URL,
      body,
      totalCredits: options.totalCredits ?? 10,
      parties,
      ...(options.issuedAt ? { issuedAt: options.issuedAt } : {}),
      ...(options.ttlSeconds ? { ttlSeconds: options.ttlSeconds } : {}),
    });

  /** Changes a signed envelope and signs it again with the same keys (a validly signed envelope of another shape). */
  const resign = (signed: Envelope, signersOf: readonly PartySigner[], mutate: (e: Envelope) => void): string => {
    const { authorizations: _a, ...unsigned } = structuredClone(signed);
    mutate(unsigned as Envelope);
    return encodeEnvelope(signEnvelope(unsigned, new Map(signersOf.map((s) => [s.party, s.seed]))));
  };

  const post = (body: string, authorization: string | undefined, headers: Record<string, string> = {}) =>
    api.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }), ...headers },
      payload: body,
    });

  const pay = (body: string, encoded: string, headers: Record<string, string> = {}) => post(body, `MPP envelope=${encoded}`, headers);

  const balances = async (parties: readonly Party[]) => {
    const map = await api.runtime.accounts.balances(parties.map((p) => p.tenant.id));
    return parties.map((p) => map.get(p.tenant.id));
  };
  const ledgerRows = async (parties: readonly Party[]) => (await Promise.all(parties.map((p) => api.runtime.accounts.ledger(p.tenant.id)))).flat();
  const debitsOf = async (p: Party) => (await api.runtime.accounts.ledger(p.tenant.id)).filter((e) => e.delta <= 0 && e.reason !== 'opening balance');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-mpp-'));
    storage = await backend.storage();
    api = await open();
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('three parties pay one search: one receipt each adding up to credits_used, facts, each debited its part with the request id', async () => {
    const [a, b, c] = [await party('alice', 10), await party('bob', 10), await party('carol', 10)] as [Party, Party, Party];
    const body = JSON.stringify({ query: 'vacuum tables', depth: 2 });
    const shares = ['0.5', '0.25', '0.25'];
    const { encoded } = envelope(body, signers([a, b, c], shares), { totalCredits: 2 });
    const res = await pay(body, encoded);
    expect(res.statusCode, res.body).toBe(200);
    const json = res.json() as { credits_used: number; receipts: Receipt[]; facts: unknown[]; results: unknown[]; rate_limit: unknown };
    expect(json.credits_used).toBe(2);
    // 2 credits by 0.5/0.25/0.25: floors 1, 0, 0; the leftover credit ties between bob and carol and goes to bob.
    expect(json.receipts).toEqual([
      { party: a.name, credits: 1, share: '0.5' },
      { party: b.name, credits: 1, share: '0.25' },
      { party: c.name, credits: 0, share: '0.25' },
    ]);
    expect(json.results.length).toBeGreaterThan(0);
    expect(json.facts).toEqual(json.results);
    expect(json.rate_limit).toMatchObject({ limit: 1000 });
    expect(await balances([a, b, c])).toEqual([9, 9, 10]);
    const requestId = res.headers['x-request-id'];
    for (const [p, credits] of [[a, 1], [b, 1], [c, 0]] as const) {
      const rows = await debitsOf(p);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ delta: 0 - credits, request_id: requestId, idempotency_key: null });
      expect(rows[0]?.reason).toMatch(/^search depth 2 \(MPP env_[0-9A-Za-z]{20}, share 0\.(5|25)\)$/);
    }
  });

  it('refuses every failure with its own 4xx code, naming the party at fault, charging nobody and running no search', async () => {
    const [a, b, c] = [await party('fa', 20), await party('fb', 20), await party('fc', 20)] as [Party, Party, Party];
    const poor = await party('poor', 0);
    const revoked = await party('revoked', 20);
    await api.runtime.service(mppParties).revokeKey(revoked.kid);
    const extra = [await party('fd', 20), await party('fe', 20)];
    const everyone = [a, b, c, poor, revoked, ...extra];
    const body = JSON.stringify({ query: 'analyze', depth: 1 });
    const deep = JSON.stringify({ query: 'analyze', depth: 2 });
    const three = signers([a, b, c], ['0.5', '0.3', '0.2']);
    const good = envelope(body, three);
    const stranger: PartySigner = { party: 'nobody-at-all', seed: new Uint8Array(randomBytes(32)), share: '0.2' };
    const unregisteredKey: PartySigner = { party: c.name, seed: new Uint8Array(randomBytes(32)), share: '0.2' };
    const othersKey: PartySigner = { party: c.name, seed: b.seed, share: '0.2' };
    const past = new Date(Date.now() - 600_000);
    const future = new Date(Date.now() + 600_000);
    const jsonEnvelope = (text: string) => toBase64Url(new TextEncoder().encode(text));
    const tampered = structuredClone(good.envelope);
    [tampered.authorizations[0], tampered.authorizations[1]] = [
      { party: a.name, sig: tampered.authorizations[1]?.sig ?? '' },
      { party: b.name, sig: tampered.authorizations[0]?.sig ?? '' },
    ];
    const missing = structuredClone(good.envelope);
    missing.authorizations.pop();

    const cases: Array<{ name: string; send: () => Promise<LightMyRequestResponse>; status: number; code: string; party?: string }> = [
      { name: 'bad base64', send: () => pay(body, 'not*base64'), status: 400, code: 'mpp_envelope_encoding' },
      { name: 'bad JSON', send: () => pay(body, jsonEnvelope('{"v":1,')), status: 400, code: 'mpp_envelope_json' },
      { name: 'no envelope parameter', send: () => post(body, 'MPP'), status: 400, code: 'mpp_envelope_invalid' },
      { name: 'unknown version', send: () => pay(body, resign(good.envelope, three, (e) => ((e as unknown as { v: number }).v = 2))), status: 400, code: 'mpp_version_unsupported' },
      { name: 'unknown party', send: () => pay(body, envelope(body, [...signers([a, b], ['0.5', '0.3']), stranger]).encoded), status: 401, code: 'mpp_unknown_party', party: 'nobody-at-all' },
      { name: 'unknown kid', send: () => pay(body, envelope(body, [...signers([a, b], ['0.5', '0.3']), unregisteredKey]).encoded), status: 401, code: 'mpp_unknown_key', party: c.name },
      { name: "another party's kid", send: () => pay(body, envelope(body, [...signers([a, b], ['0.5', '0.3']), othersKey]).encoded), status: 401, code: 'mpp_unknown_key', party: c.name },
      { name: 'revoked key', send: () => pay(body, envelope(body, signers([a, b, revoked], ['0.5', '0.3', '0.2'])).encoded), status: 401, code: 'mpp_key_revoked', party: revoked.name },
      { name: 'bad signature', send: () => pay(body, encodeEnvelope(tampered)), status: 401, code: 'mpp_bad_signature', party: a.name },
      { name: 'missing authorization', send: () => pay(body, encodeEnvelope(missing)), status: 401, code: 'mpp_missing_authorization', party: c.name },
      {
        name: 'duplicate party',
        send: () => pay(body, resign(good.envelope, three, (e) => e.parties.push({ ...(e.parties[0] as Envelope['parties'][number]), share: '0' }))),
        status: 400,
        code: 'mpp_duplicate_party',
        party: a.name,
      },
      { name: 'malformed share', send: () => pay(body, envelope(body, signers([a, b, c], ['0.5', '0.3', '.2'])).encoded), status: 400, code: 'mpp_share_malformed', party: c.name },
      { name: 'shares not summing to 1', send: () => pay(body, envelope(body, signers([a, b, c], ['0.5', '0.3', '0.199999'])).encoded), status: 400, code: 'mpp_shares_not_one' },
      { name: 'too many parties', send: () => pay(body, envelope(body, signers([a, b, c, ...extra], equalShares(5))).encoded), status: 400, code: 'mpp_too_many_parties' },
      { name: 'total below the price (depth 2 covered as depth 1)', send: () => pay(deep, envelope(deep, three, { totalCredits: 1 }).encoded), status: 402, code: 'mpp_total_below_price' },
      { name: 'expired', send: () => pay(body, envelope(body, three, { issuedAt: past, ttlSeconds: 60 }).encoded), status: 401, code: 'mpp_envelope_expired' },
      { name: 'issued in the future', send: () => pay(body, envelope(body, three, { issuedAt: future }).encoded), status: 401, code: 'mpp_issued_in_future' },
      {
        name: 'expiring more than 5 minutes ahead',
        send: () => pay(body, resign(good.envelope, three, (e) => (e.expires = new Date(Date.parse(e.issued_at) + 301_000).toISOString().replace(/\.\d{3}Z$/, 'Z')))),
        status: 401,
        code: 'mpp_expiry_too_far',
      },
      { name: 'method not matching', send: () => pay(body, envelope(body, three, { method: 'PUT' }).encoded), status: 401, code: 'mpp_method_mismatch' },
      { name: 'path not matching', send: () => pay(body, envelope(body, three, { url: 'http://localhost:80/v1/extract' }).encoded), status: 401, code: 'mpp_url_mismatch' },
      { name: 'query not matching', send: () => pay(body, envelope(body, three, { url: `${SEARCH_URL}?depth=9` }).encoded), status: 401, code: 'mpp_url_mismatch' },
      { name: 'body digest not matching', send: () => pay(JSON.stringify({ query: 'analyze', depth: 1, }) + ' ', good.encoded), status: 401, code: 'mpp_body_digest_mismatch' },
      { name: 'a party short of credits', send: () => pay(body, envelope(body, signers([a, b, poor], ['0.1', '0.1', '0.8'])).encoded), status: 402, code: 'insufficient_credits', party: poor.name },
    ];

    for (const failure of cases) {
      const before = await balances(everyone);
      const rowsBefore = (await ledgerRows(everyone)).length;
      const searchesBefore = api.search.calls.length;
      const res = await failure.send();
      expect(res.statusCode, `${failure.name}: ${res.body}`).toBe(failure.status);
      expect(res.headers['content-type'], failure.name).toMatch(/^application\/problem\+json/);
      const problem = res.json() as Record<string, unknown>;
      expect(problem['code'], failure.name).toBe(failure.code);
      expect(problem['party'], failure.name).toBe(failure.party);
      expect(problem['retryable'], failure.name).toBe(false);
      if (failure.status === 401) expect(res.headers['www-authenticate'], failure.name).toMatch(/^MPP realm="notary"/);
      expect(await balances(everyone), failure.name).toEqual(before);
      expect((await ledgerRows(everyone)).length, failure.name).toBe(rowsBefore);
      expect(api.search.calls.length, failure.name).toBe(searchesBefore);
    }
    expect(new Set(cases.map((c) => c.code)).size).toBe(cases.length - 2);

    // A replayed nonce: the first use pays, the second is refused and charges nothing.
    const first = await pay(body, good.encoded);
    expect(first.statusCode, first.body).toBe(200);
    const paid = await balances(everyone);
    const replay = await pay(body, good.encoded);
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toMatchObject({ code: 'mpp_nonce_replayed' });
    expect(await balances(everyone)).toEqual(paid);
  });

  it('refuses a price above total_credits with the challenges, and serves the same search with an envelope that covers it', async () => {
    const [a, b] = [await party('da', 10), await party('db', 10)] as [Party, Party];
    const body = JSON.stringify({ query: 'indexes', depth: 3 });
    const short = await pay(body, envelope(body, signers([a, b], ['0.5', '0.5']), { totalCredits: 2 }).encoded);
    expect(short.statusCode).toBe(402);
    expect(short.json()).toMatchObject({ code: 'mpp_total_below_price', required_credits: 4, total_credits: 2, price: { credits: 4 }, challenges: { mpp: { total_credits: 4 } } });
    expect(short.headers['www-authenticate']).toContain('MPP realm="notary", credits=4, max_parties=4, max_lifetime=300, error="mpp_total_below_price"');
    const ok = await pay(body, envelope(body, signers([a, b], ['0.5', '0.5']), { totalCredits: 4 }).encoded);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ credits_used: 4, receipts: [{ credits: 2 }, { credits: 2 }] });
    expect(await balances([a, b])).toEqual([8, 8]);
  });

  it('X-Notary-Sign: required adds one signed receipt that covers the parties\' shares, through the same paid-call path', async () => {
    const [a, b, c] = [await party('sa', 10), await party('sb', 10), await party('sc', 0)] as [Party, Party, Party];
    const body = JSON.stringify({ query: 'vacuum tables', depth: 2 });
    const res = await pay(body, envelope(body, signers([a, b], ['0.7', '0.3']), { totalCredits: 2 }).encoded, { 'x-notary-sign': 'required' });
    expect(res.statusCode, res.body).toBe(200);
    const json = res.json() as Record<string, unknown> & { receipts: Receipt[]; notary_receipt: Record<string, unknown> };
    expect(json.receipts).toEqual([
      { party: a.name, credits: 1, share: '0.7' },
      { party: b.name, credits: 1, share: '0.3' },
    ]);
    expect(json.notary_receipt).toMatchObject({ claim: 'search_call_consumed', credits: 2, request_id: res.headers['x-request-id'] });
    const { keyring, log } = await api.runtime.service(signedReceipts);
    const keys = parseJwks(keyring.jwks());
    const verified = verifyReceipt({ receipt: json.notary_receipt, keys, responseBody: json, requestBody: new TextEncoder().encode(body) });
    expect(verified.checks.filter((check) => check.ok !== true)).toEqual([]);
    // Any change to a party's receipt breaks it: the signature covers the digest of the whole body.
    for (const alter of [
      (r: Receipt[]) => ((r[0] as Receipt).credits = 2),
      (r: Receipt[]) => ((r[1] as Receipt).share = '0.4'),
      (r: Receipt[]) => ((r[0] as Receipt).party = b.name),
      (r: Receipt[]) => r.pop(),
    ]) {
      const altered = structuredClone(json);
      alter(altered.receipts);
      const check = verifyReceipt({ receipt: json.notary_receipt, keys, responseBody: altered }).checks.find((x) => x.name === 'response_digest');
      expect(check?.ok).toBe(false);
    }
    expect(await log.entriesByRequestId(String(res.headers['x-request-id']))).toHaveLength(1);
    // A refused MPP call gets no receipt and no log entry.
    const refused = await pay(body, envelope(body, signers([a, c], ['0.5', '0.5'])).encoded, { 'x-notary-sign': 'required' });
    expect(refused.statusCode).toBe(402);
    expect(refused.json()).not.toHaveProperty('notary_receipt');
    expect(await log.entriesByRequestId(String(refused.headers['x-request-id']))).toHaveLength(0);
  });

  it('honours Idempotency-Key: the same envelope and a freshly signed one of the same parties replay; other parties do not share keys', async () => {
    const [a, b] = [await party('ia', 10), await party('ib', 10)] as [Party, Party];
    const body = JSON.stringify({ query: 'autovacuum', depth: 2 });
    const pair = signers([a, b], ['0.5', '0.5']);
    const headers = { 'idempotency-key': '"mpp-call-1"' };
    const first = await pay(body, envelope(body, pair).encoded, headers);
    expect(first.statusCode, first.body).toBe(200);
    const sameEnvelopeAgain = await pay(body, envelope(body, pair).encoded, headers);
    expect(sameEnvelopeAgain.statusCode).toBe(200);
    expect(sameEnvelopeAgain.headers['idempotency-replayed']).toBe('true');
    expect(sameEnvelopeAgain.body).toBe(first.body);
    // The parties listed in another order are the same payer.
    const reordered = await pay(body, envelope(body, [...pair].reverse()).encoded, headers);
    expect(reordered.headers['idempotency-replayed']).toBe('true');
    expect(await balances([a, b])).toEqual([9, 9]);
    expect(await debitsOf(a)).toHaveLength(1);

    const other = await party('ic', 10);
    const otherPair = signers([a, other], ['0.5', '0.5']);
    const elsewhere = await pay(body, envelope(body, otherPair).encoded, headers);
    expect(elsewhere.statusCode).toBe(200);
    expect(elsewhere.headers['idempotency-replayed']).toBeUndefined();
    expect(await balances([a, b, other])).toEqual([8, 9, 9]);
  });

  it('a call whose process died after the charge: the retry with the same envelope and key is served without a second debit', async () => {
    const [a, b] = [await party('ca', 10), await party('cb', 10)] as [Party, Party];
    const body = JSON.stringify({ query: 'vacuum', depth: 1 });
    const { encoded, envelope: env } = envelope(body, signers([a, b], ['0.5', '0.5']));
    const payerId = mppPayerId([a.tenant.id, b.tenant.id]);
    const fingerprint = requestFingerprint({ method: 'POST', path: '/v1/search', url: '', headers: {}, clientAddress: '', requestId: '' }, Buffer.from(body));
    // The state a crash between the charge and the stored response leaves: a running record, the debits, the nonce.
    await api.runtime.idempotency.begin({ scope: payerId, key: 'k-crash', fingerprint, requestId: 'req_crashed', now: Date.now(), leaseMs: 2000 });
    const charged = await api.runtime.accounts.debitMany(
      {
        debits: [
          { tenantId: a.tenant.id, credits: 1, reason: 'search depth 1' },
          { tenantId: b.tenant.id, credits: 0, reason: 'search depth 1' },
        ],
        requestId: 'req_crashed',
        idempotencyKey: `${payerId}:k-crash`,
      },
      async (trx) => {
        await api.runtime.service(mppParties).repository.claimNonce(trx, { nonce: env.nonce, env_id: env.env_id, request_id: 'req_crashed', expires_at: new Date(Date.parse(env.expires)).toISOString() });
      },
    );
    expect(charged.ok).toBe(true);
    const retry = () => pay(body, encoded, { 'idempotency-key': 'k-crash' });
    expect((await retry()).statusCode).toBe(409);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const served = await retry();
    expect(served.statusCode, served.body).toBe(200);
    expect(await balances([a, b])).toEqual([9, 10]);
    expect(await debitsOf(a)).toHaveLength(1);
    // Without the key the used nonce is a replay.
    const bare = await pay(body, encoded);
    expect(bare.json()).toMatchObject({ code: 'mpp_nonce_replayed' });
  });

  it('applies each party its own rate limit: a party of a tiny tier stops the call when it runs out, charging no one', async () => {
    const [a, b] = [await party('ra', 100), await party('rb', 100, 'tiny')] as [Party, Party];
    const body = JSON.stringify({ query: 'vacuum', depth: 1 });
    const pair = signers([a, b], ['0.5', '0.5']);
    const first = await pay(body, envelope(body, pair).encoded);
    expect(first.statusCode, first.body).toBe(200);
    // The body's rate_limit shows the tightest of the parties' limits: the tiny tier's burst of 2.
    expect(first.json()).toMatchObject({ rate_limit: { limit: 2, remaining: 1 } });
    expect((await pay(body, envelope(body, pair).encoded)).statusCode).toBe(200);
    const limited = await pay(body, envelope(body, pair).encoded);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'rate_limited' });
    expect(limited.headers['retry-after']).toBeDefined();
    // Two calls of 1 credit split 0.5/0.5: the tie goes to the party listed first each time; the refused call took nothing.
    expect(await balances([a, b])).toEqual([98, 100]);
    // The other party is not limited by its partner's tier when it pays with someone else.
    const fresh = await party('rc', 100);
    const res = await pay(body, envelope(body, signers([a, fresh], ['0.5', '0.5'])).encoded);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ rate_limit: { limit: 1000 } });
  });

  it('100 concurrent calls over the same three parties whose balances cover only some: no balance below zero, debits equal credits_used, receipts equal debits', async () => {
    const trio = [await party('xa', 45), await party('xb', 30), await party('xc', 38)];
    const shareSets = [
      ['0.5', '0.3', '0.2'],
      ['0.333334', '0.333333', '0.333333'],
      ['0.2', '0.2', '0.6'],
      ['0.000001', '0.5', '0.499999'],
      ['1', '0', '0'],
    ];
    const calls = Array.from({ length: 100 }, (_, i) => {
      const body = JSON.stringify({ query: ['vacuum', 'analyze', 'indexes', 'autovacuum'][i % 4], depth: 1 + (i % 3) });
      const shares = shareSets[i % shareSets.length] as string[];
      return { body, encoded: envelope(body, signers(trio, shares)).encoded };
    });
    const responses = await Promise.all(calls.map((c) => pay(c.body, c.encoded)));
    const served = responses.filter((r) => r.statusCode === 200);
    const refused = responses.filter((r) => r.statusCode !== 200);
    expect(served.length).toBeGreaterThan(10);
    expect(refused.length).toBeGreaterThan(10);
    for (const r of refused) {
      expect(r.statusCode, r.body).toBe(402);
      const problem = r.json() as { code: string; party: string };
      expect(problem.code).toBe('insufficient_credits');
      expect(trio.map((p) => p.name)).toContain(problem.party);
    }
    const final = await balances(trio);
    for (const balance of final) expect(balance).toBeGreaterThanOrEqual(0);

    const creditsUsed = served.reduce((sum, r) => sum + (r.json() as { credits_used: number }).credits_used, 0);
    const rows = (await ledgerRows(trio)).filter((e) => e.reason !== 'opening balance');
    expect(0 - rows.reduce((sum, e) => sum + e.delta, 0)).toBe(creditsUsed);
    expect(45 + 30 + 38 - (final as number[]).reduce((a, b) => a + b, 0)).toBe(creditsUsed);

    const servedIds = new Set(served.map((r) => r.headers['x-request-id']));
    for (const row of rows) expect(servedIds.has(row.request_id ?? '')).toBe(true);
    for (const [i, p] of trio.entries()) {
      let receipted = 0;
      for (const r of served) {
        const body = r.json() as { credits_used: number; receipts: Receipt[] };
        expect(body.receipts.reduce((sum, x) => sum + x.credits, 0)).toBe(body.credits_used);
        const mine = body.receipts.find((x) => x.party === p.name);
        expect(mine).toBeDefined();
        receipted += mine?.credits ?? 0;
        const row = rows.find((e) => e.tenant_id === p.tenant.id && e.request_id === r.headers['x-request-id']);
        expect((row?.delta ?? 1) + (mine?.credits ?? 0)).toBe(0);
      }
      const debited = 0 - rows.filter((e) => e.tenant_id === p.tenant.id).reduce((sum, e) => sum + e.delta, 0);
      expect(receipted, `party ${i}`).toBe(debited);
      expect(debited, `party ${i}`).toBe([45, 30, 38][i]! - (final[i] ?? 0));
    }
  });
});
