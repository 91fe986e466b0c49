import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCrawl } from './crawl.js';
import { serveDirectory } from '../testkit/serve-static.js';
import { crawlerConfig, html, openTestDb, writeSite } from '../testkit/crawl-site.js';
import { fileAvailable } from '../testkit/components.js';

const config = crawlerConfig({ renderer: 'browser', use_sitemaps: false, max_concurrency: 2, request_timeout_ms: 20_000 });

describe('runCrawl with renderer "browser"', () => {
  it.runIf(fileAvailable('Chromium', config.chromium_path))('stores the rendered DOM of a JavaScript-only page and follows its script-made links', async () => {
    const script = `<script>
      document.title = 'Rendered';
      const p = document.createElement('p'); p.textContent = 'text written by javascript';
      const a = document.createElement('a'); a.href = 'next.html'; a.textContent = 'next';
      document.body.append(p, a);
    </script>`;
    const dir = writeSite({
      'index.html': '<!doctype html><html><head><title>Shell</title></head><body>' + script + '</body></html>',
      'next.html': html('Next', 'static page reached through a script-made link'),
    });
    const server = await serveDirectory(dir);
    const testDb = await openTestDb();
    try {
      const summary = await runCrawl({ config, pages: testDb.pages, runs: testDb.runs, frontier: testDb.frontier, seeds: [`${server.url}/`] });
      expect(summary.fetched).toBe(2);
      const home = await testDb.pages.getByUrl(`${server.url}/`);
      expect(home?.title).toBe('Rendered');
      expect(home?.html).toContain('text written by javascript');
      expect(await testDb.pages.getByUrl(`${server.url}/next.html`)).toBeDefined();
      const agents = new Set(server.log.map((e) => e.headers['user-agent']));
      expect(agents).toEqual(new Set([`${config.user_agent} (+${config.contact_url})`]));
    } finally {
      await server.close();
      await testDb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it.runIf(fileAvailable('Chromium', config.chromium_path))('retries a page once after its 429 Retry-After pause', async () => {
    const busyAt: number[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/busy.html') {
        busyAt.push(Date.now());
        if (busyAt.length === 1) return void res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/html' }).end('slow down');
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(req.url === '/' ? html('Home', '<a href="/busy.html">busy</a>') : html('Busy', 'served at last'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const testDb = await openTestDb();
    try {
      const summary = await runCrawl({ config, pages: testDb.pages, runs: testDb.runs, frontier: testDb.frontier, seeds: [`${base}/`] });
      expect(summary).toMatchObject({ fetched: 2, failed: 0 });
      expect(busyAt).toHaveLength(2);
      expect(busyAt[1]! - busyAt[0]!).toBeGreaterThanOrEqual(950);
      expect((await testDb.pages.getByUrl(`${base}/busy.html`))?.title).toBe('Busy');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await testDb.close();
    }
  }, 60_000);
});
