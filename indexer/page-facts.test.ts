import { describe, expect, it } from 'vitest';
import { isOwnTranslationGroup, pageLanguage, readPageFacts, translationKey } from './page-facts.js';

const chrome = `<nav><ul>${Array.from({ length: 40 }, (_, i) => `<li><a href="/section-${i}.html">Section ${i}</a></li>`).join('')}</ul></nav>
  <div class="sphinxsidebar"><ul>${Array.from({ length: 30 }, (_, i) => `<li><a href="/other-${i}.html">Other page ${i}</a></li>`).join('')}</ul></div>`;

const page = (body: string, head = '', htmlAttrs = ' lang="en"'): string =>
  `<!doctype html><html${htmlAttrs}><head><title>T</title>${head}</head><body>${chrome}<main>${body}</main><footer><a href="/about">About</a></footer></body></html>`;

const prose = (n: number): string =>
  Array.from({ length: n }, (_, i) => `<p>Paragraph ${i} explains how the server reads its configuration files at start-up, which directives apply to a virtual host, and how a change is picked up after a graceful restart of the daemon.</p>`).join('');

const entries = (n: number, make: (i: number) => string): string => Array.from({ length: n }, (_, i) => make(i)).join('');

const navigation = (html: string): boolean => readPageFacts(html, 'http://docs.test/page.html').navigation.navigation;

describe('navigation pages', () => {
  it('recognises a generated general index (entries that are links)', () => {
    const html = page(`<h1>Index</h1><table class="indextable"><tr><td><ul>${entries(120, (i) => `<li><a href="/lib/mod${i % 30}.html#f${i}">func${i}() (in module mod${i % 30})</a></li>`)}</ul></td></tr></table>`);
    expect(navigation(html)).toBe(true);
  });

  it('recognises a module index whose entries carry one-line descriptions', () => {
    const html = page(`<h1>Module Index</h1><table>${entries(80, (i) => `<tr><td><a href="/lib/mod${i}.html"><code>mod${i}</code></a></td><td><em>Tools for working with thing number ${i}.</em></td></tr>`)}</table>`);
    expect(navigation(html)).toBe(true);
  });

  it('recognises a back-of-book index (term, then links to pages)', () => {
    const html = page(`<h1>Index</h1><dl>${entries(100, (i) => `<dt>term ${i}, <a href="/chapter-${i % 12}.html">Chapter ${i % 12}</a>, <a href="/sql-${i}.html">SQL ${i}</a></dt>`)}</dl>`);
    expect(navigation(html)).toBe(true);
  });

  it('recognises tag listings, archives and HTML sitemaps', () => {
    const tag = page(`<h1>Posts tagged "tls"</h1><ul>${entries(30, (i) => `<li><a href="/2024/${i}/post.html">Renewing certificates, part ${i}</a> <time>2024-01-${(i % 28) + 1}</time></li>`)}</ul>`);
    const sitemap = page(`<h1>Site map</h1>${entries(6, (s) => `<h2>Part ${s}</h2><ul>${entries(25, (i) => `<li><a href="/p${s}/${i}.html">Page ${s}.${i}</a></li>`)}</ul>`)}`);
    expect(navigation(tag)).toBe(true);
    expect(navigation(sitemap)).toBe(true);
  });

  it('does not flag content pages, however big their menus', () => {
    expect(navigation(page(`<h1>Configuring virtual hosts</h1>${prose(2)}`))).toBe(false);
    expect(navigation(page(`<h1>Short</h1><p>One line of text with <a href="/x.html">a link</a>.</p>`))).toBe(false);
  });

  it('does not flag a reference page with a summary table and a list of links among prose', () => {
    const reference = page(
      `<h1>mod_example</h1><table>${entries(8, (i) => `<tr><th><a href="/directive-dict.html#${i}">Field ${i}</a>:</th><td>value ${i}</td></tr>`)}</table>` +
        `<ul>${entries(12, (i) => `<li><a href="#d${i}">Directive${i}</a></li>`)}</ul>` +
        prose(6) +
        `<h2>See also</h2><ul>${entries(5, (i) => `<li><a href="/related-${i}.html">Related ${i}</a></li>`)}</ul>`,
    );
    expect(navigation(reference)).toBe(false);
    const glossary = page(`<h1>Glossary</h1><dl>${entries(40, (i) => `<dt id="term-${i}">term ${i}</dt><dd><p>The meaning of term ${i}, explained in a sentence or two with a <a href="/ref-${i}.html">reference</a> to where it is used in practice.</p></dd>`)}</dl>`);
    expect(navigation(glossary)).toBe(false);
  });
});

describe('page language', () => {
  it('reads <html lang>, then <meta http-equiv>, then its own hreflang, then Content-Language', () => {
    const url = 'http://docs.test/de/guide.html';
    const text = 'x';
    expect(pageLanguage(readPageFacts(page('<p>x</p>', '', ' lang="de-AT"'), url), url, 'en', text)).toBe('de-at');
    expect(pageLanguage(readPageFacts(page('<p>x</p>', '<meta http-equiv="Content-Language" content="fr">', ''), url), url, 'en', text)).toBe('fr');
    const alternates = '<link rel="alternate" hreflang="de" href="/de/guide.html"><link rel="alternate" hreflang="en" href="/en/guide.html">';
    expect(pageLanguage(readPageFacts(page('<p>x</p>', alternates, ''), url), url, null, text)).toBe('de');
    expect(pageLanguage(readPageFacts(page('<p>x</p>', '', ''), url), url, 'pt-BR, en', text)).toBe('pt-br');
  });

  it('detects the language of undeclared text, and says nothing when it cannot tell', () => {
    const url = 'http://docs.test/x.html';
    const facts = readPageFacts(page('<p>x</p>', '', ''), url);
    const german = 'Die Konfiguration des Servers wird beim Start aus den Dateien gelesen. Änderungen werden nach einem Neustart wirksam, und jede Direktive gilt für den virtuellen Host, in dem sie steht.';
    expect(pageLanguage(facts, url, null, german)).toBe('de');
    expect(pageLanguage(facts, url, null, '12345 67890')).toBeNull();
  });
});

describe('translation groups', () => {
  it('tells a page that is a group of its own (no search for its other versions) from one with translations', () => {
    expect(isOwnTranslationGroup(translationKey('http://docs.test/guide/index.html', 'en', []))).toBe(true);
    expect(isOwnTranslationGroup(translationKey('http://docs.test/manual/en/index.html', 'en', []))).toBe(false);
    expect(isOwnTranslationGroup(translationKey('http://example.test/about', 'en', [{ hreflang: 'de', href: 'http://example.de/ueber-uns' }]))).toBe(false);
  });

  it('groups the same path under language prefixes and language file suffixes', () => {
    expect(translationKey('http://docs.test/manual/en/mod/core.html', 'en', [])).toBe(translationKey('http://docs.test/manual/de/mod/core.html', 'de', []));
    expect(translationKey('http://docs.test/manual/pt-br/index.html', 'pt-br', [])).toBe(translationKey('http://docs.test/manual/fr/index.html', 'fr', []));
    expect(translationKey('http://docs.test/mod/core.html.en', 'en', [])).toBe(translationKey('http://docs.test/mod/core.html.ja', 'ja', []));
    // A segment that is not the page's language is a path like any other.
    expect(translationKey('http://docs.test/it/ops.html', 'en', [])).not.toBe(translationKey('http://docs.test/de/ops.html', 'de', []));
  });

  it('groups pages that list each other as hreflang alternates', () => {
    const set = [
      { hreflang: 'en', href: 'http://example.test/about' },
      { hreflang: 'de', href: 'http://example.de/ueber-uns' },
    ];
    expect(translationKey('http://example.test/about', null, set)).toBe(translationKey('http://example.de/ueber-uns', null, set));
    const withDefault = [...set, { hreflang: 'x-default', href: 'http://example.test/about' }];
    expect(translationKey('http://example.de/ueber-uns', null, withDefault)).toBe('alt:http://example.test/about');
  });

  it('leaves a page without translations in a group of its own', () => {
    expect(translationKey('http://docs.test/guide.html', 'en', [])).toBe('url:http://docs.test/guide.html');
  });

  it('reads alternates from <link> and <a rel="alternate" hreflang>', () => {
    const facts = readPageFacts(
      page('<div class="toplang"><a href="../de/core.html" hreflang="de" rel="alternate" title="Deutsch">de</a></div><p>x</p>', '<link rel="alternate" hreflang="fr" href="/fr/core.html">'),
      'http://docs.test/en/core.html',
    );
    expect(facts.alternates).toEqual([
      { hreflang: 'fr', href: 'http://docs.test/fr/core.html' },
      { hreflang: 'de', href: 'http://docs.test/de/core.html' },
    ]);
  });
});
