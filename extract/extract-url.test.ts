import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../core/config.js';
import { createExtractDeps, extractLocalHtml, extractUrl, parseExtractRequest, type ExtractDeps } from './extract-url.js';
import { makePdf } from './fetch/test-pdf.js';
import { html, startTestServer, type TestServer } from '../testkit/upstream-server.js';
import { BrowserRenderer } from './render/browser.js';
import { fileAvailable } from '../testkit/components.js';

const CHROMIUM = '/usr/bin/chromium';
const LONG = 'Row locks are taken by UPDATE and DELETE and held until the transaction ends, which blocks other writers.';
const ARTICLE = `<!doctype html><html lang="en"><head><title>How table locks work in PostgreSQL | Example</title>
<meta name="author" content="Ada Lovelace"><meta property="og:site_name" content="Example"></head><body>
<nav><a href="/">Home</a></nav>
<main><h1>How table locks work in PostgreSQL</h1>
<p>${LONG} See <a href="/docs/mvcc">the MVCC chapter</a> for details.</p>
<h2>Modes</h2>
<table><tr><th>Mode</th><th>Conflicts</th></tr><tr><td>SHARE</td><td>ROW EXCLUSIVE</td></tr></table>
<ul><li>ACCESS SHARE</li><li><a href="https://example.org/x">ROW SHARE</a></li></ul>
<pre>LOCK TABLE films IN SHARE MODE;</pre>
<p>Deadlocks are detected automatically and one of the transactions is aborted so that the others can go on.</p>
<p>Advisory locks are application-defined and the server never takes them on its own behalf.</p>
</main></body></html>`;
const JS_SHELL = `<!doctype html><html><head><title>App</title></head><body><div id="root"></div>
<script>
  document.getElementById('root').innerHTML = '<article><h1>Rendered title</h1>' +
    '<p>${LONG}</p><p>This paragraph was written by JavaScript after the page loaded, as single-page apps do.</p></article>';
</script></body></html>`;
const EMPTY_SHELL = '<!doctype html><html><head><title>App</title></head><body><div id="app"></div><script>var x = 1;</script></body></html>';
const CAPTCHA = `<!doctype html><html><head><title>Just a moment...</title></head><body>
<div class="g-recaptcha" data-sitekey="x"></div><p>Please verify you are human to continue.</p>
<script src="https://www.google.com/recaptcha/api.js"></script></body></html>`;
const LOGIN = `<!doctype html><html><head><title>Sign in</title></head><body><main><h1>Sign in to continue</h1>
<form action="/login" method="post"><label>Email <input type="email" name="email"></label>
<label>Password <input type="password" name="password"></label><button>Log in</button></form></main></body></html>`;

let server: TestServer;
let deps: ExtractDeps & { close(): Promise<void> };

beforeAll(async () => {
  server = await startTestServer({
    '/article': html(ARTICLE),
    '/shell': html(JS_SHELL),
    '/empty-shell': html(EMPTY_SHELL),
    '/captcha': html(CAPTCHA),
    '/login': html(LOGIN),
    '/blank': html('<html><body><div></div></body></html>'),
    '/report.pdf': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(makePdf(['Annual report: contention fell by half after the index change.'], 'Annual Report'));
    },
    '/video': html('binary', 'video/mp4'),
  });
  const config = loadConfig({ env: { NOTARY_ALLOW_PRIVATE_NETWORKS: 'true', NOTARY_EXTRACT_RESPECT_ROBOTS: 'false' }, overrides: { data_dir: '/nonexistent/notary-extract-test' } });
  deps = createExtractDeps(config);
});

afterAll(async () => {
  await deps.close();
  await server.close();
});

describe('extractUrl', () => {
  it('refuses loopback with the default configuration', async () => {
    const defaults = createExtractDeps(loadConfig({ env: {}, overrides: { data_dir: '/nonexistent/notary-extract-test' } }));
    await expect(extractUrl({ url: `${server.origin}/article`, mode: 'text' }, defaults)).rejects.toMatchObject({ code: 'blocked_address', status: 403 });
    await defaults.close();
  });

  it('returns the documented fields, with markdown keeping headings, links, tables, lists and code', async () => {
    const result = await extractUrl({ url: `${server.origin}/article`, mode: 'markdown', render: 'never' }, deps);
    expect(result).toMatchObject({
      url: `${server.origin}/article`,
      final_url: `${server.origin}/article`,
      status: 200,
      title: 'How table locks work in PostgreSQL',
      byline: 'Ada Lovelace',
      site_name: 'Example',
      lang: 'en',
      published_at: null,
      mode: 'markdown',
      rendered: false,
    });
    expect(result.content).toContain('# How table locks work in PostgreSQL');
    expect(result.content).toContain('## Modes');
    expect(result.content).toContain(`[the MVCC chapter](${server.origin}/docs/mvcc)`);
    expect(result.content).toContain('| Mode | Conflicts |\n| --- | --- |\n| SHARE | ROW EXCLUSIVE |');
    expect(result.content).toContain('- [ROW SHARE](https://example.org/x)');
    expect(result.content).toContain('```\nLOCK TABLE films IN SHARE MODE;\n```');
    expect(result.content).not.toContain('Home');
    expect(result.excerpt.startsWith(LONG)).toBe(true);
    expect(result.word_count).toBeGreaterThan(40);
  });

  it('renders text, cleaned html and excerpt modes', async () => {
    const text = await extractUrl({ url: `${server.origin}/article`, mode: 'text' }, deps);
    expect(text.content).toContain('Mode | Conflicts');
    const cleaned = await extractUrl({ url: `${server.origin}/article`, mode: 'html' }, deps);
    expect(cleaned.content).toContain('<h2>Modes</h2>');
    expect(cleaned.content).toContain('<thead><tr><th>Mode</th><th>Conflicts</th></tr></thead>');
    expect(cleaned.content).not.toMatch(/<nav|<script|class=/);
    const excerpt = await extractUrl({ url: `${server.origin}/article`, mode: 'excerpt' }, deps);
    expect(excerpt.content).toBe(excerpt.excerpt);
  });

  it('chooses excerpt passages with the scorer when a query is given', async () => {
    const scorePassages = async (query: string, passages: string[]): Promise<number[]> =>
      passages.map((p) => (p.toLowerCase().includes(query.toLowerCase()) ? 1 : 0));
    const result = await extractUrl({ url: `${server.origin}/article`, mode: 'excerpt', query: 'advisory' }, { ...deps, scorePassages });
    expect(result.content.split('\n\n')[0]).toMatch(/^Advisory locks/);
  });

  it('extracts a PDF', async () => {
    const result = await extractUrl({ url: `${server.origin}/report.pdf`, mode: 'text' }, deps);
    expect(result.title).toBe('Annual Report');
    expect(result.content).toContain('contention fell by half');
  });

  it('fails CAPTCHA pages, login walls and empty pages with 422 codes, and other types with 415', async () => {
    await expect(extractUrl({ url: `${server.origin}/captcha`, mode: 'text', render: 'never' }, deps)).rejects.toMatchObject({
      code: 'captcha_detected',
      status: 422,
    });
    await expect(extractUrl({ url: `${server.origin}/login`, mode: 'text', render: 'never' }, deps)).rejects.toMatchObject({
      code: 'login_required',
      status: 422,
    });
    await expect(extractUrl({ url: `${server.origin}/blank`, mode: 'text', render: 'never' }, deps)).rejects.toMatchObject({
      code: 'empty_content',
      status: 422,
    });
    await expect(extractUrl({ url: `${server.origin}/shell`, mode: 'text', render: 'never' }, deps)).rejects.toMatchObject({
      code: 'js_shell_empty',
      status: 422,
    });
    await expect(extractUrl({ url: `${server.origin}/video`, mode: 'text' }, deps)).rejects.toMatchObject({
      code: 'unsupported_content_type',
      status: 415,
    });
  });

  it('validates request bodies', () => {
    expect(parseExtractRequest({ url: 'https://example.com/', mode: 'markdown', max_age: 0 })).toEqual({
      url: 'https://example.com/',
      mode: 'markdown',
      max_age: 0,
    });
    expect(parseExtractRequest({ url: 'https://example.com/' }).mode).toBe('excerpt');
    expect(() => parseExtractRequest({ url: 'https://example.com/', mode: 'pdf' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => parseExtractRequest({ url: 'https://example.com/', render: 'sometimes' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => parseExtractRequest({ url: 'https://example.com/', max_age: -1 })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => parseExtractRequest({ mode: 'text' })).toThrow(expect.objectContaining({ code: 'invalid_url' }));
    expect(() => parseExtractRequest('x')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(parseExtractRequest({ url: 'https://example.com/', include_comments: true }).include_comments).toBe(true);
    expect(parseExtractRequest({ url: 'https://example.com/', include_comments: false })).not.toHaveProperty('include_comments');
    expect(() => parseExtractRequest({ url: 'https://example.com/', include_comments: 'yes' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});

describe('extractLocalHtml', () => {
  it('extracts a file already in hand', async () => {
    const result = await extractLocalHtml(ARTICLE, 'file:///tmp/a.html', 'text');
    expect(result.status).toBeNull();
    expect(result.content).toContain(LONG);
    await expect(extractLocalHtml(CAPTCHA, 'file:///tmp/c.html', 'text')).rejects.toMatchObject({ code: 'captcha_detected' });
  });
});

describe.runIf(fileAvailable('Chromium', CHROMIUM))('rendering in Chromium', () => {
  it('renders a JS-only page with render auto', async () => {
    const result = await extractUrl({ url: `${server.origin}/shell`, mode: 'markdown' }, deps);
    expect(result.rendered).toBe(true);
    expect(result.content).toContain('# Rendered title');
    expect(result.content).toContain('written by JavaScript');
  });

  it('does not render a static page with render auto, and reports a shell that stays empty', async () => {
    expect((await extractUrl({ url: `${server.origin}/article`, mode: 'text' }, deps)).rendered).toBe(false);
    await expect(extractUrl({ url: `${server.origin}/empty-shell`, mode: 'text' }, deps)).rejects.toMatchObject({
      code: 'js_shell_empty',
      status: 422,
    });
  });

  it('applies the address policy to the browser: the page and its subrequests', async () => {
    const renderer = new BrowserRenderer(CHROMIUM);
    try {
      await expect(renderer.render(`${server.origin}/shell`, { userAgent: 'test' })).rejects.toMatchObject({ code: 'blocked_address' });
      // The first hop is allowed by name; a script on it fetching another loopback name is refused by page.route.
      const probe = await startTestServer({
        '/page': html(`<html><body><div id="out">pending</div><script>
          fetch('http://localhost:${server.port}/article').then(() => { document.getElementById('out').textContent = 'reached'; },
            () => { document.getElementById('out').textContent = 'refused'; });
        </script></body></html>`),
      });
      try {
        const page = await renderer.render(`${probe.origin}/page`, { userAgent: 'test', allowedPrivateHosts: ['127.0.0.1'] });
        expect(page.html).toContain('<div id="out">refused</div>');
        expect(server.hits.some((h) => h.includes(`localhost:${server.port}`))).toBe(false);
      } finally {
        await probe.close();
      }
    } finally {
      await renderer.close();
    }
  });
});
