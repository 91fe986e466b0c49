import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NotaryError } from '../core/errors.js';
import { runCrawl, type RunCrawlOptions } from './crawl.js';
import { serveDirectory } from '../testkit/serve-static.js';
import { crawlTestResources, crawlerConfig, html, writeSite, type TestDb } from '../testkit/crawl-site.js';
import { fileAvailable } from '../testkit/components.js';

const resources = crawlTestResources();
const { cleanups, db } = resources;
const site = resources.site;
afterEach(resources.cleanup);

function crawl(testDb: TestDb, config: RunCrawlOptions['config'], extra: Partial<RunCrawlOptions> = {}) {
  return runCrawl({ config, pages: testDb.pages, runs: testDb.runs, frontier: testDb.frontier, ...extra });
}

async function storedUrls(testDb: TestDb): Promise<string[]> {
  const rows = await testDb.storage.db.selectFrom('pages').select('url').where('state', '!=', 'gone').orderBy('url').execute();
  return rows.map((r) => r.url);
}

describe('runCrawl scope', () => {
  it('stays on the seed host, follows <base> and relative links, never fetches other hosts', async () => {
    const other = await site({ 'index.html': html('Other', 'elsewhere') });
    const { server } = await site({
      'index.html': html('Home', `<a href="a.html#top">A</a> <a href="${other.server.url}/index.html">other host</a> <a href="mailto:x@y.z">mail</a>`),
      'a.html': html('A', '<a href="sub/b.html">B</a>'),
      'sub/b.html': html('B', '<a href="c.html">C</a>', '<base href="/base/">'),
      'base/c.html': html('C', 'end'),
    });
    const testDb = await db();
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false }), { seeds: [`${server.url}/`] });
    expect(await storedUrls(testDb)).toEqual(
      [`${server.url}/`, `${server.url}/a.html`, `${server.url}/base/c.html`, `${server.url}/sub/b.html`].sort(),
    );
    expect(other.server.requests).toEqual([]);
    expect(summary.skipped.byReason.out_of_scope).toBe(1);
    const skips = await testDb.runs.skips(summary.runId, 'out_of_scope');
    expect(skips.map((s) => s.url)).toEqual([`${other.server.url}/index.html`]);
    // The fragment was dropped, so a.html was requested once.
    expect(server.requests.filter((r) => r === '/a.html')).toHaveLength(1);
  });

  it('applies include and exclude patterns', async () => {
    const { server } = await site({
      'index.html': html('Home', '<a href="docs/1.html">1</a> <a href="docs/private/2.html">2</a> <a href="blog/3.html">3</a>'),
      'docs/1.html': html('One', 'x'),
      'docs/private/2.html': html('Two', 'y'),
      'blog/3.html': html('Three', 'z'),
    });
    const testDb = await db();
    const config = crawlerConfig({ use_sitemaps: false, include: ['/$', '/docs/'], exclude: ['/private/'] });
    const summary = await crawl(testDb, config, { seeds: [`${server.url}/`] });
    expect(await storedUrls(testDb)).toEqual([`${server.url}/`, `${server.url}/docs/1.html`]);
    expect(server.requests).not.toContain('/docs/private/2.html');
    expect(server.requests).not.toContain('/blog/3.html');
    const skips = await testDb.runs.skips(summary.runId, 'out_of_scope');
    expect(skips.map((s) => [s.url, s.detail])).toEqual(
      expect.arrayContaining([
        [`${server.url}/docs/private/2.html`, 'matches exclude /private/'],
        [`${server.url}/blog/3.html`, 'matches no include pattern'],
      ]),
    );
  });

  it('stops at max_pages and at max_depth', async () => {
    const chain: Record<string, string> = {};
    for (let i = 0; i < 10; i++) chain[`p${i}.html`] = html(`Page ${i}`, `<a href="p${i + 1}.html">next</a>`);
    const { server } = await site(chain);
    const testDb = await db();
    const byDepth = await crawl(testDb, crawlerConfig({ use_sitemaps: false, max_depth: 3 }), { seeds: [`${server.url}/p0.html`] });
    expect(await storedUrls(testDb)).toEqual(['p0', 'p1', 'p2', 'p3'].map((p) => `${server.url}/${p}.html`));
    expect(server.requests).not.toContain('/p4.html');
    expect((await testDb.runs.skips(byDepth.runId, 'max_depth')).map((s) => s.url)).toEqual([`${server.url}/p4.html`]);

    const wide = await site(
      Object.fromEntries([
        ['index.html', html('Hub', Array.from({ length: 20 }, (_, i) => `<a href="w${i}.html">${i}</a>`).join(' '))],
        ...Array.from({ length: 20 }, (_, i) => [`w${i}.html`, html(`W${i}`, `wide page ${i}`)]),
      ]),
    );
    const wideDb = await db();
    const byPages = await crawl(wideDb, crawlerConfig({ use_sitemaps: false }), { seeds: [`${wide.server.url}/`], maxPages: 5 });
    expect((await wideDb.pages.counts()).pages).toBe(5);
    expect(wide.server.requests.filter((r) => r !== '/robots.txt')).toHaveLength(5);
    expect(byPages.fetched).toBe(5);
    expect(byPages.skipped.byReason.max_pages).toBe(16);
  });

  it('rejects a missing or malformed seed with invalid_seed', async () => {
    const testDb = await db();
    await expect(crawl(testDb, crawlerConfig(), { seeds: [] })).rejects.toMatchObject({ code: 'invalid_seed' });
    const err = await crawl(testDb, crawlerConfig(), { seeds: ['ftp://example.com/'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotaryError);
    expect((err as NotaryError).code).toBe('invalid_seed');
  });
});

describe('runCrawl robots.txt, sitemaps and User-Agent', () => {
  it('never fetches what robots.txt disallows, records and logs it', async () => {
    const { server } = await site({
      'robots.txt': 'User-agent: *\nDisallow: /private/\n\nUser-agent: notary-crawler\nDisallow: /private/\nDisallow: /secret.html\n',
      'index.html': html('Home', '<a href="private/p.html">p</a> <a href="secret.html">s</a> <a href="open.html">o</a>'),
      'private/p.html': html('Private', 'no'),
      'secret.html': html('Secret', 'no'),
      'open.html': html('Open', 'yes'),
    });
    const testDb = await db();
    const logged: string[] = [];
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false }), {
      seeds: [`${server.url}/`],
      log: (level, msg) => logged.push(`${level} ${msg}`),
    });
    expect(server.requests).not.toContain('/private/p.html');
    expect(server.requests).not.toContain('/secret.html');
    expect(server.requests).toContain('/open.html');
    const skips = await testDb.runs.skips(summary.runId, 'robots_txt');
    expect(skips.map((s) => s.url).sort()).toEqual([`${server.url}/private/p.html`, `${server.url}/secret.html`]);
    expect(logged.filter((l) => l.startsWith('info robots.txt:'))).toHaveLength(2);
    expect(summary.skipped.byReason.robots_txt).toBe(2);
  });

  it('crawls a page only listed in a sitemap (robots Sitemap: line and /sitemap.xml) and sends our User-Agent everywhere', async () => {
    const files: Record<string, string> = {
      'index.html': html('Home', 'no links'),
      'hidden.html': html('Hidden', 'only in the sitemap index'),
      'listed.html': html('Listed', 'only in /sitemap.xml'),
    };
    const { dir, server } = await site(files);
    // These files name the server's port, so they are written after it started.
    writeSite(
      {
        'robots.txt': `User-agent: *\nAllow: /\nSitemap: ${server.url}/maps/index.xml\n`,
        'maps/index.xml': `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${server.url}/maps/pages.xml</loc></sitemap></sitemapindex>`,
        'maps/pages.xml': `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${server.url}/hidden.html</loc></url></urlset>`,
        'sitemap.xml': `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${server.url}/listed.html</loc></url><url><loc>http://elsewhere.invalid/x.html</loc></url></urlset>`,
      },
      dir,
    );
    const testDb = await db();
    const config = crawlerConfig({ user_agent: 'notary-test/9.9', contact_url: 'http://127.0.0.1/contact' });
    const summary = await crawl(testDb, config, { seeds: [`${server.url}/`] });
    expect(await storedUrls(testDb)).toEqual([`${server.url}/`, `${server.url}/hidden.html`, `${server.url}/listed.html`]);
    expect(summary.skipped.byReason.out_of_scope).toBe(1);
    const paths = server.log.map((entry) => entry.path);
    expect(paths).toEqual(expect.arrayContaining(['/robots.txt', '/maps/index.xml', '/maps/pages.xml', '/sitemap.xml']));
    for (const entry of server.log) expect(entry.headers['user-agent']).toBe('notary-test/9.9 (+http://127.0.0.1/contact)');
  });
});

describe('runCrawl recrawl', () => {
  it('answers 304 for unchanged pages without re-indexing them, re-indexes a changed page, marks a 404 gone', async () => {
    const { dir, server } = await site({
      'index.html': html('Home', '<a href="a.html">A</a> <a href="b.html">B</a> <a href="c.html">C</a>'),
      'a.html': html('A', 'stays the same'),
      'b.html': html('B', 'will change'),
      'c.html': html('C', 'will vanish'),
    });
    const testDb = await db();
    const config = crawlerConfig({ use_sitemaps: false });
    const first = await crawl(testDb, config, { seeds: [`${server.url}/`] });
    expect(first.fetched).toBe(4);
    const a = await testDb.pages.getByUrl(`${server.url}/a.html`);
    expect(a?.etag).toMatch(/^W\/"/);
    expect(a?.last_modified).toBeTruthy();
    expect(a?.title).toBe('A');
    // Stand-in for the indexer: every page indexed at its current hash.
    for (const page of await testDb.pages.pendingForIndex(100)) await testDb.pages.replacePassages(page, []);
    expect(await testDb.pages.pendingForIndex(100)).toEqual([]);

    writeFileSync(path.join(dir, 'b.html'), html('B', 'has changed: a longer body than before'));
    unlinkSync(path.join(dir, 'c.html'));
    server.log.length = 0;
    const second = await crawl(testDb, config, { seeds: [`${server.url}/`] });

    const answers = Object.fromEntries(server.log.map((e) => [e.path, e.status]));
    expect(answers).toMatchObject({ '/': 304, '/a.html': 304, '/b.html': 200, '/c.html': 404 });
    const aRequest = server.log.find((e) => e.path === '/a.html');
    expect(aRequest?.headers['if-none-match']).toBe(a?.etag);
    expect(second).toMatchObject({ fetched: 1, unchanged: 2, gone: 1 });
    const pending = await testDb.pages.pendingForIndex(100);
    expect(pending.map((p) => [p.url, p.state])).toEqual(
      expect.arrayContaining([
        [`${server.url}/b.html`, 'fetched'],
        [`${server.url}/c.html`, 'gone'],
      ]),
    );
    expect(pending).toHaveLength(2);
    expect((await testDb.pages.getByUrl(`${server.url}/a.html`))?.state).toBe('indexed');
  });

  it('treats a 200 with the same body as unchanged when the server has no validators', async () => {
    const { server } = await site({ 'index.html': html('Home', '<a href="a.html">A</a>'), 'a.html': html('A', 'same') }, { etag: false });
    const testDb = await db();
    const config = crawlerConfig({ use_sitemaps: false });
    await crawl(testDb, config, { seeds: [`${server.url}/`] });
    for (const page of await testDb.pages.pendingForIndex(100)) await testDb.pages.replacePassages(page, []);
    const second = await crawl(testDb, config, { seeds: [`${server.url}/`] });
    expect(second).toMatchObject({ fetched: 0, unchanged: 2 });
    expect(server.log.filter((e) => e.status === 304)).toEqual([]);
    expect(await testDb.pages.pendingForIndex(100)).toEqual([]);
  });

  it('with skipFresh leaves recently checked pages alone but still follows their stored links', async () => {
    const { server } = await site({ 'index.html': html('Home', '<a href="a.html">A</a>'), 'a.html': html('A', 'x') });
    const testDb = await db();
    const config = crawlerConfig({ use_sitemaps: false, recrawl_after_hours: 1 });
    await crawl(testDb, config, { seeds: [`${server.url}/`], maxPages: 1 });
    server.requests.length = 0;
    const second = await crawl(testDb, config, { seeds: [`${server.url}/`], skipFresh: true });
    expect(second.fresh).toBe(1);
    expect(server.requests.filter((r) => r !== '/robots.txt')).toEqual(['/a.html']);
  });
});

describe('runCrawl de-duplication and content checks', () => {
  it('stores a page under its same-host canonical URL and skips content-hash duplicates', async () => {
    const shared = html('Shared', 'the very same body');
    const { server } = await site({
      'index.html': html('Home', '<a href="print.html">print</a> <a href="copy1.html">1</a> <a href="copy2.html">2</a>'),
      'print.html': html('Article', 'printable', '<link rel="canonical" href="/article.html">'),
      'copy1.html': shared,
      'copy2.html': shared,
    });
    const testDb = await db();
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false }), { seeds: [`${server.url}/`] });
    const urls = await storedUrls(testDb);
    expect(urls).toContain(`${server.url}/article.html`);
    expect(urls).not.toContain(`${server.url}/print.html`);
    expect(server.requests).not.toContain('/article.html');
    const article = await testDb.pages.getByUrl(`${server.url}/article.html`);
    expect(article?.final_url).toBe(`${server.url}/print.html`);
    expect(urls.filter((u) => /copy[12]\.html$/.test(u))).toHaveLength(1);
    expect(summary.duplicates).toBe(1);
    const [dup] = await testDb.runs.skips(summary.runId, 'duplicate');
    expect(dup?.detail).toMatch(/^same content as .*copy[12]\.html$/);
  });

  it('skips non-HTML with its content type and bodies over max_page_bytes', async () => {
    const big = html('Big', 'x'.repeat(20_000));
    const { server } = await site({
      'index.html': html('Home', '<a href="doc.pdf">pdf</a> <a href="pic.png">png</a> <a href="big.html">big</a> <a href="ok.html">ok</a>'),
      'doc.pdf': Buffer.from('%PDF-1.4 not really'),
      'pic.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      'big.html': big,
      'ok.html': html('OK', 'small'),
    });
    const testDb = await db();
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false, max_page_bytes: 10_000 }), { seeds: [`${server.url}/`] });
    expect(await storedUrls(testDb)).toEqual([`${server.url}/`, `${server.url}/ok.html`]);
    const nonHtml = await testDb.runs.skips(summary.runId, 'non_html');
    expect(nonHtml.map((s) => [s.url, s.detail]).sort()).toEqual([
      [`${server.url}/doc.pdf`, 'application/pdf'],
      [`${server.url}/pic.png`, 'image/png'],
    ]);
    const tooLarge = await testDb.runs.skips(summary.runId, 'too_large');
    expect(tooLarge.map((s) => s.url)).toEqual([`${server.url}/big.html`]);
    expect(summary.failed).toBe(0);
  });

  it('records HTTP errors and timeouts as failures', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end(html('Home', '<a href="/boom">boom</a> <a href="/slow">slow</a> <a href="/missing">missing</a>'));
      }
      if (req.url === '/boom') return void res.writeHead(503, { 'content-type': 'text/html' }).end('down');
      if (req.url === '/missing') return void res.writeHead(404, { 'content-type': 'text/html' }).end('no');
      // /slow never answers.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const testDb = await db();
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false, request_timeout_ms: 1_000 }), { seeds: [`${base}/`] });
    expect(summary.failed).toBe(3);
    const skips = await testDb.runs.skips(summary.runId);
    const byUrl = Object.fromEntries(skips.map((s) => [s.url, [s.reason, s.detail]]));
    expect(byUrl[`${base}/boom`]).toEqual(['http_error', 'HTTP 503']);
    expect(byUrl[`${base}/missing`]).toEqual(['http_error', 'HTTP 404']);
    expect(byUrl[`${base}/slow`]?.[0]).toBe('fetch_error');
    expect(byUrl[`${base}/slow`]?.[1]).toMatch(/timed out/);
  }, 20_000);
});

describe('runCrawl redirects and streamed bodies', () => {
  it('keeps the final URL of a redirect, skips a redirect to an already queued page, and stops an oversized stream', async () => {
    const server = createServer((req, res) => {
      const page = (body: string) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(body);
      };
      switch (req.url) {
        case '/robots.txt':
          return void res.writeHead(404).end();
        case '/':
          return page(html('Home', '<a href="/old">old</a> <a href="/moved">moved</a> <a href="/new.html">new</a> <a href="/stream">stream</a>'));
        case '/old':
          return void res.writeHead(301, { location: '/renamed.html' }).end();
        case '/moved':
          return void res.writeHead(302, { location: '/new.html' }).end();
        case '/renamed.html':
          return page(html('Renamed', 'reached through a redirect'));
        case '/new.html':
          return page(html('New', 'linked directly and through a redirect'));
        case '/stream': {
          // No Content-Length: the size limit has to be enforced while the body streams in.
          res.writeHead(200, { 'content-type': 'text/html' });
          let sent = 0;
          const timer = setInterval(() => {
            if (res.destroyed || sent >= 20) return void clearInterval(timer);
            res.write('<p>' + 'y'.repeat(4_000) + '</p>');
            sent++;
            if (sent === 20) res.end();
          }, 5);
          return;
        }
        default:
          return void res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const testDb = await db();
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false, max_page_bytes: 20_000 }), { seeds: [`${base}/`] });
    expect(await storedUrls(testDb)).toEqual([`${base}/`, `${base}/new.html`, `${base}/old`]);
    expect((await testDb.pages.getByUrl(`${base}/old`))?.final_url).toBe(`${base}/renamed.html`);
    const skips = await testDb.runs.skips(summary.runId);
    expect(skips.map((s) => [s.url, s.reason, s.detail])).toEqual(
      expect.arrayContaining([
        [`${base}/moved`, 'duplicate', `redirects to ${base}/new.html`],
        [`${base}/stream`, 'too_large', 'more than max_page_bytes 20000'],
      ]),
    );
  });
});

describe('runCrawl run records', () => {
  it('records a crawl_runs row with stats and reports progress', async () => {
    const { server } = await site({
      'index.html': html('Home', '<a href="a.html">A</a> <a href="b.pdf">B</a>'),
      'a.html': html('A', 'a'),
      'b.pdf': Buffer.from('%PDF'),
    });
    const testDb = await db();
    const progress: number[] = [];
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false }), {
      seeds: [`${server.url}/`],
      onProgress: (p) => progress.push(p.fetched),
    });
    const run = await testDb.runs.get(summary.runId);
    expect(run?.finished_at).toBeTruthy();
    expect((await testDb.runs.latest())?.id).toBe(summary.runId);
    expect(JSON.parse(run?.seeds ?? '[]')).toEqual([`${server.url}/`]);
    const stats = JSON.parse(run?.stats ?? '{}') as Record<string, unknown>;
    expect(stats).toMatchObject({ fetched: 2, unchanged: 0, failed: 0, duplicates: 0, skipped: { total: 1, byReason: { non_html: 1 } } });
    expect(progress.at(-1)).toBe(2);
    expect(summary.pagesPerSecond).toBeGreaterThan(0);
  });
});

describe('runCrawl politeness and cancellation', () => {
  it('keeps per-host concurrency and the per-host delay', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const arrivals: number[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      arrivals.push(Date.now());
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const links = req.url === '/' ? Array.from({ length: 8 }, (_, i) => `<a href="/p${i}">${i}</a>`).join(' ') : 'leaf';
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(html(`Page ${req.url}`, links));
      }, 150);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const testDb = await db();
    const config = crawlerConfig({ use_sitemaps: false, max_concurrency: 8, per_host_concurrency: 2, per_host_delay_ms: 100 });
    const summary = await crawl(testDb, config, { seeds: [`${base}/`] });
    expect(summary.fetched).toBe(9);
    expect(maxInFlight).toBe(2);
    // Starts are spaced by the gate; arrivals carry some network jitter, hence the margins.
    arrivals.sort((a, b) => a - b);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(8 * 100 * 0.9);
    for (let i = 1; i < arrivals.length; i++) expect(arrivals[i]! - arrivals[i - 1]!).toBeGreaterThanOrEqual(50);
  });

  it('stops when the signal aborts and records the run as aborted', async () => {
    const pagesHtml: Record<string, string> = {};
    for (let i = 0; i < 40; i++) pagesHtml[`p${i}.html`] = html(`P${i}`, `<a href="p${i + 1}.html">next</a>`);
    const { server } = await site(pagesHtml);
    const testDb = await db();
    const controller = new AbortController();
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false, per_host_delay_ms: 50 }), {
      seeds: [`${server.url}/p0.html`],
      signal: controller.signal,
      onProgress: (p) => {
        if (p.fetched >= 3) controller.abort();
      },
    });
    expect(summary.aborted).toBe(true);
    expect(summary.fetched).toBeGreaterThanOrEqual(3);
    expect(summary.fetched).toBeLessThan(40);
    const run = await testDb.runs.get(summary.runId);
    expect(JSON.parse(run?.stats ?? '{}')).toMatchObject({ aborted: true });
  });
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A node:http server on 127.0.0.1 that records when each path was requested (robots.txt included). */
async function recordingServer(handler: Handler): Promise<{ base: string; hits: Array<{ path: string; at: number }> }> {
  const hits: Array<{ path: string; at: number }> = [];
  const server = createServer((req, res) => {
    hits.push({ path: req.url ?? '/', at: Date.now() });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

function sendPage(res: ServerResponse, title: string, body: string): void {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(html(title, body));
}

function arrivals(hits: Array<{ path: string; at: number }>, path: string): number[] {
  return hits.filter((h) => h.path === path).map((h) => h.at);
}

describe('runCrawl robots.txt Crawl-delay and Retry-After backoff', () => {
  it('spaces requests to a host by its robots.txt Crawl-delay for our agent, even with per_host_delay_ms 0', async () => {
    const { base, hits } = await recordingServer((req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end('User-agent: otherbot\nCrawl-delay: 20\n\nUser-agent: notary-crawler\nCrawl-delay: 1\nAllow: /\n');
      }
      sendPage(res, `Page ${req.url}`, req.url === '/' ? '<a href="/a.html">a</a> <a href="/b.html">b</a>' : 'leaf');
    });
    const testDb = await db();
    const logged: string[] = [];
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false, per_host_delay_ms: 0 }), {
      seeds: [`${base}/`],
      log: (level, msg) => logged.push(`${level} ${msg}`),
    });
    expect(summary.fetched).toBe(3);
    const pageStarts = hits.filter((h) => h.path !== '/robots.txt').map((h) => h.at).sort((a, b) => a - b);
    expect(pageStarts).toHaveLength(3);
    for (let i = 1; i < pageStarts.length; i++) expect(pageStarts[i]! - pageStarts[i - 1]!).toBeGreaterThanOrEqual(950);
    // Our group's 1 s, not otherbot's 20 s.
    expect(pageStarts.at(-1)! - pageStarts[0]!).toBeLessThan(5_000);
    const notes = logged.filter((l) => l.includes('Crawl-delay'));
    expect(notes).toEqual([`info robots.txt of ${base}: Crawl-delay 1 s; requests to ${new URL(base).host} start 1000 ms apart`]);
  }, 20_000);

  it('cuts a Crawl-delay above crawl_delay_max_ms to the cap with a warning, and ignores it when robots.txt is not honoured', async () => {
    const { base, hits } = await recordingServer((req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end('User-agent: *\nCrawl-delay: 3600\n');
      }
      sendPage(res, `Page ${req.url}`, req.url === '/' ? '<a href="/a.html">a</a>' : 'leaf');
    });
    const testDb = await db();
    const logged: string[] = [];
    const config = crawlerConfig({ use_sitemaps: false, per_host_delay_ms: 0, crawl_delay_max_ms: 400 });
    await crawl(testDb, config, { seeds: [`${base}/`], log: (level, msg) => logged.push(`${level} ${msg}`) });
    const [first, second] = arrivals(hits, '/').concat(arrivals(hits, '/a.html'));
    expect(second! - first!).toBeGreaterThanOrEqual(380);
    expect(second! - first!).toBeLessThan(3_000);
    expect(logged.filter((l) => l.startsWith('warn robots.txt of') && l.includes('Crawl-delay 3600 s'))).toHaveLength(1);

    hits.length = 0;
    const ignoring = await crawl(await db(), { ...config, respect_robots_txt: false, crawl_delay_max_ms: 30_000 }, { seeds: [`${base}/`] });
    expect(ignoring.fetched).toBe(2);
    expect(arrivals(hits, '/a.html')[0]! - arrivals(hits, '/')[0]!).toBeLessThan(1_000);
  }, 20_000);

  it('pauses a host that answers 429 for its Retry-After, retries the page once, and keeps crawling other hosts meanwhile', async () => {
    let busyAnswers = 0;
    const slow = await recordingServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/busy.html' && busyAnswers++ === 0) {
        return void res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/html' }).end('slow down');
      }
      sendPage(res, `Slow ${req.url}`, req.url === '/' ? '<a href="/busy.html">busy</a>' : 'finally');
    });
    const other = await recordingServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      const n = Number(/\/o(\d+)\.html/.exec(req.url ?? '')?.[1] ?? 0);
      // A chain of pages, each found only after the one before, so the other host's crawl spans the pause.
      setTimeout(() => sendPage(res, `Other ${n}`, n < 5 ? `<a href="/o${n + 1}.html">next</a>` : 'end'), 60);
    });
    const testDb = await db();
    const logged: string[] = [];
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false, per_host_delay_ms: 0 }), {
      seeds: [`${slow.base}/`, `${other.base}/o0.html`],
      log: (level, msg) => logged.push(`${level} ${msg}`),
    });
    const busy = arrivals(slow.hits, '/busy.html');
    expect(busy).toHaveLength(2);
    expect(busy[1]! - busy[0]!).toBeGreaterThanOrEqual(950);
    expect((await testDb.pages.getByUrl(`${slow.base}/busy.html`))?.title).toBe('Slow /busy.html');
    expect(summary).toMatchObject({ fetched: 8, failed: 0 });
    expect(await testDb.runs.skips(summary.runId)).toEqual([]);
    // The other host's chain went on during the pause.
    const duringPause = other.hits.filter((h) => h.at > busy[0]! && h.at < busy[1]!);
    expect(duringPause.length).toBeGreaterThanOrEqual(3);
    expect(logged.filter((l) => l.startsWith('warn'))).toEqual([]);
    expect(logged.filter((l) => l.startsWith('info HTTP 429'))).toHaveLength(1);
  }, 20_000);

  it('records a page that answers 429 twice as http_error; a 503 without Retry-After is not retried', async () => {
    const { base, hits } = await recordingServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/always-busy.html') return void res.writeHead(429, { 'retry-after': '1' }).end('slow down');
      if (req.url === '/down.html') return void res.writeHead(503).end('down');
      if (req.url === '/maintenance.html' && arrivals(hits, '/maintenance.html').length === 1) {
        return void res.writeHead(503, { 'retry-after': '0' }).end('back soon');
      }
      sendPage(res, `Page ${req.url}`, req.url === '/' ? '<a href="/always-busy.html">1</a> <a href="/down.html">2</a> <a href="/maintenance.html">3</a>' : 'ok');
    });
    const testDb = await db();
    const summary = await crawl(testDb, crawlerConfig({ use_sitemaps: false, per_host_delay_ms: 0 }), { seeds: [`${base}/`] });
    const busy = arrivals(hits, '/always-busy.html');
    expect(busy).toHaveLength(2);
    expect(busy[1]! - busy[0]!).toBeGreaterThanOrEqual(950);
    expect(arrivals(hits, '/down.html')).toHaveLength(1);
    expect(arrivals(hits, '/maintenance.html')).toHaveLength(2);
    const skips = await testDb.runs.skips(summary.runId);
    expect(skips.map((s) => [s.url, s.reason, s.detail]).sort()).toEqual([
      [`${base}/always-busy.html`, 'http_error', 'HTTP 429'],
      [`${base}/down.html`, 'http_error', 'HTTP 503'],
    ]);
    expect(summary).toMatchObject({ fetched: 2, failed: 2 });
  }, 20_000);
});

const pgDocs = process.env['NOTARY_PGDOCS_DIR'] ?? '/usr/share/doc/postgresql-doc-15/html';
describe('runCrawl on a real corpus', () => {
  it.runIf(fileAvailable('the PostgreSQL documentation (postgresql-doc-15)', path.join(pgDocs, 'index.html')))(
    'stores every page of the PostgreSQL 15 documentation served from 127.0.0.1',
    async () => {
      const expected = readdirSync(pgDocs).filter((f) => f.endsWith('.html')).length;
      const server = await serveDirectory(pgDocs);
      cleanups.push(() => server.close());
      const testDb = await db();
      const config = crawlerConfig({ use_sitemaps: false, max_concurrency: 32, per_host_concurrency: 32 });
      const summary = await crawl(testDb, config, { seeds: [`${server.url}/index.html`] });
      expect(expected).toBe(1169);
      expect((await testDb.pages.counts()).pages).toBe(expected);
      expect(summary).toMatchObject({ fetched: expected, failed: 0, duplicates: 0 });
      console.info(`postgresql-doc-15: ${expected} pages in ${(summary.elapsedMs / 1000).toFixed(1)} s, ${summary.pagesPerSecond} pages/s`);
    },
    120_000,
  );
});

/** Every count of a crawl summary adds up to the URLs it found. */
function expectCountsAddUp(s: { found: number; stored: number; duplicates: number; failed: number; skipped: { total: number }; queued: number }): void {
  expect(s.stored + s.duplicates + s.failed + s.skipped.total + s.queued).toBe(s.found);
}

describe('runCrawl scope, limits and resume (issue 12)', () => {
  it('stays under the seed folder by default; --scope host widens; the summary says what was out of scope', async () => {
    const { server } = await site({
      'en/index.html': html('EN', '<a href="a.html">a</a> <a href="../fr/index.html">fr</a> <a href="../fr/b.html">fr b</a> <a href="/about.html">about</a>'),
      'en/a.html': html('EN A', 'english a'),
      'fr/index.html': html('FR', 'french'),
      'fr/b.html': html('FR B', 'french b'),
      'about.html': html('About', 'about'),
    });
    const pathDb = await db();
    const byPath = await crawl(pathDb, crawlerConfig({ use_sitemaps: false }), { seeds: [`${server.url}/en/`] });
    expect(await storedUrls(pathDb)).toEqual([`${server.url}/en/`, `${server.url}/en/a.html`]);
    expect(byPath.scope).toBe(`scope path: under ${server.url}/en/`);
    expect(byPath.skipped.byReason.out_of_scope).toBe(3);
    expect(byPath.outOfScope).toEqual([
      { where: `${server.url}/fr/`, count: 2, why: 'outside /en/' },
      { where: `${server.url}/about.html`, count: 1, why: 'outside /en/' },
    ]);
    expectCountsAddUp(byPath);

    const hostDb = await db();
    const byHost = await crawl(hostDb, crawlerConfig({ use_sitemaps: false, scope: 'host', exclude: ['/fr/b\\.html$'] }), { seeds: [`${server.url}/en/`] });
    expect(await storedUrls(hostDb)).toEqual(['/about.html', '/en/', '/en/a.html', '/fr/index.html'].map((p) => `${server.url}${p}`));
    expect(byHost.outOfScope).toEqual([{ where: `${server.url}/fr/`, count: 1, why: 'matches exclude /fr/b\\.html$' }]);
    expectCountsAddUp(byHost);
  });

  it('max_pages counts stored pages only, never overshoots with requests in flight, and every count adds up', async () => {
    const links = [
      ...Array.from({ length: 12 }, (_, i) => `<a href="/p${i}">p${i}</a>`),
      '<a href="/copy">copy</a> <a href="/missing">404</a> <a href="/file.pdf">pdf</a> <a href="/private/x">robots</a> <a href="http://elsewhere.invalid/">other</a>',
    ].join(' ');
    const { base, hits } = await recordingServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
      if (url === '/missing') return void res.writeHead(404).end('gone');
      if (url === '/file.pdf') return void res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF');
      // /copy has the same body as the home page: a duplicate.
      const body = url === '/' || url === '/copy' ? links : `page ${url}`;
      setTimeout(() => sendPage(res, url === '/copy' ? '/' : url, body), 40);
    });
    const testDb = await db();
    const config = crawlerConfig({ use_sitemaps: false, max_concurrency: 8, per_host_concurrency: 8 });
    const summary = await crawl(testDb, config, { seeds: [`${base}/`], maxPages: 6 });
    expect(summary.stored).toBe(6);
    expect((await testDb.pages.counts()).pages).toBe(6);
    expect(summary.status).toBe('finished');
    expectCountsAddUp(summary);
    // Failures are counted once, as failures, not as skips too.
    expect(summary.skipped.byReason).not.toHaveProperty('http_error');
    expect(summary.failed).toBe(summary.failures.http_error ?? 0);
    expect(summary.skipped.byReason.robots_txt).toBe(1);
    expect(summary.skipped.byReason.out_of_scope).toBe(1);
    // What the budget left unfetched is reported as max_pages, never fetched.
    const pageHits = hits.filter((h) => /^\/p\d+$/.test(h.path)).length;
    expect(summary.skipped.byReason.max_pages).toBe(12 - pageHits + (hits.some((h) => h.path === '/copy') ? 0 : 1) + (hits.some((h) => h.path === '/missing') ? 0 : 1) + (hits.some((h) => h.path === '/file.pdf') ? 0 : 1));

    const wholeDb = await db();
    const whole = await crawl(wholeDb, config, { seeds: [`${base}/`], maxPages: 100 });
    expect(whole).toMatchObject({ stored: 13, duplicates: 1, failed: 1, failures: { http_error: 1 }, queued: 0, found: 18 });
    expect(whole.skipped.byReason).toEqual({ non_html: 1, robots_txt: 1, out_of_scope: 1 });
    expectCountsAddUp(whole);
  });

  it('a stopped crawl resumes from its frontier without fetching a stored page again', async () => {
    const chain: Record<string, string> = {};
    for (let i = 0; i < 30; i++) chain[`p${i}.html`] = html(`P${i}`, `<a href="p${i + 1}.html">next</a> <a href="p${(i * 7) % 30}.html">jump</a>`);
    const { server } = await site(chain);
    const testDb = await db();
    const controller = new AbortController();
    const config = crawlerConfig({ use_sitemaps: false, per_host_delay_ms: 20, per_host_concurrency: 2 });
    const first = await crawl(testDb, config, {
      seeds: [`${server.url}/p0.html`],
      signal: controller.signal,
      onProgress: (p) => {
        if (p.fetched >= 5) controller.abort();
      },
    });
    expect(first.status).toBe('stopped');
    expect(first.queued).toBeGreaterThan(0);
    expectCountsAddUp(first);
    expect((await testDb.runs.get(first.runId))?.status).toBe('stopped');
    const storedFirst = new Set((await storedUrls(testDb)).map((u) => new URL(u).pathname));
    const requestsBefore = server.requests.length;

    const resumable = await testDb.runs.latestResumable();
    expect(resumable?.id).toBe(first.runId);
    const second = await crawl(testDb, config, { resume: resumable! });
    expect(second.status).toBe('finished');
    expect(second.resumedFrom).toBe(first.runId);
    expect(second.storedBefore).toBe(storedFirst.size);
    expect(second.stored).toBe(30);
    expectCountsAddUp(second);
    const fetchedAgain = server.requests.slice(requestsBefore).filter((p) => storedFirst.has(p));
    expect(fetchedAgain).toEqual([]);
    expect((await storedUrls(testDb)).length).toBe(30);
    expect(await testDb.runs.latestResumable()).toBeUndefined();
    expect((await testDb.frontier.counts(second.runId)).queued).toBe(0);
  });
});
