import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlPageFetched } from '../storage/pages.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';

function page(title: string, topic: string): string {
  const words = `${topic} `.repeat(6) + 'the team keeps this page current with the schedule and the rules that apply to everyone';
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${words}.</p><p>${words} again.</p></main></body></html>`;
}

/**
 * Issue 33, item 2: an operator limits a tenant to some collections; every key of it reads at most those, an
 * unlimited key and one the tenant limited to another collection included, on every endpoint that names a
 * collection, before anything is charged or held.
 */
describe("a tenant's collections limit every key of it", () => {
  let dir: string;
  let api: ApiHarness;
  let app: FastifyInstance;
  let tenantId = '';
  const keys = { open: '', eng: '' };
  const call = (route: string, key: string, body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: route, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, payload: JSON.stringify(body) });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-tenant-collections-'));
    api = await startApi(apiTestConfig(dir, { extract: { allow_private_networks: true }, default_tier: 'bulk' }), { withExtract: true });
    app = api.app;
    const { runtime } = api;
    const hr = await runtime.collections.ensure('hr');
    const eng = await runtime.collections.ensure('eng');
    for (const [url, html, id] of [
      ['https://hr.test/payroll', page('Payroll holidays', 'holiday payroll'), hr.id],
      ['https://eng.test/oncall', page('On-call holidays', 'holiday oncall'), eng.id],
    ] as const) {
      await runtime.pages.saveFetched(htmlPageFetched(url, html));
      await runtime.pages.joinCollection(url, id);
    }
    await runtime.indexer().runOnce();
    const tenant = await runtime.accounts.createTenant('acme', { credits: 100 });
    tenantId = tenant.id;
    keys.open = (await runtime.accounts.createKey(tenant.id)).key;
    keys.eng = (await runtime.accounts.createKey(tenant.id, { collections: [eng.id] })).key;
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('before the limit an unlimited key reads every collection; after it, only the tenant’s, on search, extract, map and crawl', async () => {
    expect((await call('/v1/search', keys.open, { query: 'holiday', depth: 1, collection: 'eng' })).statusCode).toBe(200);
    const hr = await api.runtime.collections.byName('hr');
    await api.runtime.accounts.updateTenant(tenantId, { collections: [hr?.id ?? ''] });
    const before = await api.runtime.accounts.balance(tenantId);
    const ok = await call('/v1/search', keys.open, { query: 'holiday', depth: 1, collection: 'hr' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((ok.json() as { results: Array<{ url: string }> }).results.map((r) => r.url)).toEqual(['https://hr.test/payroll']);
    const charged = before - (ok.json() as { credits_used: number }).credits_used;
    const refused: Array<[string, string, Record<string, unknown>]> = [
      ['/v1/search', keys.open, { query: 'holiday', depth: 1, collection: 'eng' }],
      ['/v1/search', keys.open, { query: 'holiday', depth: 1 }],
      ['/v1/extract', keys.open, { url: 'https://eng.test/oncall', collection: 'eng' }],
      ['/v1/map', keys.open, { url: 'https://eng.test/', sitemaps: false, collection: 'eng' }],
      ['/v1/crawl', keys.open, { url: 'https://eng.test/', collection: 'eng' }],
      // A key the tenant limited to eng, under a tenant limited to hr, reads nothing.
      ['/v1/search', keys.eng, { query: 'holiday', depth: 1, collection: 'eng' }],
      ['/v1/search', keys.eng, { query: 'holiday', depth: 1, collection: 'hr' }],
    ];
    for (const [route, key, body] of refused) {
      const res = await call(route, key, body);
      expect(res.statusCode, `${route} ${JSON.stringify(body)}: ${res.body}`).toBe(403);
      expect(res.json()).toMatchObject({ code: 'collection_forbidden' });
    }
    expect(await api.runtime.accounts.balance(tenantId)).toBe(charged);
    // Lifted: every collection again.
    await api.runtime.accounts.updateTenant(tenantId, { collections: null });
    expect((await call('/v1/search', keys.open, { query: 'holiday', depth: 1, collection: 'eng' })).statusCode).toBe(200);
  });
});
