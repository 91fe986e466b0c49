import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEnvelope } from '../payments/modes/mpp/index.js';
import { publicKeyFromSeed } from '../payments/crypto/ed25519.js';
import { toBase64Url } from '../payments/crypto/encoding.js';
import { seedWorker } from '../cli/crawl-worker.js';
import { html, writeSite } from '../testkit/crawl-site.js';
import { serveDirectory } from '../testkit/serve-static.js';
import { startDashboard, type DashboardHarness } from './support/dashboard.js';
import { until } from '../testkit/until.js';

/**
 * Issue 33, items 1 and 4: operators make collections from the dashboard, give them their own prices and deepest
 * search, and point seeds at them; the crawl worker crawls a seed into its collection, and a search of it is charged
 * its prices.
 */
describe('dashboard: collections and the seeds that fill them', () => {
  let h: DashboardHarness;
  beforeAll(async () => {
    h = await startDashboard({ crawler: { per_host_delay_ms: 0, respect_robots_txt: false, use_sitemaps: false }, dashboard: { seed_poll_s: 1 } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates a collection, sets its prices and depth, crawls a seed into it, and charges its searches its prices', async () => {
    const operator = await h.operator();
    const made = await operator.post('operator/collections', { name: 'manuals' });
    expect(made.status, made.text).toBe(201);
    expect(made.body['collection']).toMatchObject({ name: 'manuals', public: false, pages: 0, credits_by_depth: null, max_depth: null, seeds: [] });
    expect((await operator.post('operator/collections', { name: 'manuals' })).body['code']).toBe('invalid_collection');
    expect((await operator.post('operator/collections', { name: 'Not A Name' })).body['code']).toBe('invalid_collection');

    const bad = await operator.request('PATCH', 'operator/collections/manuals', { body: { max_depth: 9 } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_settings' });
    expect(bad.body['detail']).toContain('search.max_depth');
    const set = await operator.request('PATCH', 'operator/collections/manuals', { body: { credits_by_depth: [5, 9], max_depth: 1, public: true } });
    expect(set.status, set.text).toBe(200);
    expect(set.body['collection']).toMatchObject({ public: true, credits_by_depth: [5, 9], max_depth: 1 });
    expect((await operator.request('PATCH', 'operator/collections/nope', { body: { max_depth: 1 } })).body['code']).toBe('collection_not_found');

    const files: Record<string, string> = { 'index.html': html('Manual index', '<a href="a.html">a</a> <a href="b.html">b</a>') };
    for (const name of ['a', 'b']) files[`${name}.html`] = html(`Manual ${name}`, `<p>${`The gearbox manual ${name} explains lubrication intervals. `.repeat(20)}</p>`);
    const site = await serveDirectory(writeSite(files));
    const stop = new AbortController();
    let worker: Promise<void> = Promise.resolve();
    try {
      const seed = await operator.post('operator/seeds', { url: `${site.url}/index.html`, collection: 'manuals' });
      expect(seed.status, seed.text).toBe(201);
      expect((seed.body['seed'] as { options: { collection: string } }).options.collection).toBe('manuals');
      worker = seedWorker(h.runtime, undefined, stop.signal, () => {});
      const id = (await h.runtime.collections.byName('manuals'))?.id ?? '';
      await until(async () => ((await h.runtime.collections.pageCounts()).get(id) === 3 ? true : undefined), 'the seed to be crawled into its collection');
    } finally {
      stop.abort();
      await worker;
      await site.close();
    }
    const listed = await operator.get('operator/collections');
    const manuals = (listed.body['collections'] as Array<Record<string, unknown>>).find((c) => c['name'] === 'manuals');
    expect(manuals).toMatchObject({ pages: 3, seeds: [`${site.url}/index.html`] });
    const prices = (await operator.get('operator/pricing')).body as { pricing: { search: { credits_by_depth: number[] } } };
    expect(listed.body['defaults']).toMatchObject({ credits_by_depth: prices.pricing.search.credits_by_depth });

    await h.runtime.indexer().runOnce();
    const tenant = await h.runtime.accounts.createTenant('reader', { credits: 50 });
    const { key } = await h.runtime.accounts.createKey(tenant.id);
    const found = await h.call(key, { query: 'gearbox lubrication', depth: 1, collection: 'manuals' });
    expect(found.status, found.text).toBe(200);
    expect(found.body['credits_used']).toBe(5);
    expect((found.body['results'] as Array<{ url: string }>).every((r) => r.url.startsWith(site.url))).toBe(true);
    const deep = await h.call(key, { query: 'gearbox lubrication', depth: 2, collection: 'manuals' });
    expect(deep.status).toBe(400);
    expect(deep.body).toMatchObject({ code: 'depth_out_of_range', max_depth: 1 });
    expect((await h.runtime.accounts.getTenant(tenant.id)).credits).toBe(45);
  });
  it("limits a tenant to collections; its members' keys are made within the limit", async () => {
    const operator = await h.operator();
    await operator.post('operator/collections', { name: 'wiki' });
    await operator.post('operator/collections', { name: 'payroll' });
    const member = await h.member('limited@collections.test', 'Limited Co');
    const tenantId = ((await member.get('tenant')).body['tenant'] as { id: string }).id;
    const set = await operator.request('PUT', `operator/tenants/${tenantId}/collections`, { body: { collections: ['wiki'] } });
    expect(set.status, set.text).toBe(200);
    const listed = (await operator.get('operator/tenants')).body['tenants'] as Array<{ id: string; collections: string[] | null }>;
    expect(listed.find((t) => t.id === tenantId)?.collections).toEqual(['wiki']);
    // The operator lets this tenant's crawl jobs reach private addresses (issue 33: per tenant).
    const opened = await operator.request('PATCH', `operator/tenants/${tenantId}`, { body: { allow_private_networks: true } });
    expect(opened.status, opened.text).toBe(200);
    const after = (await operator.get('operator/tenants')).body['tenants'] as Array<{ id: string; allow_private_networks: boolean }>;
    expect(after.find((t) => t.id === tenantId)?.allow_private_networks).toBe(true);
    expect((await operator.request('PUT', `operator/tenants/${tenantId}/collections`, { body: { collections: ['nope'] } })).body['code']).toBe('collection_not_found');
    expect(((await member.get('tenant')).body['tenant'] as { collections: string[] | null }).collections).toEqual(['wiki']);

    const outside = await member.post('keys', { name: 'payroll key', collections: ['payroll'] });
    expect(outside.status).toBe(403);
    expect(outside.body['code']).toBe('collection_forbidden');
    const inside = await member.post('keys', { name: 'wiki key', collections: ['wiki'] });
    expect(inside.status, inside.text).toBe(201);
    // An unlimited key of the tenant still reads only the tenant's collections.
    const open = await member.post('keys', { name: 'open key' });
    const searched = await h.call(open.body['key'] as string, { query: 'gearbox', depth: 1, collection: 'payroll' });
    expect(searched.status).toBe(403);
    expect(searched.body['code']).toBe('collection_forbidden');
  });

  it("limits a party key to collections within its tenant's limit; envelopes it signs read only those", async () => {
    const operator = await h.operator();
    await operator.post('operator/collections', { name: 'handbook' });
    await operator.post('operator/collections', { name: 'secrets' });
    await operator.post('operator/collections', { name: 'archive' });
    const member = await h.member('parties@collections.test', 'party-co');
    const tenantId = ((await member.get('tenant')).body['tenant'] as { id: string }).id;
    expect((await operator.request('PUT', `operator/tenants/${tenantId}/collections`, { body: { collections: ['handbook', 'archive'] } })).status).toBe(200);

    const seed = new Uint8Array(randomBytes(32));
    const publicKey = toBase64Url(publicKeyFromSeed(seed));
    const outside = await member.post('party-keys', { public_key: publicKey, collections: ['secrets'] });
    expect([outside.status, outside.body['code']]).toEqual([403, 'collection_forbidden']);
    const missing = await member.post('party-keys', { public_key: publicKey, collections: ['nope'] });
    expect([missing.status, missing.body['code']]).toEqual([404, 'collection_not_found']);
    expect(((await member.get('party-keys')).body['keys'] as unknown[]).length).toBe(0);

    const made = await member.post('party-keys', { public_key: publicKey, name: 'handbook agent', collections: ['handbook'] });
    expect(made.status, made.text).toBe(201);
    expect(made.body['key']).toMatchObject({ name: 'handbook agent', collections: ['handbook'] });
    const listed = (await member.get('party-keys')).body['keys'] as Array<{ collections: string[] | null }>;
    expect(listed.map((k) => k.collections)).toEqual([['handbook']]);

    const balance = async () => ((await member.get('tenant')).body['tenant'] as { credits: number }).credits;
    const before = await balance();
    const search = async (collection: string) => {
      const body = JSON.stringify({ query: 'leave policy', depth: 1, collection });
      const { encoded } = buildEnvelope({ method: 'POST', url: `${h.url}/v1/search`, body, totalCredits: 5, parties: [{ party: 'party-co', share: '1', seed }] });
      const res = await fetch(`${h.url}/v1/search`, { method: 'POST', headers: { authorization: `MPP envelope=${encoded}`, 'content-type': 'application/json' }, body });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const allowed = await search('handbook');
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    // archive: the tenant may read it, this key may not; secrets: neither.
    for (const collection of ['archive', 'secrets']) {
      const refused = await search(collection);
      expect([refused.status, refused.body['code']], collection).toEqual([403, 'collection_forbidden']);
    }
    expect(await balance()).toBe(before - (allowed.body['credits_used'] as number));
  });
});
