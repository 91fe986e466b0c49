import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotaryConfig } from '../core/config.js';
import { startTestServer, type TestServer } from '../testkit/upstream-server.js';
import type { Accounts } from '../payments/index.js';
import { apiTestConfig, startApi } from '../testkit/app.js';

/** POST /v1/extract through the real app, real accounts on SQLite, and a real upstream on 127.0.0.1. */
const article = `<!doctype html><html lang="en"><head><title>Tides explained | Ocean Notes</title>
<meta name="author" content="Ada Marine"></head><body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Tides explained</h1>
<p>Tides are the rise and fall of sea levels caused by the combined effects of the gravitational forces exerted by
the Moon and the Sun and the rotation of the Earth. Most places see two high tides and two low tides every day.</p>
<h2>Spring and neap tides</h2>
<p>When the Sun and Moon line up, their pulls add together and produce spring tides with a larger range. When they
are at right angles, the result is a neap tide whose range is smaller than average, a week after each spring tide.</p>
<p>Coastal engineers use long records of tide gauges to predict the level of the sea at any hour for years ahead.</p>
</article><footer>© Ocean Notes</footer></body></html>`;

const captcha = `<!doctype html><html><head><title>Just a moment...</title></head><body>
<div class="cf-browser-verification"><h1>Checking your browser before accessing the site.</h1>
<p>Please verify you are human.</p><div class="g-recaptcha" data-sitekey="x"></div></div></body></html>`;

let upstream: TestServer;
let dataDirs: string[] = [];

async function appWith(
  config: NotaryConfig,
  logLines?: string[],
): Promise<{ app: FastifyInstance; accounts: Accounts; close: () => Promise<void> }> {
  const logger = logLines ? { level: 'info', stream: { write: (line: string) => void logLines.push(line) } } : undefined;
  const api = await startApi(config, { withExtract: true, ...(logger ? { deps: { logger } } : {}) });
  return { app: api.app, accounts: api.runtime.accounts, close: api.close };
}

function config(allowPrivate: boolean, respectRobots = false): NotaryConfig {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-extract-api-'));
  dataDirs.push(dataDir);
  return apiTestConfig(dataDir, {
    extract: { allow_private_networks: allowPrivate, respect_robots_txt: respectRobots, render: 'never' },
    pricing: { extract: { credits: 1, credits_rendered: 2 } },
    default_tier: 'bulk',
  });
}

beforeAll(async () => {
  upstream = await startTestServer({
    '/article': (_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(article); },
    '/captcha': (_req, res) => { res.writeHead(403, { 'content-type': 'text/html' }); res.end(captcha); },
    '/challenge': (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end(captcha); },
    '/image': (_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }); res.end(Buffer.alloc(64)); },
    '/broken': (_req, res) => { res.writeHead(503, { 'content-type': 'text/html' }); res.end('<p>down</p>'); },
    '/gone': (_req, res) => { res.writeHead(404, { 'content-type': 'text/html' }); res.end('<h1>Not Found</h1><p>The requested URL was not found on this server.</p>'); },
    '/to-metadata': (_req, res) => { res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }); res.end(); },
    '/to-metadata-mapped': (_req, res) => { res.writeHead(302, { location: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/' }); res.end(); },
    '/nav-only': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><html><head><title>Manual</title></head><body><div id="page-header">
<p class="menu"><a href="/mod/">Modules</a> | <a href="/dir/">Directives</a> | <a href="/faq/">FAQ</a> | <a href="/glossary">Glossary</a> | <a href="/sitemap">Sitemap</a> | <a href="/bug">Report a bug</a></p>
<p class="apache">Example HTTP Server Version 2.4</p></div><div id="footer"><p class="apache">Copyright 2026 The Example Foundation.</p></div></body></html>`);
    },
  });
});

afterAll(async () => {
  await upstream?.close();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  dataDirs = [];
});

describe('POST /v1/extract', () => {
  it('extracts every mode, charges once per success, and nothing for failures', async () => {
    const { app, accounts, close } = await appWith(config(true));
    try {
      const tenant = await accounts.createTenant('extractor', { credits: 100 });
      const { key } = await accounts.createKey(tenant.id);
      const post = (body: unknown) =>
        app.inject({ method: 'POST', url: '/v1/extract', headers: { authorization: `Bearer ${key}` }, payload: body as object });

      const res = await post({ url: `${upstream.origin}/article`, mode: 'markdown' });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(
        ['byline', 'content', 'credits_used', 'excerpt', 'final_url', 'lang', 'mode', 'published_at', 'rate_limit', 'site_name', 'status', 'title', 'url', 'word_count'],
      );
      expect(body).toMatchObject({ status: 200, mode: 'markdown', lang: 'en', byline: 'Ada Marine', credits_used: 1 });
      expect(body['content']).toContain('## Spring and neap tides');
      expect(body['content']).not.toContain('About');
      expect(await accounts.balance(tenant.id)).toBe(99);

      for (const mode of ['text', 'html', 'excerpt']) {
        const r = await post({ url: `${upstream.origin}/article`, mode, query: 'what is a neap tide' });
        expect(r.statusCode, `${mode}: ${r.body}`).toBe(200);
        expect((r.json() as { content: string }).content.length).toBeGreaterThan(50);
      }
      expect(await accounts.balance(tenant.id)).toBe(96);

      const failures: Array<[unknown, number, string]> = [
        [{ url: `${upstream.origin}/challenge`, mode: 'text' }, 422, 'captcha_detected'],
        [{ url: `${upstream.origin}/captcha`, mode: 'text' }, 422, 'captcha_detected'],
        [{ url: `${upstream.origin}/image`, mode: 'text' }, 415, 'unsupported_content_type'],
        [{ url: `${upstream.origin}/broken`, mode: 'text' }, 502, 'upstream_error'],
        [{ url: 'ftp://example.org/file', mode: 'text' }, 400, 'invalid_url'],
        [{ url: 'not a url', mode: 'text' }, 400, 'invalid_url'],
        [{ url: `${upstream.origin}/article`, mode: 'pdf' }, 400, 'invalid_request'],
        // Neither url nor urls (issue 29: one page or a batch, exactly one of them).
        [{ mode: 'text' }, 422, 'invalid_batch'],
      ];
      for (const [payload, status, code] of failures) {
        const r = await post(payload);
        expect(r.statusCode, JSON.stringify(payload) + r.body).toBe(status);
        expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect((r.json() as { code: string }).code, JSON.stringify(payload)).toBe(code);
      }
      expect(await accounts.balance(tenant.id)).toBe(96);
      const ledger = await accounts.ledger(tenant.id);
      expect(ledger.filter((e) => e.delta < 0)).toHaveLength(4);
    } finally {
      await close();
    }
  });

  it('refuses loopback upstreams by default, before any request leaves', async () => {
    const { app, accounts, close } = await appWith(config(false));
    try {
      const tenant = await accounts.createTenant('careful', { credits: 5 });
      const { key } = await accounts.createKey(tenant.id);
      const before = upstream.hits.length;
      for (const url of [`${upstream.origin}/article`, `http://localhost:${upstream.port}/article`, 'http://169.254.169.254/latest/meta-data/']) {
        const r = await app.inject({ method: 'POST', url: '/v1/extract', headers: { authorization: `Bearer ${key}` }, payload: { url, mode: 'text' } });
        expect(r.statusCode, url).toBe(403);
        expect((r.json() as { code: string }).code).toBe('blocked_address');
      }
      expect(upstream.hits.length).toBe(before);
      expect(await accounts.balance(tenant.id)).toBe(5);
    } finally {
      await close();
    }
  });

  it('SSRF and bad-input run with private networks allowed: metadata stays closed, dead sites are unreachable, a 404 is its own outcome', async () => {
    const logLines: string[] = [];
    const { app, accounts, close } = await appWith(config(true, true), logLines);
    try {
      const tenant = await accounts.createTenant('ssrf-run', { credits: 10 });
      const { key } = await accounts.createKey(tenant.id);
      const post = (url: string) =>
        app.inject({ method: 'POST', url: '/v1/extract', headers: { authorization: `Bearer ${key}` }, payload: { url, mode: 'text' } });
      const dead = await startTestServer({});
      const deadPort = dead.port;
      await dead.close();
      const cases: Array<[string, number, string, boolean]> = [
        [`${upstream.origin}/to-metadata`, 403, 'blocked_address', false],
        [`${upstream.origin}/to-metadata-mapped`, 403, 'blocked_address', false],
        ['http://169.254.169.254/latest/meta-data/', 403, 'blocked_address', false],
        ['http://[::ffff:a9fe:a9fe]/latest/meta-data/', 403, 'blocked_address', false],
        [`http://127.0.0.1:${deadPort}/page`, 502, 'upstream_unreachable', true],
        ['http://no-such-host.invalid/page', 502, 'upstream_unreachable', true],
        [`${upstream.origin}/gone`, 422, 'upstream_not_found', false],
        [`${upstream.origin}/nav-only`, 422, 'empty_content', false],
      ];
      for (const [url, status, code, retryable] of cases) {
        const r = await post(url);
        expect(r.statusCode, `${url}: ${r.body}`).toBe(status);
        expect(r.json(), url).toMatchObject({ code, retryable });
      }
      expect(await accounts.balance(tenant.id)).toBe(10);
      const entries = logLines.map((line) => JSON.parse(line) as { level: number; code?: string; err?: unknown; msg: string });
      const notFound = entries.find((e) => e.code === 'upstream_not_found');
      expect(notFound).toMatchObject({ level: 30, msg: 'upstream outcome' });
      expect(notFound?.err).toBeUndefined();
      expect(entries.filter((e) => e.level >= 50)).toEqual([]);
    } finally {
      await close();
    }
  });
});
