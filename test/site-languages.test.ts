/**
 * Titles, navigation pages and translations end to end: a small manual in two languages (fixture pages written for
 * this test) served on 127.0.0.1, crawled by the real crawler, indexed, searched through the pipeline, and extracted
 * through the same path as /v1/extract.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema, type NotaryConfig } from '../core/config.js';
import { runCrawl } from '../crawler/crawl.js';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';
import { crawlerConfig, openTestDb, writeSite, type TestDb } from '../testkit/crawl-site.js';
import { extractSettings, extractUrl } from '../extract/extract-url.js';
import { learnSiteTitleAffixes } from '../extract/site-title.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import { Indexer } from '../indexer/indexer.js';
import { LexicalReranker } from '../reranker/lexical.js';
import { SearchPipeline } from '../search/pipeline.js';

const SUFFIX = 'Widget Server Manual 3.1';

function page(lang: string, title: string, body: string, alternates: Record<string, string> = {}): string {
  const links = Object.entries(alternates)
    .map(([l, href]) => `<a href="${href}" hreflang="${l}" rel="alternate">${l}</a>`)
    .join(' | ');
  return `<!doctype html><html lang="${lang}"><head><title>${title} - ${SUFFIX}</title></head><body>
<div id="page-header"><p class="menu"><a href="/manual/en/index.html">Modules</a> | <a href="/manual/en/genindex.html">Index</a></p></div>
<div class="toplang"><p>Available Languages: ${links}</p></div>
<div id="page-content"><h1>${title}</h1>${body}</div>
<div id="footer"><p>Copyright Widget Foundation.</p></div></body></html>`;
}

const english = (topic: string): string =>
  `<p>This module provides ${topic} for the widget server. To configure an SSL certificate, name the certificate file ` +
  'and its private key in the virtual host, then restart the server. The certificate chain must be complete, and the ' +
  'key must match the certificate, or the server refuses to start.</p><p>Each directive below applies to one virtual host.</p>';

const german =
  '<p>Dieses Modul stellt SSL bereit. Um ein SSL-Zertifikat (SSL certificate) zu konfigurieren, nennen Sie die Datei ' +
  'des Zertifikats (certificate) und den privaten Schlüssel im virtuellen Host und starten Sie den Server neu. Die ' +
  'Kette der Zertifikate muss vollständig sein, und der Schlüssel muss zum Zertifikat passen.</p>' +
  '<p>Jede Direktive gilt für einen virtuellen Host. SSL certificate, SSL certificate, configure SSL certificate.</p>';

const sslAlternates = { en: '/manual/en/mod/mod_ssl.html', de: '/manual/de/mod/mod_ssl.html' };

const SITE: Record<string, string> = {
  'manual/en/index.html': page(
    'en',
    'Documentation',
    '<ul><li><a href="mod/mod_ssl.html">mod_ssl</a></li><li><a href="mod/mod_rewrite.html">mod_rewrite</a></li>' +
      '<li><a href="mod/core.html">core</a></li><li><a href="genindex.html">Index</a></li>' +
      '<li><a href="../de/nur-deutsch.html">Nur auf Deutsch</a></li></ul>',
  ),
  'manual/en/mod/mod_ssl.html': page('en', 'mod_ssl', english('strong cryptography with TLS'), sslAlternates),
  'manual/de/mod/mod_ssl.html': page('de', 'mod_ssl', german, sslAlternates),
  'manual/en/mod/mod_rewrite.html': page('en', 'mod_rewrite', '<p>A rule-based rewriting engine to rewrite requested URLs on the fly, with regular expressions and conditions on headers.</p>'),
  'manual/en/mod/core.html': page('en', 'core', '<p>Core features that are always available: directives for listening sockets, timeouts and the document root of a host.</p>'),
  'manual/de/nur-deutsch.html': page(
    'de',
    'Nur auf Deutsch',
    '<p>Diese Seite gibt es nur auf Deutsch. Sie beschreibt, wie der Server Protokolldateien rotiert und alte Dateien löscht, ohne Anfragen zu verlieren.</p>',
  ),
  'manual/en/genindex.html': page(
    'en',
    'Index',
    `<ul>${['SSL certificate', 'SSL certificate chain', 'configure SSL', 'certificate file', 'private key', 'virtual host', 'rewrite rules', 'regular expressions', 'timeouts', 'document root', 'listening sockets', 'restart the server']
      .flatMap((term) => ['mod_ssl', 'core', 'mod_rewrite'].map((mod) => `<li><a href="mod/${mod}.html#${encodeURIComponent(term)}">${term} (${mod})</a></li>`))
      .join('')}</ul>`,
  ),
};

describe('titles, navigation pages and languages on a crawled two-language manual', () => {
  let dir: string;
  let server: StaticServer;
  let db: TestDb;
  let index: Fts5SearchIndex;
  const config: NotaryConfig = configSchema.parse({});

  const pipeline = (search: Partial<NotaryConfig['search']> = {}): SearchPipeline =>
    new SearchPipeline({ index, reranker: new LexicalReranker(), config: { ...config.search, ...search } });
  const urls = async (query: string, options: { language?: string; search?: Partial<NotaryConfig['search']> } = {}): Promise<string[]> =>
    (await pipeline(options.search).search({ query, depth: 1, ...(options.language ? { language: options.language } : {}) })).results.map((r) =>
      new URL(r.url).pathname,
    );

  beforeAll(async () => {
    dir = writeSite(SITE);
    server = await serveDirectory(dir);
    db = await openTestDb();
    await runCrawl({ config: crawlerConfig({ seeds: [`${server.url}/manual/en/index.html`], scope: 'host' }), pages: db.pages, runs: db.runs, frontier: db.frontier });
    if (!db.storage.sqlite) throw new Error('SQLite storage expected');
    index = new Fts5SearchIndex(db.storage.sqlite);
    await new Indexer({ pages: db.pages, index, config: config.indexer, logger: { warn: () => {} } }).runOnce();
  });

  afterAll(async () => {
    await server?.close();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores each page with its language and marks the generated index as navigation', async () => {
    const rows = await db.storage.db.selectFrom('pages').select(['url', 'language', 'navigation', 'translation_key']).execute();
    const byPath = new Map(rows.map((r) => [new URL(r.url).pathname, r]));
    expect(byPath.get('/manual/de/mod/mod_ssl.html')?.language).toBe('de');
    expect(byPath.get('/manual/en/mod/mod_ssl.html')?.language).toBe('en');
    expect(byPath.get('/manual/en/mod/mod_ssl.html')?.translation_key).toBe(byPath.get('/manual/de/mod/mod_ssl.html')?.translation_key);
    expect(byPath.get('/manual/en/genindex.html')?.navigation).toBe(1);
    expect(byPath.get('/manual/en/mod/core.html')?.navigation).toBe(0);
  });

  it('titles results with the page part only, however short, and extraction gives the same title', async () => {
    const outcome = await pipeline().search({ query: 'rule-based rewriting engine', depth: 1 });
    const rewrite = outcome.results.find((r) => r.url.endsWith('/mod/mod_rewrite.html'));
    expect(rewrite?.title).toBe('mod_rewrite');
    const extracted = await extractUrl(
      { url: `${server.url}/manual/en/mod/mod_rewrite.html`, mode: 'text' },
      {
        userAgent: 'notary-test',
        settings: { ...extractSettings(config), allowPrivateNetworks: true, respectRobotsTxt: false },
        siteTitles: async (host) => learnSiteTitleAffixes(await db.pages.titlesOfHost(host)),
      },
    );
    expect(extracted.title).toBe('mod_rewrite');
  });

  it('keeps navigation pages out of results unless the deployment includes them', async () => {
    const query = 'SSL certificate chain private key';
    expect(await urls(query)).not.toContain('/manual/en/genindex.html');
    expect(await urls(query, { search: { include_navigation_pages: true } })).toContain('/manual/en/genindex.html');
  });

  it("shows one translation of a page, in the query's language", async () => {
    const en = await urls('configure an SSL certificate for a virtual host');
    expect(en).toContain('/manual/en/mod/mod_ssl.html');
    expect(en).not.toContain('/manual/de/mod/mod_ssl.html');
    const de = await urls('Wie konfiguriere ich ein SSL-Zertifikat für den virtuellen Host?');
    expect(de).toContain('/manual/de/mod/mod_ssl.html');
    expect(de).not.toContain('/manual/en/mod/mod_ssl.html');
  });

  it('keeps to the language a request (or the deployment) names', async () => {
    const asked = await urls('SSL certificate server', { language: 'de' });
    expect(asked).toContain('/manual/de/mod/mod_ssl.html');
    expect(asked.every((p) => p.startsWith('/manual/de/'))).toBe(true);
    const deployment = await urls('server files', { search: { default_language: 'de' } });
    expect(deployment).toContain('/manual/de/nur-deutsch.html');
    expect(deployment.every((p) => p.startsWith('/manual/de/'))).toBe(true);
    // Without a language, a page that exists only in German still answers.
    expect(await urls('Protokolldateien rotiert')).toContain('/manual/de/nur-deutsch.html');
  });
});
