import { describe, expect, it } from 'vitest';
import { extractDocument } from './extract.js';
import { decideTitle, learnSiteTitleAffixes, stripSiteAffixes } from './site-title.js';

const apache = [
  'mod_rewrite - Apache HTTP Server Version 2.4',
  'mod_ssl - Apache HTTP Server Version 2.4',
  'core - Apache HTTP Server Version 2.4',
  'Virtual Host Examples - Apache HTTP Server Version 2.4',
  'Getting Started - Apache HTTP Server Version 2.4',
  'Apache HTTP Server Version 2.4 Documentation',
];

const python = [
  'binascii — Convert between binary and ASCII — Python 3.11.2 documentation',
  'Glossary — Python 3.11.2 documentation',
  'os.path — Common pathname manipulations — Python 3.11.2 documentation',
  '3. An Informal Introduction to Python — Python 3.11.2 documentation',
  'Index — Python 3.11.2 documentation',
];

const prefixed = ['Acme Docs | Install', 'Acme Docs | Configure the proxy', 'Acme Docs | FAQ', 'Acme Docs | Release notes 4.2', 'Blog: a post'];

describe('site title prefixes and suffixes', () => {
  it('learns the suffix a site repeats, whatever the length of the page part', () => {
    expect(learnSiteTitleAffixes(apache).suffixes).toContain('apache http server version 2 4');
    expect(learnSiteTitleAffixes(python).suffixes).toEqual(['python 3 11 2 documentation']);
    expect(learnSiteTitleAffixes(prefixed)).toEqual({ prefixes: ['acme docs'], suffixes: [] });
  });

  it('keeps the page part, however short, and only drops the learnt suffix or prefix', () => {
    const a = learnSiteTitleAffixes(apache);
    expect(stripSiteAffixes('mod_rewrite - Apache HTTP Server Version 2.4', a)).toBe('mod_rewrite');
    expect(stripSiteAffixes('Virtual Host Examples - Apache HTTP Server Version 2.4', a)).toBe('Virtual Host Examples');
    // The site's home page is titled by the site alone: nothing to strip.
    expect(stripSiteAffixes('Apache HTTP Server Version 2.4 Documentation', a)).toBeNull();
    const p = learnSiteTitleAffixes(python);
    // A separator inside the page's own part stays.
    expect(stripSiteAffixes('binascii — Convert between binary and ASCII — Python 3.11.2 documentation', p)).toBe(
      'binascii — Convert between binary and ASCII',
    );
    expect(stripSiteAffixes('Glossary — Python 3.11.2 documentation', p)).toBe('Glossary');
    const q = learnSiteTitleAffixes(prefixed);
    expect(stripSiteAffixes('Acme Docs | FAQ', q)).toBe('FAQ');
    expect(stripSiteAffixes('Blog: a post', q)).toBeNull();
  });

  it('learns nothing from too few pages or from titles without a shared part', () => {
    expect(learnSiteTitleAffixes(['A - Site', 'B - Site'])).toEqual({ prefixes: [], suffixes: [] });
    expect(learnSiteTitleAffixes(['One - two', 'Three - four', 'Five - six', 'Seven - eight'])).toEqual({ prefixes: [], suffixes: [] });
  });

  it('decides one title from the same evidence everywhere: learnt affixes first, Readability without them', () => {
    const a = learnSiteTitleAffixes(apache);
    const evidence = { rawTitle: 'mod_rewrite - Apache HTTP Server Version 2.4', metaTitle: null, h1Texts: ['Apache Module mod_rewrite'] };
    expect(decideTitle(evidence, a)).toBe('mod_rewrite');
    // One page alone cannot tell which part is the site's: Readability keeps a short page name with the site name.
    expect(decideTitle(evidence, null)).toBe('mod_rewrite - Apache HTTP Server Version 2.4');
    expect(decideTitle({ rawTitle: 'Acme Docs | Install', metaTitle: 'Acme Docs | Install', h1Texts: [] }, learnSiteTitleAffixes(prefixed))).toBe('Install');
  });

  it('gives extractDocument the same title when the site is known', () => {
    const html = `<html><head><title>mod_ssl - Apache HTTP Server Version 2.4</title></head><body><h1>Apache Module mod_ssl</h1>
      <p>${'Strong cryptography using the Secure Sockets Layer and Transport Layer Security protocols. '.repeat(5)}</p></body></html>`;
    const affixes = learnSiteTitleAffixes(apache);
    expect(extractDocument(html, 'http://docs.test/mod/mod_ssl.html', { siteTitles: affixes }).title).toBe('mod_ssl');
    expect(extractDocument(html, 'http://docs.test/mod/mod_ssl.html').title).toBe('mod_ssl - Apache HTTP Server Version 2.4');
  });
});
