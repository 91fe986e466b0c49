import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotaryConfig } from '../core/config.js';
import { normaliseUrl } from '../crawler/index.js';
import { htmlPageFetched } from '../storage/pages.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { startTestServer, type TestServer } from '../testkit/upstream-server.js';

/** POST /v1/map through the real app: pages and frontier rows in SQLite, a site with robots.txt and sitemaps on 127.0.0.1. */
let site: TestServer;
const dirs: string[] = [];

const xml = (urls: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(body);
};

beforeAll(async () => {
  let origin = '';
  site = await startTestServer({
    // robots.txt names the site's own sitemap and one on the metadata address; /sitemap.xml redirects to metadata.
    '/robots.txt': (req, res) => send(200, 'text/plain', `User-agent: *\nAllow: /\nSitemap: ${origin}/maps/a.xml\nSitemap: http://169.254.169.254/latest/sitemap.xml\n`)(req, res),
    '/maps/a.xml': (req, res) => send(200, 'application/xml', xml([`${origin}/docs/s1`, `${origin}/docs/s2`, `${origin}/docs/a`, `${origin}/blog/x`]))(req, res),
    '/sitemap.xml': send(302, 'text/plain', '', { location: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/' }),
  });
  origin = site.origin;
});

afterAll(async () => {
  await site?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function config(allowPrivate: boolean): NotaryConfig {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-map-'));
  dirs.push(dir);
  return apiTestConfig(dir, { extract: { allow_private_networks: allowPrivate }, default_tier: 'bulk', server: { body_limit_bytes: 16_384 } });
}

interface MapAnswer {
  url: string;
  urls: Array<{ url: string; source: string; title?: string; last_crawled_at?: string }>;
  next_cursor: string | null;
  sitemap_error?: string;
  credits_used: number;
}

async function withTenant(api: ApiHarness): Promise<{ post: (body: unknown) => Promise<{ status: number; body: MapAnswer & { code?: string } }>; credits: () => Promise<number> }> {
  const tenant = await api.runtime.accounts.createTenant(`mapper-${Math.random().toString(36).slice(2)}`, { credits: 100 });
  const { key } = await api.runtime.accounts.createKey(tenant.id);
  return {
    post: async (body) => {
      const res = await api.app.inject({ method: 'POST', url: '/v1/map', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
      return { status: res.statusCode, body: res.json() };
    },
    credits: async () => (await api.runtime.accounts.getTenant(tenant.id)).credits,
  };
}

const u = (p: string) => normaliseUrl(`${site.origin}${p}`) ?? '';

async function seed(api: ApiHarness): Promise<void> {
  const pages = api.runtime.pages;
  await pages.saveFetched({ ...htmlPageFetched(u('/docs/a'), '<p>a</p>'), title: 'Page A' });
  await pages.saveFetched(htmlPageFetched(u('/docs/b'), '<p>b</p>'));
  await pages.saveFetched(htmlPageFetched(u('/blog/y'), '<p>y</p>'));
  await pages.saveFetched(htmlPageFetched(u('/docs/gone'), '<p>g</p>'));
  await pages.markGone(u('/docs/gone'), 404);
  await api.runtime.frontier.add('run_map', [{ url: u('/docs/c'), depth: 1 }]);
  await api.runtime.frontier.addDone('run_map', [{ url: u('/docs/b'), depth: 1 }], 'stored');
  await api.runtime.frontier.addDone('run_map', [{ url: u('/docs/failed'), depth: 1 }], 'http_500');
}

describe('POST /v1/map', () => {
  it('lists the index, frontier and sitemap URLs under the folder, paged without duplicates or gaps, 1 credit a page', async () => {
    const api = await startApi(config(true));
    try {
      await seed(api);
      const { post, credits } = await withTenant(api);
      const seen: MapAnswer['urls'] = [];
      let cursor: string | null = null;
      let pagesRead = 0;
      do {
        const res: { status: number; body: MapAnswer } = await post({ url: `${site.origin}/docs/`, limit: 2, ...(cursor ? { cursor } : {}) });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.urls.length).toBeLessThanOrEqual(2);
        expect(res.body.credits_used).toBe(1);
        // The metadata sitemap (robots.txt) and the redirect to metadata (/sitemap.xml) are skipped and reported.
        expect(res.body.sitemap_error).toMatch(/169\.254\.169\.254/);
        expect(res.body.sitemap_error).toMatch(/a9fe|169\.254/);
        seen.push(...res.body.urls);
        cursor = res.body.next_cursor;
        pagesRead++;
      } while (cursor !== null && pagesRead < 10);
      expect(seen).toEqual([
        { url: u('/docs/a'), source: 'index', title: 'Page A', last_crawled_at: expect.any(String) },
        { url: u('/docs/b'), source: 'index', last_crawled_at: expect.any(String) },
        { url: u('/docs/c'), source: 'frontier' },
        { url: u('/docs/s1'), source: 'sitemap' },
        { url: u('/docs/s2'), source: 'sitemap' },
      ]);
      expect(pagesRead).toBe(3);
      expect(await credits()).toBe(97);

      // Without sitemaps: the index and the frontier alone; no sitemap is read.
      const hits = site.hits.length;
      const bare = await post({ url: `${site.origin}/docs/`, sitemaps: false });
      expect(bare.body.urls.map((e) => e.url)).toEqual([u('/docs/a'), u('/docs/b'), u('/docs/c')]);
      expect(bare.body.sitemap_error).toBeUndefined();
      expect(site.hits.length).toBe(hits);

      // A cursor of another listing, or not ours: 422 invalid_cursor, nothing charged.
      const first = await post({ url: `${site.origin}/docs/`, limit: 1 });
      const before = await credits();
      for (const body of [
        { url: `${site.origin}/blog/`, cursor: first.body.next_cursor },
        { url: `${site.origin}/docs/`, cursor: first.body.next_cursor, sitemaps: false },
        { url: `${site.origin}/docs/`, cursor: 'not-a-cursor' },
      ]) {
        const res = await post(body);
        expect(res.status).toBe(422);
        expect(res.body.code).toBe('invalid_cursor');
      }
      expect(await credits()).toBe(before);
    } finally {
      await api.close();
    }
  });

  it('a site whose sitemaps cannot be fetched still answers with the index, saying so in sitemap_error', async () => {
    const api = await startApi(config(true));
    try {
      const closed = await startTestServer({});
      const origin = closed.origin;
      await closed.close();
      await api.runtime.pages.saveFetched({ ...htmlPageFetched(normaliseUrl(`${origin}/p/one`) ?? '', '<p>1</p>'), title: 'One' });
      const { post } = await withTenant(api);
      const res = await post({ url: `${origin}/p/` });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.urls).toEqual([{ url: normaliseUrl(`${origin}/p/one`), source: 'index', title: 'One', last_crawled_at: expect.any(String) }]);
      expect(res.body.sitemap_error).toEqual(expect.any(String));
    } finally {
      await api.close();
    }
  });

  it('lists the index entries of the named collection alone (frontier rows belong to none: left out)', async () => {
    const api = await startApi(config(true));
    try {
      await seed(api);
      const priv = await api.runtime.collections.ensure('private');
      await api.runtime.pages.saveFetched(htmlPageFetched(u('/docs/p'), '<p>p</p>'));
      await api.runtime.pages.joinCollection(u('/docs/p'), priv.id);
      const { post } = await withTenant(api);
      const def = await post({ url: `${site.origin}/docs/`, sitemaps: false });
      expect(def.body.urls.map((e) => e.url)).toEqual([u('/docs/a'), u('/docs/b')]);
      const named = await post({ url: `${site.origin}/docs/`, sitemaps: false, collection: 'private' });
      expect(named.body.urls.map((e) => e.url)).toEqual([u('/docs/p')]);
    } finally {
      await api.close();
    }
  });
});

describe('POST /v1/map: SSRF', () => {
  it('refuses loopback, localhost, metadata and IPv4-mapped metadata sites with 403 blocked_address, charging nothing', async () => {
    // A public-looking name that resolves to the metadata address (DNS rebinding) is checked by its address.
    const resolver = async (host: string) => [{ address: host === 'rebound.test' ? '169.254.169.254' : '127.0.0.1', family: 4 as const }];
    const api = await startApi(config(false), { deps: { resolver } });
    try {
      const { post, credits } = await withTenant(api);
      const hits = site.hits.length;
      for (const url of [
        `${site.origin}/docs/`,
        `http://localhost:${site.port}/docs/`,
        'http://169.254.169.254/latest/',
        'http://[::ffff:a9fe:a9fe]/latest/',
        'http://[::ffff:7f00:1]/',
        'http://0.0.0.0/',
        'http://rebound.test/docs/',
      ]) {
        const res = await post({ url });
        expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(403);
        expect(res.body.code, url).toBe('blocked_address');
      }
      // The dotted IPv4-mapped spelling is no URL the API takes.
      const dotted = await post({ url: 'http://[::ffff:169.254.169.254]/latest/' });
      expect([dotted.status, dotted.body.code]).toEqual([400, 'invalid_url']);
      expect(await credits()).toBe(100);
      // Nothing reached the site: neither robots.txt nor a sitemap.
      expect(site.hits.length).toBe(hits);
    } finally {
      await api.close();
    }
  });
});
