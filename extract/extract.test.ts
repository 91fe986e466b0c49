import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractDocument, MAX_HTML_CHARS } from './extract.js';
import { fileAvailable } from '../testkit/components.js';

const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(import.meta.dirname, '../../shared');
const readabilityPages = path.join(sharedDir, 'eval/extraction/readability-test-pages');
const pgDocs = process.env['NOTARY_PG_DOC_DIR'] ?? '/usr/share/doc/postgresql-doc-15/html';

const page = `<!DOCTYPE html><html lang="en-GB"><head>
<title>Understanding Row and Table Locks | Example Docs</title>
<meta name="description" content="How &amp; why locks work.">
<meta property="og:site_name" content="Example Docs">
<meta name="author" content="Ada Lovelace">
<meta property="article:published_time" content="2024-03-05T10:00:00Z">
<link rel="canonical" href="/docs/locks">
<style>.x { color: red }</style><script>var tracking = "scriptword";</script>
</head><body>
<header class="site-header"><a href="/">Example</a> headerword</header>
<nav><ul><li><a href="/a">Navword one</a></li><li><a href="/b">Navword two</a></li></ul></nav>
<div id="cookie-banner">We use cookies cookieword. <button>Accept</button></div>
<main>
  <h1>Understanding Locks</h1>
  <p>Locks serialise access to shared rows &mdash; a row lock is taken by UPDATE, DELETE and SELECT FOR UPDATE, and
  it is held until the transaction ends, which can block other writers for a long time.</p>
  <h2>Table-level   locks</h2>
  <p>Table-level locks  are taken automatically by most commands, for example ALTER TABLE, and they conflict with
  one another according to a fixed matrix of modes.</p>
  <ul><li>ACCESS SHARE</li><li>ROW EXCLUSIVE</li></ul>
  <pre>LOCK TABLE films
  IN SHARE MODE;</pre>
  <table><tr><th>Mode</th><th>Conflicts</th></tr><tr><td>ACCESS SHARE</td><td>ACCESS EXCLUSIVE</td></tr></table>
  <h3>Deadlocks</h3>
  <blockquote>Deadlocks are detected and one transaction is aborted, so applications should retry.</blockquote>
  <div class="note"><h3>Note</h3><p>Advisory locks are managed by the application, not by the server.</p></div>
</main>
<aside class="sidebar"><p>Sidebarword: related articles and other interesting reading, with commas, many of them, here.</p></aside>
<footer><p>Copyright footerword 2024</p></footer>
</body></html>`;

describe('extractDocument', () => {
  const doc = extractDocument(page, 'https://docs.example.test/docs/locks?x=1');

  it('reads metadata', () => {
    expect(doc).toMatchObject({
      title: 'Understanding Row and Table Locks',
      byline: 'Ada Lovelace',
      siteName: 'Example Docs',
      lang: 'en-GB',
      publishedAt: '2024-03-05T10:00:00.000Z',
      description: 'How & why locks work.',
      canonicalUrl: 'https://docs.example.test/docs/locks',
    });
  });

  it('keeps headings with levels, paragraphs, lists, code, tables and quotes in order', () => {
    expect(doc.blocks.map((b) => (b.type === 'heading' ? `h${b.level}` : b.type))).toEqual([
      'h1', 'paragraph', 'h2', 'paragraph', 'list', 'code', 'table', 'h3', 'quote', 'paragraph',
    ]);
    expect(doc.blocks[2]).toEqual({ type: 'heading', level: 2, text: 'Table-level locks' });
    expect(doc.blocks[1]?.text).toMatch(/^Locks serialise access to shared rows — a row lock is taken/);
    expect(doc.blocks[4]?.text).toBe('ACCESS SHARE\nROW EXCLUSIVE');
    expect(doc.blocks[5]?.text).toBe('LOCK TABLE films\n  IN SHARE MODE;');
    expect(doc.blocks[6]?.text).toBe('Mode | Conflicts\nACCESS SHARE | ACCESS EXCLUSIVE');
    expect(doc.blocks[9]?.text).toBe('Note: Advisory locks are managed by the application, not by the server.');
  });

  it('drops navigation, header, footer, sidebar, cookie banner, scripts and styles', () => {
    for (const word of ['headerword', 'Navword', 'cookieword', 'Sidebarword', 'footerword', 'scriptword', 'color']) {
      expect(doc.text).not.toContain(word);
    }
    expect(doc.wordCount).toBe(doc.text.split(/\s+/).filter(Boolean).length);
  });

  it('handles empty, broken and hostile input without throwing', () => {
    expect(extractDocument('', 'http://a.test/').blocks).toEqual([]);
    expect(extractDocument('<p>unclosed <b>bold <i>text', 'http://a.test/').text).toBe('unclosed bold text');
    const deep = '<div>'.repeat(20_000) + 'deep text' + '</div>'.repeat(20_000);
    expect(extractDocument(deep, 'http://a.test/').text).toBe('deep text');
    expect(extractDocument('<title>T</title><p>x</p>', 'not a url').canonicalUrl).toBeNull();
  });

  it('refuses oversized pages with a NotaryError', () => {
    expect(() => extractDocument('x'.repeat(MAX_HTML_CHARS + 1), 'http://a.test/')).toThrow(
      expect.objectContaining({ code: 'page_too_large' }),
    );
  });
});

describe.runIf(fileAvailable('the PostgreSQL documentation (postgresql-doc-15)', pgDocs))('extractDocument on the Debian PostgreSQL docs', () => {
  it('keeps title, headings, paragraphs, code and tables but not navheader/navfooter', () => {
    const doc = extractDocument(readFileSync(path.join(pgDocs, 'indexes-types.html'), 'utf8'), 'http://pg.test/indexes-types.html');
    expect(doc.title).toBe('11.2. Index Types');
    const headings = doc.blocks.filter((b) => b.type === 'heading').map((b) => b.text);
    expect(headings).toEqual(expect.arrayContaining(['11.2. Index Types', '11.2.1. B-Tree', '11.2.6. BRIN']));
    expect(doc.blocks.some((b) => b.type === 'code' && b.text.includes('CREATE INDEX name ON table USING HASH'))).toBe(true);
    expect(doc.text).not.toMatch(/\bPrev\b|\bNext\b|\bHome\b/);
    const tableDoc = extractDocument(readFileSync(path.join(pgDocs, 'functions-string.html'), 'utf8'), 'http://pg.test/f.html');
    expect(tableDoc.blocks.some((b) => b.type === 'table' && b.text.includes('ascii ( text ) → integer'))).toBe(true);
  });

  // Speed is measured by `npm run eval:extract` (pages per second beside Readability's), not here.
  it('never leaks navigation into any page', () => {
    const files = readdirSync(pgDocs).filter((f) => f.endsWith('.html'));
    for (const file of files) {
      const doc = extractDocument(readFileSync(path.join(pgDocs, file), 'utf8'), `http://pg.test/${file}`);
      expect(doc.text, file).not.toMatch(/Prev\s+Up\s|Home\s+Next/);
      expect(doc.title, file).toBeTruthy();
    }
  });
});

describe.runIf(fileAvailable('the readability test pages in ../shared', readabilityPages))('extractDocument on readability test pages', () => {
  const cases = ['ars-1', 'bbc-1', 'wikipedia', 'medium-1', 'nytimes-1', 'engadget'].filter((c) =>
    existsSync(path.join(readabilityPages, c, 'source.html')),
  );
  it.each(cases)('%s: title as expected and article text found', (name) => {
    const dir = path.join(readabilityPages, name);
    const expected = JSON.parse(readFileSync(path.join(dir, 'expected-metadata.json'), 'utf8')) as { title: string };
    const doc = extractDocument(readFileSync(path.join(dir, 'source.html'), 'utf8'), 'http://fakehost/test/page.html');
    expect(doc.title?.replace(/\s+/g, ' ')).toBe(expected.title.replace(/\s+/g, ' ').trim());
    const expectedText = readFileSync(path.join(dir, 'expected.html'), 'utf8').replace(/<[^>]+>/g, ' ');
    // A long run of words from the expected article must appear in the extracted text.
    const probe = expectedText.replace(/&[a-z#0-9]+;/g, ' ').split(/\s+/).filter((w) => /^[A-Za-z]{4,}$/.test(w)).slice(40, 60);
    const found = probe.filter((w) => doc.text.includes(w)).length;
    expect(found / probe.length).toBeGreaterThan(0.9);
  });
});

describe('publishedAt', () => {
  it('reads a time written without a zone as UTC, whatever the machine’s time zone', () => {
    const html = (value: string) =>
      `<html><head><title>T</title><meta property="article:published_time" content="${value}"></head><body><article><p>${'Words of the article. '.repeat(40)}</p></article></body></html>`;
    const before = process.env['TZ'];
    try {
      for (const zone of ['UTC', 'America/Los_Angeles', 'Pacific/Kiritimati']) {
        process.env['TZ'] = zone;
        expect(extractDocument(html('2019-04-28 06:01:07'), 'https://example.org/a').publishedAt).toBe('2019-04-28T06:01:07.000Z');
        expect(extractDocument(html('2019-04-28T06:01:07+02:00'), 'https://example.org/a').publishedAt).toBe('2019-04-28T04:01:07.000Z');
        expect(extractDocument(html('not a date at all'), 'https://example.org/a').publishedAt).toBeNull();
      }
    } finally {
      if (before === undefined) delete process.env['TZ'];
      else process.env['TZ'] = before;
    }
  });
});
