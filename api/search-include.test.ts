import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexDoc } from '../indexer/search-index.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';

/** Six pages about checkpoints; the even ones dated (a date, a date-time with an offset, a UTC date-time), the odd ones not. */
const DATES = ['2023-03-10', undefined, '2024-06-01T12:30:00+02:00', undefined, '2025-01-31T23:00:00Z', undefined];
const DOCS: IndexDoc[] = DATES.map((date, i) => ({
  id: 200 + i,
  pageId: 200 + i,
  url: `https://docs.example/checkpoint-${i}`,
  title: `Checkpoints ${i}`,
  headingPath: 'WAL',
  text: `a checkpoint flushes dirty buffers to disk; checkpoint page ${i} explains checkpoint_timeout and max_wal_size.`,
  ...(date ? { publishedAt: date } : {}),
}));
const EXPECTED: Record<string, string> = {
  'https://docs.example/checkpoint-0': '2023-03-10T00:00:00.000Z',
  'https://docs.example/checkpoint-2': '2024-06-01T10:30:00.000Z',
  'https://docs.example/checkpoint-4': '2025-01-31T23:00:00.000Z',
};
const BASE_FIELDS = ['rerank_score', 'snippet', 'title', 'url'];

describe('POST /v1/search include: ["published_date"]', () => {
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
  const refused = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((res.json() as Record<string, unknown>)['code']).toBe('invalid_request');
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-include-'));
    api = await startApi(apiTestConfig(dir, { search: { max_results: 6, max_results_cap: 8 }, tiers: { free: { requests_per_minute: 6000, burst: 1000 } } }));
    app = api.app;
    await api.runtime.index.upsert(DOCS);
    const tenant = await api.runtime.accounts.createTenant('include', { credits: 1000, tier: 'free' });
    key = (await api.runtime.accounts.createKey(tenant.id)).key;
  });
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('asked for: dated results carry published_date (ISO 8601 UTC), undated ones carry none, at the same price', async () => {
    const res = await post({ query: 'checkpoint', depth: 1, include: ['published_date'] });
    const list = results(res);
    expect(list).toHaveLength(6);
    for (const r of list) {
      const url = String(r['url']);
      const expected = EXPECTED[url];
      if (expected) {
        expect(r['published_date'], url).toBe(expected);
        expect(Object.keys(r).sort()).toEqual([...BASE_FIELDS, 'published_date'].sort());
      } else {
        expect(r, url).not.toHaveProperty('published_date');
        expect(Object.keys(r).sort()).toEqual(BASE_FIELDS);
      }
    }
    expect((res.json() as { credits_used: number }).credits_used).toBe(1);
  });

  it('not asked for: exactly the fields of before, also with an empty include and with other options', async () => {
    for (const body of [{}, { include: [] }, { max_results: 6, start_date: '2020-01-01' }]) {
      const res = await post({ query: 'checkpoint', depth: 1, ...body });
      const list = results(res);
      expect(list.length).toBeGreaterThan(0);
      for (const r of list) expect(Object.keys(r).sort()).toEqual(BASE_FIELDS);
      expect(Object.keys(res.json() as object).sort()).toEqual(['credits_used', 'depth', 'query', 'rate_limit', 'results']);
    }
  });

  it('works beside highlights', async () => {
    const list = results(await post({ query: 'checkpoint', depth: 1, include: ['published_date'], highlights: { count: 1 } }));
    const dated = list.find((r) => r['url'] === 'https://docs.example/checkpoint-2');
    expect(dated?.['published_date']).toBe('2024-06-01T10:30:00.000Z');
    expect(dated?.['highlights']).toHaveLength(1);
  });

  it('refuses unknown include values, repeated ones and a non-array with invalid_request', async () => {
    refused(await post({ query: 'checkpoint', depth: 1, include: ['modified_date'] }));
    refused(await post({ query: 'checkpoint', depth: 1, include: ['published_date', 'published_date'] }));
    refused(await post({ query: 'checkpoint', depth: 1, include: 'published_date' }));
    refused(await post({ query: 'checkpoint', depth: 1, include: [1] }));
  });
});
