import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../core/config.js';
import { parseJwks } from '../payments/crypto/index.js';
import { signedReceipts, verifyReceipt } from '../payments/receipts/index.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { startBatchSite, type BatchSite } from './support/batch-site.js';

/**
 * POST /v1/extract with `urls` (issue 29 item 4) through the real app and accounts on SQLite, against real servers on
 * 127.0.0.1: 20 URLs of which 14 are articles, 3 answer 404, 2 are cloud-metadata addresses the SSRF policy refuses
 * and 1 never answers. Paid with an API key (and a signed receipt on top); MPP and x402 have their own files.
 */
interface Item {
  url: string;
  ok: boolean;
  title?: string;
  problem?: { code: string; status: number; detail: string; request_id: string; phase?: string };
}
interface BatchBody {
  results: Item[];
  credits_used: number;
  rate_limit: unknown;
  notary_receipt?: Record<string, unknown>;
}

const PER_URL = 2;
let site: BatchSite;
const dirs: string[] = [];

function config(overrides: ConfigInput = {}): ReturnType<typeof apiTestConfig> {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-extract-batch-'));
  dirs.push(dir);
  const base: ConfigInput = {
    extract: {
      allow_private_networks: true,
      respect_robots_txt: false,
      render: 'never',
      connect_timeout_ms: 1_000,
      total_timeout_ms: 1_500,
      batch_concurrency: 8,
      batch_timeout_ms: 15_000,
      ...(overrides.extract as object | undefined),
    },
    crawler: { per_host_concurrency: 2, per_host_delay_ms: 0 },
    pricing: { extract: { credits: PER_URL, credits_rendered: 3 } },
    default_tier: 'bulk',
  };
  return apiTestConfig(dir, { ...overrides, ...base });
}

beforeAll(async () => {
  site = await startBatchSite();
});
afterAll(async () => {
  await site?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('POST /v1/extract with urls, paid with an API key', () => {
  let api: ApiHarness;
  let tenantId: string;
  let key: string;

  beforeAll(async () => {
    api = await startApi(config(), { withExtract: true });
    const tenant = await api.runtime.accounts.createTenant('batcher', { credits: 1000 });
    tenantId = tenant.id;
    key = (await api.runtime.accounts.createKey(tenant.id)).key;
  }, 60_000);
  afterAll(async () => api?.close());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    api.app.inject({
      method: 'POST',
      url: '/v1/extract',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const balance = () => api.runtime.accounts.balance(tenantId);
  const debits = async () => (await api.runtime.accounts.ledger(tenantId)).filter((row) => row.delta < 0);

  const expectOutcomes = (items: Item[]) => {
    expect(items.map((item) => item.url)).toEqual(site.urls);
    expect(items.map((item) => (item.ok ? true : item.problem?.code))).toEqual(site.expected);
  };

  it('20 URLs, 6 failing: one result or problem per URL in order, charged for the 14 successes; a replay under the key is the same bytes and no charge', async () => {
    const before = await balance();
    const body = JSON.stringify({ urls: site.urls, mode: 'text' });
    const started = Date.now();
    const res = await post(body, { 'idempotency-key': 'batch-20' });
    expect(res.statusCode, res.body).toBe(200);
    const json = res.json() as BatchBody;
    expect(Object.keys(json)).toEqual(['results', 'credits_used', 'rate_limit']);
    expectOutcomes(json.results);
    expect(json.credits_used).toBe(site.articles * PER_URL);
    expect(await balance()).toBe(before - site.articles * PER_URL);
    const [debit, ...more] = await debits();
    expect(more).toEqual([]);
    expect(debit).toMatchObject({ delta: -site.articles * PER_URL, reason: 'extract, 14 of 20 URLs', idempotency_key: 'batch-20', request_id: res.headers['x-request-id'] });

    // A success carries the page; a failure its problem with this call's request id.
    const first = json.results[0] as Item & Record<string, unknown>;
    expect(first).toMatchObject({ ok: true, title: 'Tides, part 1', status: 200, mode: 'text' });
    expect(Object.keys(first)).toEqual(['url', 'ok', 'final_url', 'status', 'title', 'byline', 'site_name', 'lang', 'published_at', 'mode', 'content', 'excerpt', 'word_count']);
    const missing = json.results.find((item) => item.problem?.code === 'upstream_not_found');
    expect(missing?.problem).toMatchObject({ status: 422, request_id: res.headers['x-request-id'] });
    const timedOut = json.results.find((item) => item.problem?.code === 'upstream_timeout');
    expect(timedOut?.problem).toMatchObject({ status: 504 });
    // The timeout is that URL's alone: the whole call took about its fetch limit, not more.
    expect(Date.now() - started).toBeLessThan(8_000);
    // The site saw the batch within its per-host politeness (crawler.per_host_concurrency = 2).
    expect(site.maxInFlight()).toBeGreaterThanOrEqual(1);
    expect(site.maxInFlight()).toBeLessThanOrEqual(2);

    const hits = site.articleHits();
    const replay = await post(body, { 'idempotency-key': 'batch-20' });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.body).toBe(res.body);
    expect(await balance()).toBe(before - site.articles * PER_URL);
    expect(await debits()).toHaveLength(1);
    expect(site.articleHits()).toBe(hits);
    // Usage records the charge too: credits and money of the 14 successes (a credit is 0.001 USDC, 1000 units).
    const day = 86_400_000;
    const usage = await api.runtime.usage.daily({ tenantId, from: new Date(Date.now() - day).toISOString(), to: new Date(Date.now() + day).toISOString() }, 'operation');
    expect(usage.map((bucket) => [bucket.key, bucket.calls, bucket.credits, bucket.amount])).toEqual([['extract', 1, 28, '28000']]);
  });

  it('the same Idempotency-Key sent 4 times at once runs and charges once; the others are told to retry or get the replay', async () => {
    const before = await balance();
    const ledgerBefore = (await debits()).length;
    const body = JSON.stringify({ urls: site.urls.slice(0, 10), mode: 'excerpt' });
    const answers = await Promise.all(Array.from({ length: 4 }, () => post(body, { 'idempotency-key': 'batch-concurrent' })));
    const served = answers.filter((a) => a.statusCode === 200);
    const busy = answers.filter((a) => a.statusCode === 409);
    expect(served.length + busy.length, answers.map((a) => `${a.statusCode} ${a.body.slice(0, 200)}`).join('\n')).toBe(4);
    expect(served.length).toBeGreaterThanOrEqual(1);
    for (const b of busy) expect(b.json()).toMatchObject({ code: 'idempotency_in_progress' });
    expect(served.filter((a) => a.headers['idempotency-replayed'] !== 'true')).toHaveLength(1);
    for (const a of served) expect(a.body).toBe(served[0]?.body);
    const charged = (served[0]?.json() as BatchBody).credits_used;
    expect(charged).toBe(site.expected.slice(0, 10).filter((e) => e === true).length * PER_URL);
    expect(await balance()).toBe(before - charged);
    expect(await debits()).toHaveLength(ledgerBefore + 1);
    const again = await post(body, { 'idempotency-key': 'batch-concurrent' });
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.body).toBe(served[0]?.body);
    expect(await balance()).toBe(before - charged);
  });

  it('a batch where every URL fails is a 502 batch_failed listing each problem, charges nothing, and is not stored for replay', async () => {
    const before = await balance();
    const ledgerBefore = (await debits()).length;
    const failing = site.urls.filter((_url, i) => site.expected[i] !== true && site.expected[i] !== 'upstream_timeout');
    const body = JSON.stringify({ urls: failing });
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await post(body, { 'idempotency-key': 'batch-all-fail' });
      expect(res.statusCode, res.body).toBe(502);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['idempotency-replayed']).toBeUndefined();
      const problem = res.json() as { code: string; detail: string; results: Item[] };
      expect(problem.code).toBe('batch_failed');
      expect(problem.detail).toContain('nothing was charged');
      expect(problem.results.map((item) => item.problem?.code)).toEqual(site.expected.filter((e) => e !== true && e !== 'upstream_timeout'));
    }
    expect(await balance()).toBe(before);
    expect(await debits()).toHaveLength(ledgerBefore);
  });

  it('refuses url and urls together, neither, more than 20, duplicates (also once parsed) and an empty list as 422 invalid_batch; a bad URL in urls is invalid_url', async () => {
    const before = await balance();
    const hits = site.articleHits();
    const a = `${site.site.origin}/article/1`;
    const cases: Array<[unknown, number, string]> = [
      [{ url: a, urls: [a] }, 422, 'invalid_batch'],
      [{ mode: 'text' }, 422, 'invalid_batch'],
      [{ urls: [] }, 422, 'invalid_batch'],
      [{ urls: Array.from({ length: 21 }, (_, i) => `${site.site.origin}/article/${i + 1}?x=${i}`) }, 422, 'invalid_batch'],
      [{ urls: [a, `${site.site.origin}/article/2`, a] }, 422, 'invalid_batch'],
      [{ urls: [a, a.replace('http://', 'HTTP://')] }, 422, 'invalid_batch'],
      [{ urls: [a, 'ftp://example.org/file'] }, 400, 'invalid_url'],
      [{ urls: 'http://example.org/' }, 400, 'invalid_request'],
    ];
    for (const [body, status, code] of cases) {
      const res = await post(body);
      expect(res.statusCode, `${JSON.stringify(body).slice(0, 120)} ${res.body}`).toBe(status);
      expect((res.json() as { code: string }).code).toBe(code);
    }
    const dup = await post({ urls: [a, a.replace('http://', 'HTTP://')] });
    expect((dup.json() as { detail: string }).detail).toBe('urls[0] and urls[1] name the same page; list each URL once');
    const bad = await post({ urls: [a, 'ftp://example.org/file'] });
    expect(bad.json()).toMatchObject({ index: 1 });
    expect(await balance()).toBe(before);
    expect(site.articleHits()).toBe(hits);
  });

  it('a one-URL answer keeps its members and their order; urls with one URL is a batch of one at the one-URL price', async () => {
    const before = await balance();
    const single = await post({ url: `${site.site.origin}/article/3`, mode: 'text' });
    expect(single.statusCode, single.body).toBe(200);
    expect(Object.keys(single.json() as object)).toEqual([
      'url', 'final_url', 'status', 'title', 'byline', 'site_name', 'lang', 'published_at', 'mode', 'content', 'excerpt', 'word_count', 'credits_used', 'rate_limit',
    ]);
    const one = await post({ urls: [`${site.site.origin}/article/3`], mode: 'text' });
    expect(one.statusCode, one.body).toBe(200);
    const json = one.json() as BatchBody;
    expect(json.credits_used).toBe(PER_URL);
    expect(json.results[0]).toMatchObject({ ok: true, content: (single.json() as { content: string }).content });
    expect(await balance()).toBe(before - 2 * PER_URL);
  });

  it('X-Notary-Sign: required signs the charge of the successes, and the receipt verifies over the batch answer', async () => {
    const body = JSON.stringify({ urls: site.urls, mode: 'excerpt' });
    const res = await post(body, { 'x-notary-sign': 'required', 'idempotency-key': 'batch-signed' });
    expect(res.statusCode, res.body).toBe(200);
    const json = res.json() as BatchBody;
    expectOutcomes(json.results);
    expect(json.credits_used).toBe(site.articles * PER_URL);
    expect(json.notary_receipt).toMatchObject({ claim: 'extract_call_consumed', credits: site.articles * PER_URL, request_id: res.headers['x-request-id'] });
    const { keyring } = await api.runtime.service(signedReceipts);
    const verified = verifyReceipt({ receipt: json.notary_receipt, keys: parseJwks(keyring.jwks()), responseBody: json as unknown as Record<string, unknown>, requestBody: new TextEncoder().encode(body) });
    expect(verified.checks.filter((check) => check.ok !== true)).toEqual([]);
    const replay = await post(body, { 'x-notary-sign': 'required', 'idempotency-key': 'batch-signed' });
    expect(replay.body).toBe(res.body);
  });
});

describe('the batch time limit', () => {
  it('answers the URLs done in time and gives the rest upstream_timeout (phase batch) within extract.batch_timeout_ms', async () => {
    const api = await startApi(config({ extract: { total_timeout_ms: 10_000, batch_timeout_ms: 800 } }), { withExtract: true });
    try {
      const tenant = await api.runtime.accounts.createTenant('hurried', { credits: 100 });
      const { key } = await api.runtime.accounts.createKey(tenant.id);
      const started = Date.now();
      const res = await api.app.inject({
        method: 'POST',
        url: '/v1/extract',
        headers: { authorization: `Bearer ${key}` },
        payload: { urls: [`${site.site.origin}/article/5`, `${site.hole.url}/slow`, `${site.site.origin}/article/6`] },
      });
      const elapsed = Date.now() - started;
      expect(res.statusCode, res.body).toBe(200);
      const json = res.json() as BatchBody;
      expect(json.results.map((item) => item.ok)).toEqual([true, false, true]);
      expect(json.results[1]?.problem).toMatchObject({ code: 'upstream_timeout', phase: 'batch' });
      expect(json.results[1]?.problem?.detail).toContain('extract.batch_timeout_ms');
      expect(json.credits_used).toBe(2 * PER_URL);
      expect(await api.runtime.accounts.balance(tenant.id)).toBe(100 - 2 * PER_URL);
      expect(elapsed).toBeGreaterThanOrEqual(700);
      expect(elapsed).toBeLessThan(3_000);
    } finally {
      await api.close();
    }
  });
});
