import { load } from 'cheerio/slim';
import { normaliseUrl } from './url.js';

/**
 * The slice of a cheerio root that readPage uses. Both our cheerio and the copy bundled in crawlee satisfy it, so the
 * document crawlee already parsed is read without parsing it again.
 */
export interface HtmlQuery {
  (selector: string): HtmlSelection;
}
export interface HtmlSelection {
  first(): HtmlSelection;
  text(): string;
  toArray(): Array<{ attribs?: Record<string, string> }>;
}

export interface PageLinks {
  title: string | null;
  /** Normalised <link rel=canonical> target, if the page names one. */
  canonical: string | null;
  /** Normalised http(s) targets of <a href>, in document order, without repeats. */
  links: string[];
}

function hrefs($: HtmlQuery, selector: string): Array<{ href: string; rel: string }> {
  return $(selector)
    .toArray()
    .map((el) => ({ href: el.attribs?.['href'] ?? '', rel: (el.attribs?.['rel'] ?? '').toLowerCase() }));
}

/** Title, canonical URL and outgoing links of a parsed page; relative URLs resolve against <base href> or `pageUrl`. */
export function readPage($: HtmlQuery, pageUrl: string): PageLinks {
  const baseHref = hrefs($, 'base[href]')[0]?.href;
  const base = (baseHref && normaliseUrl(baseHref, pageUrl)) || pageUrl;
  const title = $('title').first().text().replace(/\s+/g, ' ').trim() || null;
  const canonicalLink = hrefs($, 'link[rel][href]').find((link) => link.rel.split(/\s+/).includes('canonical'));
  const canonical = canonicalLink ? normaliseUrl(canonicalLink.href, base) : null;
  const links = new Set<string>();
  for (const { href } of hrefs($, 'a[href]')) {
    const url = normaliseUrl(href, base);
    if (url) links.add(url);
  }
  return { title, canonical, links: [...links] };
}

export function readHtml(html: string, pageUrl: string): PageLinks {
  return readPage(load(html), pageUrl);
}
