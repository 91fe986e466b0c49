import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlPageFetched } from '../storage/pages.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { runCli } from '../testkit/cli.js';

function page(title: string, topic: string): string {
  const words = `${topic} `.repeat(6) + 'the team keeps this page current with the schedule, the contacts and the rules that apply to everyone';
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${words}.</p><p>${words} again.</p></main></body></html>`;
}

/**
 * Issue 33, item 1: a collection's own prices per depth and its own maximum depth. A search of it is quoted and
 * charged from its prices; a depth above its maximum is 400 depth_out_of_range, charging nothing; the default
 * collection keeps the price list's.
 */
describe("collections' own prices and maximum depth (POST /v1/search)", () => {
  let dir: string;
  let api: ApiHarness;
  let app: FastifyInstance;
  let key = '';
  let tenantId = '';

  const search = (body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/v1/search', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, payload: JSON.stringify(body) });
  const credits = async () => (await api.runtime.accounts.getTenant(tenantId)).credits;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-collection-settings-'));
    api = await startApi(apiTestConfig(dir, { search: { max_depth: 3 }, pricing: { search: { credits_by_depth: [1, 1, 2] } } }));
    app = api.app;
    const { runtime } = api;
    const premium = await runtime.collections.ensure('premium');
    const shallow = await runtime.collections.ensure('shallow');
    const stored: Array<[string, string, string]> = [
      ['https://premium.test/report', page('Market report', 'holiday market report'), premium.id],
      ['https://shallow.test/faq', page('Holiday FAQ', 'holiday faq answers'), shallow.id],
    ];
    for (const [url, html, id] of stored) {
      await runtime.pages.saveFetched(htmlPageFetched(url, html));
      await runtime.pages.joinCollection(url, id);
    }
    await runtime.indexer().runOnce();
    await runtime.collections.setSettings('premium', { creditsByDepth: [3, 7] });
    await runtime.collections.setSettings('shallow', { maxDepth: 1 });
    const tenant = await runtime.accounts.createTenant('settings', { credits: 100 });
    tenantId = tenant.id;
    key = (await runtime.accounts.createKey(tenant.id)).key;
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("charges a search of a collection from the collection's prices, past its last entry at the last", async () => {
    for (const [depth, price] of [
      [1, 3],
      [2, 7],
      [3, 7],
    ] as const) {
      const before = await credits();
      const res = await search({ query: 'holiday market', depth, collection: 'premium' });
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as { credits_used: number }).credits_used).toBe(price);
      expect(await credits()).toBe(before - price);
    }
    // The default collection keeps the price list's.
    const before = await credits();
    const plain = await search({ query: 'holiday', depth: 3 });
    expect(plain.statusCode, plain.body).toBe(200);
    expect((plain.json() as { credits_used: number }).credits_used).toBe(2);
    expect(await credits()).toBe(before - 2);
  });

  it('refuses a depth above the collection’s maximum with 400 depth_out_of_range naming it, charging nothing', async () => {
    const before = await credits();
    const res = await search({ query: 'holiday faq', depth: 2, collection: 'shallow' });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'depth_out_of_range', max_depth: 1, collection: 'shallow' });
    expect(await credits()).toBe(before);
    const ok = await search({ query: 'holiday faq', depth: 1, collection: 'shallow' });
    expect(ok.statusCode, ok.body).toBe(200);
  });
});

describe('notary collections set --prices / --max-depth', () => {
  const env = { NOTARY_EMBEDDING_MODEL: 'off', NOTARY_MODEL_DOWNLOAD: 'false' };
  it('sets, shows and resets a collection’s own prices and maximum depth; refuses bad values naming the rule', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-cli-collection-settings-'));
    try {
      const cli = (args: string[]) => runCli([...args, '--data', dataDir], env);
      expect((await cli(['collections', 'create', 'docs'])).code).toBe(0);
      const set = await cli(['collections', 'set', 'docs', '--prices', '2,4', '--max-depth', '2']);
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toMatch(/^docs {2}col_\w+ {2}private {2}prices 2,4 {2}max depth 2$/m);
      const reset = await cli(['collections', 'set', 'docs', '--prices', 'default', '--max-depth', 'default', '--public']);
      expect(reset.stdout).toMatch(/^docs {2}col_\w+ {2}public {2}prices default {2}max depth default$/m);
      const bad = await cli(['collections', 'set', 'docs', '--max-depth', '9']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('search.max_depth');
      expect((await cli(['keys', 'create', '--tenant', 'acme'])).code).toBe(0);
      const limited = await cli(['collections', 'tenant', 'acme', 'docs']);
      expect(limited.stdout, limited.stderr).toMatch(/^acme {2}reads docs$/m);
      const list = await cli(['collections', 'list']);
      expect(list.stdout).toMatch(/^docs .* prices default {2}max depth default /m);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
