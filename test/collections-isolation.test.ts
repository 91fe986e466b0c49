import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deepMerge, type ConfigInput } from '../core/config.js';
import { htmlPageFetched } from '../storage/pages.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { available } from '../testkit/components.js';
import { meilisearchAvailable, startMeilisearch } from '../testkit/meilisearch.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';

/** A page of one paragraph about `topic`, long enough to make passages. */
function page(title: string, topic: string): string {
  const words = `${topic} `.repeat(6) + 'the team keeps this page current with the schedule, the contacts and the rules that apply to everyone in the company this year';
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${words}.</p><p>${words} again, with more detail on how to ask.</p></main></body></html>`;
}

/**
 * Issue 33, item 2: two tenants, two collections, two keys each limited to one. Each key reads its own collection
 * and the pages shared with it, never the other's; naming the other's collection is 403 collection_forbidden and
 * charges nothing; the default collection (what requests without `collection` search) holds neither. On the embedded
 * topology and the scaled one (PostgreSQL storage with its full-text index, and with Meilisearch).
 */
function isolationSuite(topology: string, setup: () => Promise<{ overrides: ConfigInput; stop(): Promise<void> }>): void {
  describe(`collections: tenant isolation on POST /v1/search and /v1/extract (${topology})`, () => {
    let stop: (() => Promise<void>) | undefined;
    let dir: string;
    let api: ApiHarness;
    let app: FastifyInstance;
    const keys: Record<'hr' | 'eng' | 'all', string> = { hr: '', eng: '', all: '' };
    const tenants: Record<'hr' | 'eng', string> = { hr: '', eng: '' };

    const call = (route: string, key: string, body: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: route, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, payload: JSON.stringify(body) });
    const urls = (res: LightMyRequestResponse): string[] => {
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { results: Array<{ url: string }> }).results.map((r) => r.url).sort();
    };
    const credits = async (tenant: 'hr' | 'eng') => (await api.runtime.accounts.getTenant(tenants[tenant])).credits;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'notary-collections-'));
      const world = await setup();
      stop = world.stop;
      const overrides = deepMerge({ server: { body_limit_bytes: 65_536 }, tiers: { free: { requests_per_minute: 6000, burst: 1000 } } }, world.overrides as Record<string, unknown>);
      api = await startApi(apiTestConfig(dir, overrides), { withExtract: true });
      app = api.app;
      const { runtime } = api;
      const hr = await runtime.collections.ensure('hr');
      const eng = await runtime.collections.ensure('eng');
      const stored: Array<[string, string, string[]]> = [
        ['https://hr.test/payroll', page('Payroll holidays', 'holiday payroll vacuum'), [hr.id]],
        ['https://eng.test/oncall', page('On-call holidays', 'holiday oncall vacuum'), [eng.id]],
        ['https://shared.test/calendar', page('Company holiday calendar', 'holiday calendar vacuum'), [hr.id, eng.id]],
        // Stored without naming a collection: the default one.
        ['https://www.test/opening', page('Opening hours on holidays', 'holiday opening vacuum'), []],
      ];
      for (const [url, html, collections] of stored) {
        await runtime.pages.saveFetched(htmlPageFetched(url, html));
        for (const id of collections) await runtime.pages.joinCollection(url, id);
      }
      const indexed = await runtime.indexer().runOnce();
      expect(indexed.indexedPages).toBe(4);
      for (const name of ['hr', 'eng'] as const) {
        const tenant = await runtime.accounts.createTenant(`tenant-${name}`, { credits: 100, tier: 'free' });
        tenants[name] = tenant.id;
        keys[name] = (await runtime.accounts.createKey(tenant.id, { collections: [name === 'hr' ? hr.id : eng.id] })).key;
      }
      keys.all = (await runtime.accounts.createKey(tenants.hr)).key;
    }, 120_000);
    afterAll(async () => {
      await api?.close();
      await stop?.();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('a key reads its collection and the pages shared with it, never the other collection', async () => {
      expect(urls(await call('/v1/search', keys.hr, { query: 'holiday', depth: 1, collection: 'hr' }))).toEqual(['https://hr.test/payroll', 'https://shared.test/calendar']);
      expect(urls(await call('/v1/search', keys.eng, { query: 'holiday', depth: 1, collection: 'eng' }))).toEqual(['https://eng.test/oncall', 'https://shared.test/calendar']);
      // A key without a list reads any collection, by name.
      expect(urls(await call('/v1/search', keys.all, { query: 'payroll', depth: 1, collection: 'eng' }))).not.toContain('https://hr.test/payroll');
    });

    it('requests without "collection" search the default collection, which holds neither', async () => {
      const found = urls(await call('/v1/search', keys.all, { query: 'holiday vacuum', depth: 1 }));
      expect(found).toContain('https://www.test/opening');
      expect(found.filter((url) => /hr\.test|eng\.test|shared\.test/.test(url))).toEqual([]);
      expect(urls(await call('/v1/search', keys.all, { query: 'holiday vacuum', depth: 1, collection: 'default' }))).toEqual(found);
    });

    it("naming the other tenant's collection is 403 collection_forbidden and charges nothing, on search and extract", async () => {
      const before = await credits('hr');
      const debits = async () => (await api.runtime.accounts.ledgerPage(tenants.hr, { limit: 100 })).filter((entry) => entry.delta < 0).length;
      const debitsBefore = await debits();
      const cases: Array<[string, Record<string, unknown>]> = [
        ['/v1/search', { query: 'holiday', depth: 1, collection: 'eng' }],
        ['/v1/search', { query: 'holiday', depth: 2, collection: 'eng' }],
        ['/v1/search', { query: 'holiday', depth: 1 }], // the default collection is not in the key's list either
        ['/v1/search', { query: 'holiday', depth: 1, collection: 'no-such' }], // an unknown name tells a limited key nothing more
        ['/v1/extract', { url: 'https://eng.test/oncall', collection: 'eng' }],
      ];
      for (const [route, body] of cases) {
        const res = await call(route, keys.hr, body);
        expect(res.statusCode, `${route} ${JSON.stringify(body)}: ${res.body}`).toBe(403);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.json()).toMatchObject({ code: 'collection_forbidden' });
      }
      expect(await credits('hr')).toBe(before);
      expect(await debits()).toBe(debitsBefore);
    });

    it('an unknown collection is 404 collection_not_found for a key without a list; the search is charged once it is served', async () => {
      const res = await call('/v1/search', keys.all, { query: 'holiday', depth: 1, collection: 'no-such' });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ code: 'collection_not_found', collection: 'no-such' });
      const before = await credits('eng');
      const served = await call('/v1/search', keys.eng, { query: 'holiday', depth: 1, collection: 'eng' });
      expect(served.statusCode, served.body).toBe(200);
      expect(await credits('eng')).toBe(before - (served.json() as { credits_used: number }).credits_used);
    });

    it('a call without credentials naming an unknown collection gets the challenge, not whether the name exists', async () => {
      const res = await app.inject({ method: 'POST', url: '/v1/search', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ query: 'holiday', depth: 1, collection: 'no-such' }) });
      expect(res.statusCode).toBe(401);
    });
  });
}

isolationSuite('embedded: SQLite, FTS5', async () => ({ overrides: {}, stop: async () => {} }));

let databases = 0;
describe.runIf(available('PostgreSQL (Debian)', existsSync('/usr/lib/postgresql')))('scaled topology', () => {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.stop());
  const postgres = async () => {
    if (!server) throw new Error('PostgreSQL did not start');
    const url = await createDatabase(server.url, `notary_collections_${process.pid}_${databases++}`);
    return { driver: 'postgres' as const, postgres_url: url };
  };

  isolationSuite('PostgreSQL storage and full-text index', async () => ({ overrides: { storage: await postgres(), indexer: { backend: 'postgres' as const } }, stop: async () => {} }));

  describe.runIf(meilisearchAvailable())('with Meilisearch', () => {
    isolationSuite('PostgreSQL storage, Meilisearch index', async () => {
      const meili = await startMeilisearch();
      const indexer = { backend: 'meilisearch' as const, meilisearch: { url: meili.url, api_key: meili.masterKey, index: 'notary_collections_test' } };
      return { overrides: { storage: await postgres(), indexer }, stop: () => meili.stop() };
    });
  });
});
