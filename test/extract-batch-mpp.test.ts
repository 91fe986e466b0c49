import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicKeyFromSeed } from '../payments/crypto/ed25519.js';
import { parseJwks } from '../payments/crypto/index.js';
import { toBase64Url } from '../payments/crypto/encoding.js';
import { buildEnvelope, mppParties, type PartySigner } from '../payments/modes/mpp/index.js';
import { signedReceipts, verifyReceipt } from '../payments/receipts/index.js';
import type { Tenant } from '../storage/schema.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { startBatchSite, type BatchSite } from './support/batch-site.js';

/**
 * A batch extraction paid by an MPP envelope: the envelope covers the quote (every URL), the parties are debited
 * their shares of what succeeded, in one transaction, and a replay under the Idempotency-Key charges nobody again.
 */
const EXTRACT_URL = 'http://localhost:80/v1/extract';
const PER_URL = 1;

interface Party {
  name: string;
  tenant: Tenant;
  seed: Uint8Array;
}
interface Body {
  results: Array<{ url: string; ok: boolean; problem?: { code: string } }>;
  credits_used: number;
  receipts: Array<{ party: string; credits: number; share: string }>;
  notary_receipt?: Record<string, unknown>;
}

describe('POST /v1/extract with urls, paid with an MPP envelope', () => {
  let dir: string;
  let site: BatchSite;
  let api: ApiHarness;
  let count = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-extract-batch-mpp-'));
    site = await startBatchSite();
    api = await startApi(
      apiTestConfig(dir, {
        payments: { modes: { mpp: { max_parties: 4 } } },
        extract: { allow_private_networks: true, respect_robots_txt: false, render: 'never', connect_timeout_ms: 1_000, total_timeout_ms: 1_500 },
        crawler: { per_host_concurrency: 2, per_host_delay_ms: 0 },
        pricing: { extract: { credits: PER_URL, credits_rendered: 2 } },
      }),
      { withExtract: true },
    );
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await site?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const party = async (label: string, credits: number): Promise<Party> => {
    const name = `${label}-${++count}`;
    const tenant = await api.runtime.accounts.createTenant(name, { credits, tier: 'bulk' });
    const seed = new Uint8Array(randomBytes(32));
    await api.runtime.service(mppParties).addKey(tenant, toBase64Url(publicKeyFromSeed(seed)));
    return { name, tenant, seed };
  };
  const signers = (parties: readonly Party[], shares: readonly string[]): PartySigner[] => parties.map((p, i) => ({ party: p.name, seed: p.seed, share: shares[i] ?? '0' }));
  const pay = (body: string, parties: PartySigner[], totalCredits: number, headers: Record<string, string> = {}) =>
    api.app.inject({
      method: 'POST',
      url: '/v1/extract',
      headers: {
        'content-type': 'application/json',
        authorization: `MPP envelope=${buildEnvelope({ method: 'POST', url: EXTRACT_URL, body, totalCredits, parties }).encoded}`,
        ...headers,
      },
      payload: body,
    });
  const balances = async (parties: readonly Party[]) => {
    const map = await api.runtime.accounts.balances(parties.map((p) => p.tenant.id));
    return parties.map((p) => map.get(p.tenant.id));
  };
  const debitsOf = async (p: Party) => (await api.runtime.accounts.ledger(p.tenant.id)).filter((e) => e.delta < 0);

  it('20 URLs, 6 failing: the envelope covers 20 credits, the parties pay their shares of the 14 successes; a replay with a fresh envelope charges nobody', async () => {
    const [a, b] = [await party('ba', 50), await party('bb', 50)] as [Party, Party];
    const body = JSON.stringify({ urls: site.urls, mode: 'text' });
    const shares = ['0.75', '0.25'];
    const res = await pay(body, signers([a, b], shares), 20 * PER_URL, { 'idempotency-key': 'mpp-batch', 'x-notary-sign': 'required' });
    expect(res.statusCode, res.body).toBe(200);
    const json = res.json() as Body;
    expect(json.results.map((item) => (item.ok ? true : item.problem?.code))).toEqual(site.expected);
    expect(json.credits_used).toBe(14 * PER_URL);
    // 14 by 0.75/0.25: 10.5 and 3.5, the leftover credit to the first listed on a tie.
    expect(json.receipts).toEqual([
      { party: a.name, credits: 11, share: '0.75' },
      { party: b.name, credits: 3, share: '0.25' },
    ]);
    expect(await balances([a, b])).toEqual([39, 47]);
    for (const [p, credits] of [[a, 11], [b, 3]] as const) {
      const rows = await debitsOf(p);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ delta: -credits, request_id: res.headers['x-request-id'] });
      expect(rows[0]?.reason).toMatch(/^extract, 14 of 20 URLs \(MPP env_[0-9A-Za-z]{20}, share 0\.(75|25)\)$/);
    }
    // The signed receipt states the charge of the successes and covers the parties' receipts.
    expect(json.notary_receipt).toMatchObject({ claim: 'extract_call_consumed', credits: 14 * PER_URL });
    const { keyring } = await api.runtime.service(signedReceipts);
    const verified = verifyReceipt({ receipt: json.notary_receipt, keys: parseJwks(keyring.jwks()), responseBody: json as unknown as Record<string, unknown>, requestBody: new TextEncoder().encode(body) });
    expect(verified.checks.filter((check) => check.ok !== true)).toEqual([]);

    const hits = site.articleHits();
    const replay = await pay(body, signers([a, b], shares), 20 * PER_URL, { 'idempotency-key': 'mpp-batch', 'x-notary-sign': 'required' });
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.body).toBe(res.body);
    expect(await balances([a, b])).toEqual([39, 47]);
    expect(site.articleHits()).toBe(hits);
  });

  it('an envelope that covers fewer credits than the batch quote is refused before any fetch', async () => {
    const [a] = [await party('bc', 50)] as [Party];
    const body = JSON.stringify({ urls: site.urls });
    const hits = site.articleHits();
    const res = await pay(body, signers([a], ['1']), 14 * PER_URL);
    expect(res.statusCode, res.body).toBe(402);
    expect(res.json()).toMatchObject({ code: 'mpp_total_below_price', required_credits: 20 * PER_URL });
    expect(site.articleHits()).toBe(hits);
    expect(await balances([a])).toEqual([50]);
  });

  it('a batch where every URL fails charges no party and claims no nonce', async () => {
    const [a, b] = [await party('bd', 10), await party('be', 10)] as [Party, Party];
    const failing = site.urls.filter((_url, i) => site.expected[i] === 'upstream_not_found' || site.expected[i] === 'blocked_address');
    const body = JSON.stringify({ urls: failing });
    const res = await pay(body, signers([a, b], ['0.5', '0.5']), failing.length * PER_URL);
    expect(res.statusCode, res.body).toBe(502);
    expect(res.json()).toMatchObject({ code: 'batch_failed' });
    expect(await balances([a, b])).toEqual([10, 10]);
    expect(await debitsOf(a)).toEqual([]);
  });
});
