import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCrawl } from './crawl.js';
import { FrontierStore } from '../storage/frontier.js';
import { crawlTestResources, crawlerConfig, html, type TestDb } from '../testkit/crawl-site.js';

const resources = crawlTestResources();
const { cleanups, db } = resources;
afterEach(resources.cleanup);

/**
 * A site of `pages` pages (each links to the next three and further on, so the frontier stays long) where some pages stall in each
 * way a server can: accept and never answer, send headers and never the body, trickle the body a byte at a time, and
 * answer only after the request timeout. Counts what it was asked.
 */
async function stallingSite(pages: number) {
  const open = new Set<ServerResponse>();
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    open.add(res);
    res.on('close', () => open.delete(res));
    const url = req.url ?? '/';
    if (url === '/robots.txt') return void res.writeHead(404).end();
    const n = Number(/^\/p(\d+)\.html$/.exec(url)?.[1] ?? (url === '/' ? 0 : NaN));
    if (!Number.isInteger(n) || n >= pages) return void res.writeHead(404, { 'content-type': 'text/html' }).end('no');
    const links = [n + 1, n + 2, n + 3, n * 3 + 1, n * 3 + 2].filter((k, i, all) => all.indexOf(k) === i).filter((k) => k < pages).map((k) => `<a href="/p${k}.html">p${k}</a>`).join(' ');
    const body = html(`Page ${n}`, `page ${n} ${links}`);
    if (n % 37 === 5) return; // never answers
    if (n % 41 === 6) return void res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(body.length) }); // headers, no body
    if (n % 43 === 7) {
      res.writeHead(200, { 'content-type': 'text/html' });
      const timer = setInterval(() => res.write(' '), 300); // trickles past any total timeout
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (n % 47 === 8) return void setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(body), 3_000); // after the timeout
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests, open: () => open.size };
}

describe('a crawl against pages that stall', () => {
  it('ends, within its bounds, with every stalled page recorded as a timeout and nothing left leased', async () => {
    const site = await stallingSite(400);
    const testDb = await db();
    const started = Date.now();
    const summary = await runCrawl({
      config: crawlerConfig({ use_sitemaps: false, request_timeout_ms: 1_000, max_concurrency: 8, per_host_concurrency: 4, retry_after_max_ms: 0, crawl_delay_max_ms: 0 }),
      pages: testDb.pages,
      runs: testDb.runs,
      frontier: testDb.frontier,
      seeds: [`${site.base}/`],
      maxPages: 300,
    });
    const elapsed = Date.now() - started;
    expect(summary.status).toBe('finished');
    expect(summary.stored).toBe(300);
    expect(summary.failures.fetch_error ?? 0).toBeGreaterThan(0);
    const leased = await testDb.storage.db.selectFrom('crawl_frontier').select('url').where('state', '=', 'leased').execute();
    expect(leased).toEqual([]);
    // Each stalled page costs at most two request timeouts (one retry); the crawl never waits on one past that.
    expect(elapsed).toBeLessThan(60_000);
    expect(site.open()).toBe(0);
  }, 90_000);
});

/** The real store, whose database refuses to mark one URL done (a failing disk, a dropped connection). */
class RefusingFinishStore extends FrontierStore {
  constructor(
    storage: TestDb['storage'],
    private readonly refused: string,
  ) {
    super(storage.db, storage.dialect);
  }
  override async finish(...args: Parameters<FrontierStore['finish']>): Promise<void> {
    if (args[1] === this.refused) throw new Error('database refused the write');
    return super.finish(...args);
  }
}

describe('a crawl whose engine stops on an error', () => {
  it('ends with the error and gives back the requests it had leased and not started', async () => {
    const pages: Record<string, string> = { 'index.html': html('Home', Array.from({ length: 30 }, (_, i) => `<a href="p${i}.html">p${i}</a>`).join(' ')) };
    for (let i = 0; i < 30; i++) pages[`p${i}.html`] = html(`Page ${i}`, `page ${i}`);
    const { server } = await resources.site(pages);
    const testDb = await db();
    const frontier = new RefusingFinishStore(testDb.storage, `${server.url}/p0.html`);
    const crawl = runCrawl({
      config: crawlerConfig({ use_sitemaps: false, max_concurrency: 1, per_host_concurrency: 1 }),
      pages: testDb.pages,
      runs: testDb.runs,
      frontier,
      seeds: [`${server.url}/index.html`],
      maxPages: 100,
    });
    await expect(crawl).rejects.toThrow(/database refused the write/);
    // Only the request that failed is still leased (a resume fetches it again); the rest went back to the queue.
    const leased = await testDb.storage.db.selectFrom('crawl_frontier').select('url').where('state', '=', 'leased').execute();
    expect(leased.map((r) => r.url)).toEqual([`${server.url}/p0.html`]);
  }, 60_000);
});
