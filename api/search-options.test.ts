import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexDoc } from '../indexer/search-index.js';
import { parseDate, parseDomain } from '../search/options.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';

/** Twelve passages about vacuum on three hosts, eight of them dated (2023-01 .. 2023-08). */
const DOCS: IndexDoc[] = Array.from({ length: 12 }, (_, i) => ({
  id: 100 + i,
  pageId: 100 + i,
  url: `https://${['a.example', 'b.a.example', 'c.test'][i % 3]}/page-${i}`,
  title: `Vacuum ${i}`,
  headingPath: 'Maintenance',
  text: `vacuum reclaims storage and vacuum freezes old tuples; page ${i} says more about routine vacuuming of tables and indexes.`,
  ...(i < 8 ? { publishedAt: `2023-0${i + 1}-10` } : {}),
}));

describe('POST /v1/search options', () => {
  let dir: string;
  let api: ApiHarness;
  let app: FastifyInstance;
  let key: string;

  const post = (body: unknown) =>
    app.inject({ method: 'POST', url: '/v1/search', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, payload: JSON.stringify(body) });
  const results = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { results: Array<Record<string, unknown>> }).results;
  };
  const problem = (res: LightMyRequestResponse, code: string) => {
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = res.json() as Record<string, unknown>;
    expect(body['code']).toBe(code);
    return body;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-options-'));
    api = await startApi(apiTestConfig(dir, { server: { body_limit_bytes: 65_536 }, search: { max_results: 3, max_results_cap: 8 }, tiers: { free: { requests_per_minute: 6000, burst: 1000 } } }));
    app = api.app;
    await api.runtime.index.upsert(DOCS);
    const tenant = await api.runtime.accounts.createTenant('options', { credits: 1000, tier: 'free' });
    key = (await api.runtime.accounts.createKey(tenant.id)).key;
  });
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a request with only query and depth gets exactly the fields of before, and search.max_results of them', async () => {
    const res = await post({ query: 'vacuum', depth: 1 });
    const list = results(res);
    expect(list).toHaveLength(3);
    for (const r of list) expect(Object.keys(r).sort()).toEqual(['rerank_score', 'snippet', 'title', 'url']);
    expect(Object.keys(res.json() as object).sort()).toEqual(['credits_used', 'depth', 'query', 'rate_limit', 'results']);
  });

  it('max_results asks for more results at the same price, up to search.max_results_cap', async () => {
    const res = await post({ query: 'vacuum', depth: 1, max_results: 8 });
    expect(results(res)).toHaveLength(8);
    expect((res.json() as { credits_used: number }).credits_used).toBe(1);
    const over = problem(await post({ query: 'vacuum', depth: 1, max_results: 9 }), 'invalid_request');
    expect(over['detail']).toMatch(/max_results/);
    problem(await post({ query: 'vacuum', depth: 1, max_results: 0 }), 'invalid_request');
  });

  it('include_domains and exclude_domains narrow the results inside retrieval', async () => {
    const only = results(await post({ query: 'vacuum', depth: 1, max_results: 8, include_domains: ['c.test'] }));
    expect(only).toHaveLength(4);
    expect(only.every((r) => String(r['url']).startsWith('https://c.test/'))).toBe(true);
    const under = results(await post({ query: 'vacuum', depth: 1, max_results: 8, include_domains: ['*.A.example.'] }));
    expect(new Set(under.map((r) => new URL(String(r['url'])).host))).toEqual(new Set(['a.example', 'b.a.example']));
    const exact = results(await post({ query: 'vacuum', depth: 1, max_results: 8, include_domains: ['a.example'] }));
    expect(exact.every((r) => new URL(String(r['url'])).host === 'a.example')).toBe(true);
    const without = results(await post({ query: 'vacuum', depth: 1, max_results: 8, exclude_domains: ['*.a.example', 'docs.test'] }));
    expect(without.every((r) => String(r['url']).startsWith('https://c.test/'))).toBe(true);
  });

  it('start_date and end_date filter on publication dates; undated pages stay unless undated is "exclude"', async () => {
    const urls = async (body: Record<string, unknown>) =>
      results(await post({ query: 'vacuum', depth: 1, max_results: 8, include_domains: ['c.test', '*.a.example'], ...body })).map((r) => Number(String(r['url']).split('-').pop()));
    // Pages 0..7 are dated 2023-01-10 .. 2023-08-10; 8..11 are undated; docs.test (no date) is left out by the domains.
    expect((await urls({ start_date: '2023-03-10', end_date: '2023-05-10', undated: 'exclude' })).sort((a, b) => a - b)).toEqual([2, 3, 4]);
    expect((await urls({ start_date: '2023-07-01' })).sort((a, b) => a - b)).toEqual([6, 7, 8, 9, 10, 11]);
    expect((await urls({ end_date: '2023-01-10', undated: 'exclude' })).sort((a, b) => a - b)).toEqual([0]);
  });

  it('highlights: passages of each result page with scores, only when asked', async () => {
    const list = results(await post({ query: 'routine vacuuming', depth: 1, highlights: { count: 2, max_chars: 60 } }));
    expect(list.length).toBeGreaterThan(0);
    for (const r of list) {
      const highlights = r['highlights'] as Array<{ text: string; score: number }>;
      expect(highlights.length).toBeGreaterThanOrEqual(1);
      expect(highlights.length).toBeLessThanOrEqual(2);
      for (const h of highlights) {
        expect(h.text.length).toBeLessThanOrEqual(62);
        expect(h.score).toBeGreaterThanOrEqual(0);
        expect(h.score).toBeLessThanOrEqual(1);
      }
      expect(highlights.map((h) => h.score)).toEqual([...highlights.map((h) => h.score)].sort((a, b) => b - a));
    }
    expect(results(await post({ query: 'routine vacuuming', depth: 1, highlights: {} }))[0]?.['highlights']).toBeDefined();
    problem(await post({ query: 'vacuum', depth: 1, highlights: { count: 11 } }), 'invalid_request');
    problem(await post({ query: 'vacuum', depth: 1, highlights: { count: 2, extra: 1 } }), 'invalid_request');
  });

  it('refuses bad options with their codes; unknown fields stay refused', async () => {
    // The document's pattern refuses what is no host name (400 invalid_request, naming the field); parseDomain's
    // invalid_domain stays behind it for callers that skip the schema.
    for (const bad of ['https://a.example/', 'a.example:8080', 'a..example', '*.', '-a.example', 'a example', '*a.example', 'a.example/path', '10.0.0.1']) {
      const body = problem(await post({ query: 'vacuum', depth: 1, include_domains: [bad] }), 'invalid_request');
      expect(body['detail']).toMatch(/include_domains/);
    }
    problem(await post({ query: 'vacuum', depth: 1, exclude_domains: ['ok.test', 'bad/'] }), 'invalid_request');
    expect(() => parseDomain('a..example', 'include_domains[0]')).toThrow(/not a host name/);
    problem(await post({ query: 'vacuum', depth: 1, include_domains: Array.from({ length: 101 }, (_, i) => `h${i}.test`) }), 'invalid_request');
    for (const bad of ['2023-02-30', '2023-2-1', '20230201', '2023-02-01T00:00:00Z', 'yesterday', '']) {
      problem(await post({ query: 'vacuum', depth: 1, start_date: bad }), 'invalid_request');
    }
    // Two dates of a range that ends before it starts: understood, and unprocessable (422).
    for (const body of [{ start_date: '2024-02-01', end_date: '2024-01-31' }]) {
      const response = await post({ query: 'vacuum', depth: 1, ...body });
      expect(response.statusCode, response.body).toBe(422);
      expect(response.json()).toMatchObject({ code: 'invalid_date_range', detail: expect.stringMatching(/calendar date|after end_date/) });
    }
    // Years before 100 are years, not 1900-1999.
    expect(new Date(parseDate('0050-03-01', 'start_date')).toISOString()).toBe('0050-03-01T00:00:00.000Z');
    problem(await post({ query: 'vacuum', depth: 1, undated: 'drop' }), 'invalid_request');
    problem(await post({ query: 'vacuum', depth: 1, num_results: 5 }), 'invalid_request');
  });
});
