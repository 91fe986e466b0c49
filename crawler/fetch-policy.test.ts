import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AddressPolicy, HostResolver } from '../extract/fetch/index.js';
import { runCrawl, type RunCrawlOptions } from './crawl.js';
import type { StaticServer } from '../testkit/serve-static.js';
import { crawlTestResources, crawlerConfig, html, writeSite } from '../testkit/crawl-site.js';

/**
 * The crawler's own requests (pages, redirects, robots.txt, sitemaps, the browser's subrequests) pass the address
 * policy of /v1/extract. The seed site lives on 127.0.0.1 (its origin is allowed because the operator named it); an
 * "intranet" server on another port of 127.0.0.1 stands for every private address a page could point the crawler at.
 */
const resources = crawlTestResources();
const { cleanups, db } = resources;
const serve = resources.site;
afterEach(resources.cleanup);

/** Names that resolve to a private address, and to the cloud metadata address. */
function resolverFor(intranetHost: string): HostResolver {
  return async (host) => {
    if (host === 'intranet.test') return [{ address: intranetHost, family: 4 }];
    if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'metadata.test') return [{ address: '169.254.169.254', family: 4 }];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };
}

async function hostileSite(intranet: StaticServer): Promise<StaticServer> {
  const port = new URL(intranet.url).port;
  const targets = [
    `${intranet.url}/secret.html`,
    `http://localhost:${port}/secret.html`,
    `http://[::ffff:127.0.0.1]:${port}/secret.html`,
    `http://intranet.test:${port}/secret.html`,
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
    'http://[fe80::1]/',
    'http://metadata.test/computeMetadata/v1/',
  ];
  const { dir, server } = await serve({ 'index.html': html('Home', targets.map((t, i) => `<a href="${t}">t${i}</a>`).join(' ')) });
  writeSite(
    {
      'robots.txt': `User-agent: *\nAllow: /\nSitemap: ${intranet.url}/sitemap.xml\nSitemap: http://169.254.169.254/sitemap.xml\n`,
    },
    dir,
  );
  return server;
}

async function crawlHostile(policy: RunCrawlOptions['addressPolicy']) {
  const intranet = await serve({ 'secret.html': html('Secret', 'internal only'), 'sitemap.xml': '<urlset/>' });
  const seed = await hostileSite(intranet.server);
  const testDb = await db();
  const problems: string[] = [];
  const summary = await runCrawl({
    config: crawlerConfig({ scope: 'any', max_depth: 2 }),
    pages: testDb.pages,
    runs: testDb.runs,
    frontier: testDb.frontier,
    seeds: [`${seed.url}/`],
    log: (level, msg) => {
      if (level === 'warn') problems.push(msg);
    },
    ...(policy ? { addressPolicy: policy } : {}),
  });
  const blocked = await testDb.runs.skips(summary.runId, 'blocked_address');
  return { intranet: intranet.server, seed, summary, blocked: blocked.map((s) => s.url), problems, testDb };
}

describe("the crawler's fetches pass /v1/extract's address policy", () => {
  it('refuses private and metadata addresses by default: links, sitemaps named by robots.txt, redirects', async () => {
    const { intranet, summary, blocked, problems } = await crawlHostile({ allowPrivateNetworks: false, resolver: resolverFor('127.0.0.1') });
    expect(intranet.requests).toEqual([]);
    expect(blocked).toHaveLength(8);
    expect(blocked).toEqual(expect.arrayContaining(['http://169.254.169.254/latest/meta-data/', 'http://metadata.test/computeMetadata/v1/']));
    expect(problems.filter((p) => /sitemap .*could not be fetched: .*resolves to/.test(p))).toHaveLength(2);
    expect(summary.failed).toBe(0);
  });

  it('with private networks allowed reaches the intranet, but never link-local or metadata addresses', async () => {
    const { intranet, blocked } = await crawlHostile({ allowPrivateNetworks: true, resolver: resolverFor('127.0.0.1') });
    expect(intranet.requests).toEqual(expect.arrayContaining(['/robots.txt', '/sitemap.xml', '/secret.html']));
    expect(blocked.sort()).toEqual(
      ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/', 'http://[fe80::1]/', 'http://metadata.test/computeMetadata/v1/'].sort(),
    );
  });

  it('with allowed_private_ranges reaches only the listed ranges', async () => {
    const policy: AddressPolicy = { allowPrivateNetworks: false, allowedPrivateRanges: ['127.0.0.0/8'], resolver: resolverFor('10.1.2.3') };
    const { intranet, blocked } = await crawlHostile(policy);
    expect(intranet.requests).toContain('/secret.html');
    // intranet.test now resolves to 10.1.2.3, outside the listed range.
    expect(blocked).toContain(`http://intranet.test:${new URL(intranet.url).port}/secret.html`);
    expect(blocked).toContain('http://169.254.169.254/latest/meta-data/');
  });

  it('vets every redirect of a page fetch', async () => {
    const intranet = await serve({ 'secret.html': html('Secret', 'internal only') });
    const redirector = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end(html('Home', '<a href="/jump">jump</a> <a href="/meta">meta</a>'));
      }
      if (req.url === '/jump') return void res.writeHead(302, { location: `${intranet.server.url}/secret.html` }).end();
      if (req.url === '/meta') return void res.writeHead(302, { location: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/' }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => { redirector.closeAllConnections(); redirector.close(() => resolve()); }));
    const base = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    const testDb = await db();
    const summary = await runCrawl({ config: crawlerConfig({ use_sitemaps: false }), pages: testDb.pages, runs: testDb.runs, frontier: testDb.frontier, seeds: [`${base}/`] });
    expect(intranet.server.requests).toEqual([]);
    const blocked = await testDb.runs.skips(summary.runId, 'blocked_address');
    expect(blocked.map((s) => s.url).sort()).toEqual([`${base}/jump`, `${base}/meta`]);
  });

  it("puts the browser engine's page and script requests through the same policy", async () => {
    const intranet = await serve({ 'secret.html': html('Secret', 'internal only'), 'pixel.png': 'x' });
    const script = `<script>
      fetch('${intranet.server.url}/secret.html').catch(() => {});
      const img = document.createElement('img'); img.src = '${intranet.server.url}/pixel.png'; document.body.append(img);
      const p = document.createElement('p'); p.textContent = 'rendered text'; document.body.append(p);
    </script>`;
    const seed = await serve({
      'index.html': `<!doctype html><html><head><title>Shell</title></head><body><a href="${intranet.server.url}/secret.html">in</a>${script}</body></html>`,
    });
    const testDb = await db();
    const summary = await runCrawl({
      config: crawlerConfig({ renderer: 'browser', use_sitemaps: false, scope: 'any', max_concurrency: 2, request_timeout_ms: 20_000 }),
      pages: testDb.pages,
      runs: testDb.runs,
      frontier: testDb.frontier,
      seeds: [`${seed.server.url}/`],
    });
    expect((await testDb.pages.getByUrl(`${seed.server.url}/`))?.html).toContain('rendered text');
    expect(intranet.server.requests).toEqual([]);
    const blocked = await testDb.runs.skips(summary.runId, 'blocked_address');
    expect(blocked.map((s) => s.url)).toEqual([`${intranet.server.url}/secret.html`]);
  }, 60_000);
});
