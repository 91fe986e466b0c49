import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotaryConfig } from '../core/config.js';
import type { Accounts } from '../payments/accounts.js';
import { generateApiKey } from '../payments/api-keys.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import { LexicalReranker } from '../reranker/lexical.js';
import { SearchPipeline } from '../search/pipeline.js';
import BetterSqlite3 from 'better-sqlite3';
import { apiIndexDocs, apiTestConfig, RecordingSearch, startApi, type ApiHarness } from '../testkit/app.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { buildApp } from './app.js';

const PROBLEM_KEYS = ['code', 'detail', 'request_id', 'retryable', 'status', 'title', 'type'];

function expectProblem(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json() as Record<string, unknown>;
  for (const key of PROBLEM_KEYS) expect(body).toHaveProperty(key);
  expect(body['code']).toBe(code);
  expect(body['status']).toBe(status);
  expect(body['type']).toMatch(new RegExp(`#${code}$`));
  expect(typeof body['detail']).toBe('string');
  expect(body['request_id']).toMatch(/^req_[0-9A-Za-z]{20}$/);
  expect(res.headers['x-request-id']).toBe(body['request_id']);
  return body;
}

describe('POST /v1/search on SQLite', () => {
  let dir: string;
  let api: ApiHarness;
  let accounts: Accounts;
  let config: NotaryConfig;
  let search: RecordingSearch;
  let app: FastifyInstance;

  const newTenant = async (name: string, credits: number, tier = 'free') => {
    const tenant = await accounts.createTenant(name, { credits, tier });
    const { key, record } = await accounts.createKey(tenant.id);
    return { tenant, key, keyId: record.id };
  };
  const post = (body: unknown, key?: string, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-api-'));
    config = apiTestConfig(dir);
    api = await startApi(config);
    ({ app, search } = api);
    accounts = api.runtime.accounts;
  });
  afterAll(async () => {
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers with exactly the interface keys, the service order, the price, a request id and rate-limit headers', async () => {
    const { tenant, key, keyId } = await newTenant('success', 10);
    const res = await post({ query: 'vacuum analyze tables', depth: 2 }, key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['credits_used', 'depth', 'query', 'rate_limit', 'results']);
    expect(body['query']).toBe('vacuum analyze tables');
    expect(body['depth']).toBe(2);
    expect(body['credits_used']).toBe(api.runtime.pricing.price({ operation: 'search', depth: 2 }).credits);
    expect(body['credits_used']).toBe(2);
    expect(body['rate_limit']).toEqual({ limit: 10, remaining: 9, reset_ms: expect.any(Number) });
    const resetMs = (body['rate_limit'] as { reset_ms: number }).reset_ms;
    // One request of a 60/min tier is replenished after one second.
    expect(resetMs).toBeGreaterThan(900);
    expect(resetMs).toBeLessThanOrEqual(1000);

    const results = body['results'] as Array<Record<string, unknown>>;
    const direct = await search.inner.search({ query: 'vacuum analyze tables', depth: 2, requestId: 'direct' });
    expect(results).toEqual(direct.results);
    expect(new Set(results.map((r) => r['url']))).toEqual(
      new Set(['https://docs.test/autovacuum', 'https://docs.test/analyze', 'https://docs.test/vacuum']),
    );
    for (const r of results) expect(Object.keys(r).sort()).toEqual(['rerank_score', 'snippet', 'title', 'url']);
    const scores = results.map((r) => r['rerank_score'] as number);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));

    const requestId = res.headers['x-request-id'];
    expect(requestId).toMatch(/^req_[0-9A-Za-z]{20}$/);
    expect(search.calls.at(-1)).toEqual({ query: 'vacuum analyze tables', depth: 2, requestId });
    expect(res.headers['ratelimit-policy']).toBe('"free";q=10;w=10');
    expect(res.headers['ratelimit']).toBe('"free";r=9;t=1');

    expect(await accounts.balance(tenant.id)).toBe(8);
    const debits = (await accounts.ledger(tenant.id)).filter((e) => e.delta < 0);
    expect(debits.map((e) => [e.delta, e.request_id, e.key_id, e.reason])).toEqual([[-2, requestId, keyId, 'search depth 2']]);
  });

  it('requires depth, trims the query and prices depth 3 from the config', async () => {
    const { tenant, key } = await newTenant('pricing', 10);
    const missing = await post({ query: 'indexes' }, key);
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'invalid_request' });
    const first = await post({ query: '  indexes  ', depth: 1 }, key);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ query: 'indexes', depth: 1, credits_used: 1 });
    const deep = await post({ query: 'indexes', depth: 3 }, key);
    expect(deep.json()).toMatchObject({ depth: 3, credits_used: 4 });
    expect(await accounts.balance(tenant.id)).toBe(5);
  });

  it('echoes a sane incoming X-Request-Id and replaces anything else', async () => {
    const { tenant, key } = await newTenant('request-ids', 10);
    const echoed = await post({ query: 'vacuum', depth: 1 }, key, { 'x-request-id': 'trace_0123456789abcdef' });
    expect(echoed.headers['x-request-id']).toBe('trace_0123456789abcdef');
    expect((await accounts.ledger(tenant.id)).at(-1)?.request_id).toBe('trace_0123456789abcdef');
    for (const bad of ['short', 'has spaces in it', 'x'.repeat(65), 'semi;colon;value', '../../etc/passwd']) {
      const res = await post({ query: 'vacuum', depth: 1 }, key, { 'x-request-id': bad });
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{20}$/);
    }
    const notFound = await app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'bad id' } });
    expect(notFound.headers['x-request-id']).toMatch(/^req_/);
  });

  it('passes an optional language to the search and answers in the same shape', async () => {
    const { key } = await newTenant('language', 10);
    const res = await post({ query: 'vacuum dead tuples', depth: 1, language: 'pt-BR' }, key);
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(res.json() as Record<string, unknown>).sort()).toEqual(['credits_used', 'depth', 'query', 'rate_limit', 'results']);
    expect(search.calls.at(-1)).toMatchObject({ query: 'vacuum dead tuples', depth: 1, language: 'pt-BR' });
    await post({ query: 'vacuum dead tuples', depth: 1 }, key);
    expect(search.calls.at(-1)?.language).toBeUndefined();
  });

  it('answers 400 invalid_request for bodies that fail the schema, with the validation message', async () => {
    const { key } = await newTenant('bad-bodies', 100, 'bulk');
    const cases: Array<[unknown, RegExp]> = [
      [{ query: 'x', depth: 1, extra: true }, /additional properties/],
      [{ depth: 1 }, /query/],
      [{ query: 5, depth: 1 }, /query must be string/],
      [{ query: '   ', depth: 1 }, /letter or digit/],
      [{ query: '', depth: 1 }, /letter or digit/],
      [{ query: '?!', depth: 1 }, /letter or digit/],
      [{ query: 'a\u0000b', depth: 1 }, /control characters/],
      [{ query: 'x', depth: '2' }, /depth must be integer/],
      [{ query: 'x', depth: 1.5 }, /depth must be integer/],
      [{ query: 'x'.repeat(101), depth: 1 }, /must NOT have more than 100 characters/],
      [['query'], /body must be object/],
      [null, /body must be object/],
      [{ query: 'x', depth: 1, language: 'english please' }, /language must match pattern/],
      [{ query: 'x', depth: 1, language: 7 }, /language must be string/],
    ];
    for (const [body, message] of cases) {
      const problem = expectProblem(await post(body, key), 400, 'invalid_request');
      expect(problem['detail'], JSON.stringify(body)).toMatch(message);
      expect(problem['retryable']).toBe(false);
    }
    expect(search.calls.filter((c) => c.query === 'x')).toHaveLength(0);
  });

  it('answers 400 invalid_json for malformed or empty JSON and depth_out_of_range outside 1..max_depth', async () => {
    const { key } = await newTenant('bad-json', 100, 'bulk');
    expectProblem(await post('{"query": "x", ', key), 400, 'invalid_json');
    expectProblem(await post('', key), 400, 'invalid_json');
    expectProblem(await post('{"__proto__": {"x": 1}, "query": "x"}', key), 400, 'invalid_json');
    for (const depth of [4, 0, -1, 1000]) {
      const problem = expectProblem(await post({ query: 'x', depth }, key), 400, 'depth_out_of_range');
      expect(problem['max_depth']).toBe(3);
    }
  });

  it('answers 401 for a missing, malformed, unknown or revoked key', async () => {
    const { key, keyId } = await newTenant('auth', 100);
    // Without credentials the body is validated and priced first (the challenges of pay-per-call modes need the price).
    expectProblem(await post({ query: 'x' }), 400, 'invalid_request');
    const missingRes = await post({ query: 'x', depth: 2 });
    const missing = expectProblem(missingRes, 401, 'unauthenticated');
    expect(missing['detail']).toMatch(/Bearer/);
    expect(missing['price']).toEqual({ credits: 2, amount: '0.002', asset: 'USDC' });
    // One challenge per enabled mode: API keys and MPP envelopes (both authenticate accounts: 401).
    expect(missingRes.headers['www-authenticate']).toEqual(['Bearer realm="notary"', 'MPP realm="notary", credits=2, max_parties=16, max_lifetime=300']);
    expect(missing['detail']).toMatch(/Authorization: MPP envelope=/);
    expectProblem(await post({ query: 'x', depth: 1 }, undefined, { authorization: 'Basic dXNlcjpwYXNz' }), 401, 'unauthenticated');
    expectProblem(await post({ query: 'x' }, undefined, { authorization: 'Bearer' }), 401, 'invalid_api_key');
    expectProblem(await post({ query: 'x' }, 'not-a-key'), 401, 'invalid_api_key');
    expectProblem(await post({ query: 'x' }, key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a')), 401, 'invalid_api_key');
    expectProblem(await post({ query: 'x' }, undefined, { authorization: `Bearer ${key} extra` }), 401, 'invalid_api_key');
    const unknown = await post({ query: 'x' }, generateApiKey().key);
    expectProblem(unknown, 401, 'invalid_api_key');
    expect(unknown.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    // Scheme names are case-insensitive.
    expect((await post({ query: 'vacuum', depth: 1 }, undefined, { authorization: `bearer ${key}` })).statusCode).toBe(200);
    await accounts.revokeKey(keyId);
    expectProblem(await post({ query: 'x', depth: 1 }, key), 401, 'revoked_api_key');
  });

  it('answers 402 with required and available credits, before searching when the balance is short', async () => {
    const { tenant, key } = await newTenant('poor', 3);
    const callsBefore = search.calls.length;
    const problem = expectProblem(await post({ query: 'vacuum', depth: 3 }, key), 402, 'insufficient_credits');
    expect(problem).toMatchObject({ required_credits: 4, available_credits: 3, retryable: false });
    expect(search.calls.length).toBe(callsBefore);
    expect(await accounts.balance(tenant.id)).toBe(3);
    expect((await post({ query: 'vacuum', depth: 2 }, key)).statusCode).toBe(200);
    expect(await accounts.balance(tenant.id)).toBe(1);
  });

  it('answers 413 for a body over the limit and 415 for anything but application/json', async () => {
    const { key } = await newTenant('media', 100, 'bulk');
    const big = JSON.stringify({ query: 'x'.repeat(2000), depth: 1 });
    const tooLarge = expectProblem(await post(big, key), 413, 'payload_too_large');
    expect(tooLarge['limit_bytes']).toBe(1024);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      expectProblem(await post('{"query":"x"}', key, { 'content-type': type }), 415, 'unsupported_media_type');
    }
    const noType = await app.inject({ method: 'POST', url: '/v1/search', headers: { authorization: `Bearer ${key}` }, payload: Buffer.from('{"query":"x"}') });
    expectProblem(noType, 415, 'unsupported_media_type');
    const charset = await post({ query: 'vacuum', depth: 1 }, key, { 'content-type': 'application/json; charset=utf-8' });
    expect(charset.statusCode).toBe(200);
  });

  it('answers 429 with Retry-After and the rate-limit headers once the tier burst is spent, per key', async () => {
    const { tenant, key } = await newTenant('limited', 100, 'tiny');
    expect((await post({ query: 'vacuum', depth: 1 }, key)).statusCode).toBe(200);
    const second = await post({ query: 'vacuum', depth: 1 }, key);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ rate_limit: { limit: 2, remaining: 0 } });
    const limited = await post({ query: 'vacuum', depth: 1 }, key);
    const problem = expectProblem(limited, 429, 'rate_limited');
    expect(problem['retryable']).toBe(true);
    const retryAfter = limited.headers['retry-after'];
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    expect(Number(retryAfter)).toBe(1);
    expect(problem['retry_after_s']).toBe(1);
    expect(limited.headers['ratelimit-policy']).toBe('"tiny";q=2;w=2');
    expect(limited.headers['ratelimit']).toMatch(/^"tiny";r=0;t=2$/);
    expect(await accounts.balance(tenant.id)).toBe(98);
    // Another key of the same tenant has its own bucket.
    const { key: secondKey } = await accounts.createKey(tenant.id);
    expect((await post({ query: 'vacuum', depth: 1 }, secondKey)).statusCode).toBe(200);
  });

  it('answers 404 for unknown routes and 405 with Allow for a known path under another method', async () => {
    expectProblem(await app.inject({ method: 'GET', url: '/v2/nothing' }), 404, 'not_found');
    expectProblem(await app.inject({ method: 'POST', url: '/' }), 404, 'not_found');
    const wrongMethod = await app.inject({ method: 'GET', url: '/v1/search?q=x' });
    const problem = expectProblem(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers['allow']).toBe('POST');
    expect(problem['allowed_methods']).toEqual(['POST']);
    expectProblem(await app.inject({ method: 'DELETE', url: '/healthz' }), 405, 'method_not_allowed');
    expectProblem(await app.inject({ method: 'GET', url: '/%zz' }), 400, 'invalid_request');
    const head = await app.inject({ method: 'HEAD', url: '/healthz' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['x-request-id']).toMatch(/^req_/);
  });

  it('charges nothing when the search throws, and does not leak the error', async () => {
    const { tenant, key } = await newTenant('explodes', 10);
    const before = await accounts.ledger(tenant.id);
    // A real failure: the index's database handle is closed under the pipeline.
    const index = new Fts5SearchIndex(new BetterSqlite3(path.join(dir, 'broken-index.sqlite')), { ownsHandle: true });
    await index.upsert(apiIndexDocs());
    const broken = { search: new RecordingSearch(new SearchPipeline({ index, reranker: new LexicalReranker(), config: config.search })) };
    await index.close();
    const failing = await buildApp({ config, gate: api.runtime.paidCallGate(), search: broken.search, health: async () => ({}) });
    try {
      const res = await failing.inject({
        method: 'POST',
        url: '/v1/search',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        payload: JSON.stringify({ query: 'vacuum', depth: 2 }),
      });
      const problem = expectProblem(res, 500, 'internal_error');
      expect(broken.search.calls).toHaveLength(1);
      expect(JSON.stringify(problem)).not.toMatch(/database|sqlite|connection|index-/i);
      expect(problem['retryable']).toBe(true);
    } finally {
      await failing.close();
    }
    expect(await accounts.ledger(tenant.id)).toEqual(before);
    expect(await accounts.balance(tenant.id)).toBe(10);
  });

  it('serves /healthz without a key, with a request id, and 503 when the probe fails', async () => {
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    // The public summary: the probe's other members (here `documents`) are an operator's (the dashboard).
    expect(res.json()).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(res.headers['ratelimit']).toBeUndefined();
    const failing = await buildApp({
      config,
      gate: api.runtime.paidCallGate(),
      search,
      health: async () => {
        throw new Error('db down');
      },
    });
    try {
      expectProblem(await failing.inject({ method: 'GET', url: '/healthz' }), 503, 'service_unavailable');
    } finally {
      await failing.close();
    }
  });

  it('50 concurrent searches against a balance of 17: exactly 17 answered and charged, 33 get 402', async () => {
    const { tenant, key } = await newTenant('concurrent', 17, 'bulk');
    const responses = await Promise.all(Array.from({ length: 50 }, () => post({ query: 'vacuum tables', depth: 1 }, key)));
    const ok = responses.filter((r) => r.statusCode === 200);
    const paymentRequired = responses.filter((r) => r.statusCode === 402);
    expect(ok).toHaveLength(17);
    expect(paymentRequired).toHaveLength(33);
    for (const r of paymentRequired) {
      expectProblem(r, 402, 'insufficient_credits');
      expect(r.json()).not.toHaveProperty('results');
    }
    expect(await accounts.balance(tenant.id)).toBe(0);
    const debits = (await accounts.ledger(tenant.id)).filter((e) => e.delta < 0);
    expect(debits).toHaveLength(17);
    expect(new Set(debits.map((e) => e.request_id))).toEqual(new Set(ok.map((r) => r.headers['x-request-id'])));
  });
});

describe('POST /v1/search on PostgreSQL over a listening server', () => {
  let pgServer: TestPostgres | undefined;
  let api: ApiHarness;
  let baseUrl: string;
  let accounts: Accounts;
  let dir: string;

  beforeAll(async () => {
    pgServer = await startPostgres();
    const url = await createDatabase(pgServer.url, `api_${Date.now()}_${Math.floor(Math.random() * 1e6)}`);
    dir = mkdtempSync(path.join(tmpdir(), 'notary-api-pg-'));
    api = await startApi(apiTestConfig(dir, { storage: { driver: 'postgres', postgres_url: url } }));
    accounts = api.runtime.accounts;
    baseUrl = await api.app.listen({ host: '127.0.0.1', port: 0 });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    pgServer?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('50 concurrent HTTP searches against a balance of 17: exactly 17 charged, balance ends at 0', async () => {
    const tenant = await accounts.createTenant('pg-concurrent', { credits: 17, tier: 'bulk' });
    const { key } = await accounts.createKey(tenant.id);
    const responses = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const res = await fetch(`${baseUrl}/v1/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ query: 'vacuum tables', depth: 1 }),
        });
        return { status: res.status, type: res.headers.get('content-type') ?? '', id: res.headers.get('x-request-id'), body: (await res.json()) as Record<string, unknown> };
      }),
    );
    const ok = responses.filter((r) => r.status === 200);
    const denied = responses.filter((r) => r.status === 402);
    expect(ok).toHaveLength(17);
    expect(denied).toHaveLength(33);
    for (const r of denied) {
      expect(r.type).toMatch(/^application\/problem\+json/);
      expect(r.body['code']).toBe('insufficient_credits');
    }
    expect(await accounts.balance(tenant.id)).toBe(0);
    const debits = (await accounts.ledger(tenant.id)).filter((e) => e.delta < 0);
    expect(debits).toHaveLength(17);
    expect(new Set(debits.map((e) => e.request_id))).toEqual(new Set(ok.map((r) => r.id)));
  });
});
