import { Parser } from 'htmlparser2';
import { detectLanguage, normaliseLanguageTag, primaryLanguage } from '../core/language.js';

/**
 * What the indexer reads from a page's HTML besides its main content: the language it declares, its hreflang
 * alternates (translations), and the structure that tells a generated navigation page (a site index, a back-of-book
 * index, a tag or archive listing, an HTML sitemap) from a page with content of its own. One streaming parse.
 */

export interface NavigationFeatures {
  /** Characters of visible text outside the site's own chrome (nav bars, headers, footers, sidebars). */
  textChars: number;
  /** Of which inside links to other pages (links to anchors of the same page do not count). */
  linkChars: number;
  /** List items, description terms, table rows and paragraphs holding text. */
  items: number;
  /** Items that hold a link to another page and are short (a listing's entries). */
  linkedShortItems: number;
  /** Median words of an item's own text. */
  medianItemWords: number;
  /** Characters of prose: runs of 20 or more words outside links. */
  proseChars: number;
  navigation: boolean;
}

export interface PageFacts {
  /** <html lang> (or xml:lang), else <meta http-equiv="content-language">, normalised; null when absent. */
  declaredLanguage: string | null;
  /** rel="alternate" hreflang links (<link> and <a>), absolute, without fragments. */
  alternates: Array<{ hreflang: string; href: string }>;
  navigation: NavigationFeatures;
}

/** Elements whose subtree is the site's chrome, not the page's own content. */
const CHROME_TAGS = new Set(['nav', 'header', 'footer', 'aside', 'script', 'style', 'noscript', 'template', 'select', 'button', 'svg']);
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menu', 'menubar']);
const CHROME_HINTS = /sidebar|breadcrumb|navbar|navheader|navfooter|navigation|(?:^|[\s_-])(?:nav|menu|footer|header|related|toplang|masthead|skip)(?:$|[\s_-])/i;
const ITEM_TAGS = new Set(['li', 'dt', 'tr', 'p']);
const VOID_TAGS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

/** An item of a listing is short: an entry's name and perhaps a one-line description. */
const SHORT_ITEM_WORDS = 15;
const PROSE_RUN_WORDS = 20;

function countWords(text: string): number {
  return text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
}

function resolve(href: string, base: string): string | null {
  try {
    const url = new URL(href.trim(), base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    url.hash = '';
    return url.href;
  } catch {
    return null;
  }
}

interface ItemState {
  words: number;
  text: string;
  linked: boolean;
}

export function readPageFacts(html: string, pageUrl: string): PageFacts {
  let declaredLanguage: string | null = null;
  let metaLanguage: string | null = null;
  let baseUrl = pageUrl;
  const alternates: PageFacts['alternates'] = [];
  const pageWithoutHash = resolve(pageUrl, pageUrl) ?? pageUrl;

  const stack: Array<{ tag: string; chrome: boolean; link: boolean; item: ItemState | null }> = [];
  let chromeDepth = 0;
  let linkDepth = 0;
  let textChars = 0;
  let linkChars = 0;
  let proseChars = 0;
  let run = '';
  const itemWords: number[] = [];
  let linkedShortItems = 0;
  const openItems: ItemState[] = [];

  const flushRun = (): void => {
    const words = countWords(run);
    if (words >= PROSE_RUN_WORDS) proseChars += run.trim().length;
    run = '';
  };

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        const tag = name.toLowerCase();
        if (tag === 'html') {
          declaredLanguage = normaliseLanguageTag(attrs['lang'] ?? attrs['xml:lang']);
        } else if (tag === 'base' && attrs['href']) {
          baseUrl = resolve(attrs['href'], pageUrl) ?? baseUrl;
        } else if (tag === 'meta' && (attrs['http-equiv'] ?? '').toLowerCase() === 'content-language') {
          metaLanguage = normaliseLanguageTag(attrs['content']);
        }
        if ((tag === 'link' || tag === 'a') && attrs['hreflang'] && attrs['href'] && /(?:^|\s)alternate(?:\s|$)/i.test(attrs['rel'] ?? '')) {
          const href = resolve(attrs['href'], baseUrl);
          const hreflang = attrs['hreflang'].trim().toLowerCase();
          if (href && hreflang) alternates.push({ hreflang, href });
        }
        if (VOID_TAGS.has(tag)) return;
        const hints = `${attrs['class'] ?? ''} ${attrs['id'] ?? ''}`;
        const chrome = CHROME_TAGS.has(tag) || CHROME_ROLES.has((attrs['role'] ?? '').toLowerCase()) || 'hidden' in attrs || CHROME_HINTS.test(hints);
        const href = tag === 'a' ? attrs['href'] : undefined;
        const target = href ? resolve(href, baseUrl) : null;
        const link = target !== null && target !== pageWithoutHash;
        let item: ItemState | null = null;
        if (ITEM_TAGS.has(tag) && chromeDepth === 0 && !chrome) {
          flushRun();
          item = { words: 0, text: '', linked: false };
          openItems.push(item);
        } else if (!link && tag !== 'a' && !isInline(tag)) {
          flushRun();
        }
        if (chrome) chromeDepth++;
        if (link) {
          linkDepth++;
          const current = openItems[openItems.length - 1];
          if (current && chromeDepth === 0) current.linked = true;
        }
        stack.push({ tag, chrome, link, item });
      },
      ontext(data) {
        if (chromeDepth > 0) return;
        const text = data.replace(/\s+/g, ' ');
        const chars = text.trim().length;
        if (chars === 0) {
          run += ' ';
          return;
        }
        textChars += chars;
        if (linkDepth > 0) {
          linkChars += chars;
          flushRun();
        } else {
          run += text;
        }
        const current = openItems[openItems.length - 1];
        if (current) current.words += countWords(text);
      },
      onclosetag(name) {
        const tag = name.toLowerCase();
        if (VOID_TAGS.has(tag)) return;
        // Close up to the matching open element (HTML in the wild leaves elements open).
        let at = stack.length - 1;
        while (at >= 0 && stack[at]?.tag !== tag) at--;
        if (at < 0) return;
        while (stack.length > at) {
          const open = stack.pop();
          if (!open) break;
          if (open.chrome) chromeDepth--;
          if (open.link) linkDepth--;
          if (open.item) {
            flushRun();
            openItems.pop();
            if (open.item.words > 0) {
              itemWords.push(open.item.words);
              if (open.item.linked && open.item.words <= SHORT_ITEM_WORDS) linkedShortItems++;
            }
          } else if (!isInline(open.tag)) {
            flushRun();
          }
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  flushRun();

  const sorted = [...itemWords].sort((a, b) => a - b);
  const medianItemWords = sorted.length > 0 ? (sorted[Math.floor(sorted.length / 2)] ?? 0) : 0;
  const features = { textChars, linkChars, items: itemWords.length, linkedShortItems, medianItemWords, proseChars };
  return {
    declaredLanguage: declaredLanguage ?? metaLanguage,
    alternates,
    navigation: { ...features, navigation: isNavigation(features) },
  };
}

const INLINE = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i', 'ins', 'kbd', 'mark', 'q', 's',
  'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr', 'label', 'big',
]);

function isInline(tag: string): boolean {
  return INLINE.has(tag);
}

/**
 * A navigation page is made of pointers to other pages: most of its text is link text, or it is a long run of short
 * entries that each link elsewhere (an index or listing, with or without one-line descriptions) with little prose
 * between them. A content page with a big menu is not one: the site's chrome is left out before counting.
 */
export function isNavigation(f: Omit<NavigationFeatures, 'navigation'>): boolean {
  if (f.textChars === 0) return false;
  const linkShare = f.linkChars / f.textChars;
  const proseShare = f.proseChars / f.textChars;
  if (linkShare >= 0.6 && f.linkChars >= 200) return true;
  // Entries with one-line descriptions ("abc: Abstract Base Classes"): nearly every item links elsewhere. A reference
  // page's summary table (a few linked labels among many plain rows) does not reach that share.
  const linkedShare = f.items > 0 ? f.linkedShortItems / f.items : 0;
  return f.linkedShortItems >= 20 && linkedShare >= 0.75 && linkShare >= 0.05 && f.medianItemWords <= SHORT_ITEM_WORDS && proseShare < 0.3;
}

/** Language tags that may stand as a path segment or a file-name suffix ("/de/", "index.html.fr", "/pt-br/"). */
const LANGUAGE_SEGMENT = /^[a-z]{2,3}(?:[-_][a-z0-9]{2,4})?$/i;

/**
 * The key shared by translations of one page. With hreflang alternates: the x-default URL, else the smallest URL of
 * the set (the page itself included), which every page of the set computes alike when they list the same
 * alternates. Otherwise, when a path segment (or a file-name suffix, as in "page.html.de") names the page's own
 * language, the URL with that segment blanked, so /en/guide.html and /de/guide.html meet. Otherwise the page is a
 * group of its own (its URL).
 */
export function translationKey(url: string, language: string | null, alternates: PageFacts['alternates']): string {
  const self = resolve(url, url) ?? url;
  let parsed: URL;
  try {
    parsed = new URL(self);
  } catch {
    return self;
  }
  if (language) {
    const primary = primaryLanguage(language);
    const matches = (segment: string): boolean => {
      const s = segment.toLowerCase().replace('_', '-');
      return LANGUAGE_SEGMENT.test(s) && (s === language || primaryLanguage(s) === primary);
    };
    const segments = parsed.pathname.split('/');
    const at = segments.findIndex((segment) => matches(segment));
    if (at >= 0) {
      segments[at] = '*';
      return `path:${parsed.host}${segments.join('/')}${parsed.search}`;
    }
    const last = segments[segments.length - 1] ?? '';
    const suffix = /\.([a-z]{2,3}(?:[-_][a-z0-9]{2,4})?)$/i.exec(last);
    if (suffix?.[1] && /\.[a-z0-9]+\.[^.]+$/i.test(last) && matches(suffix[1])) {
      segments[segments.length - 1] = `${last.slice(0, -suffix[1].length)}*`;
      return `path:${parsed.host}${segments.join('/')}${parsed.search}`;
    }
  }
  const set = new Set(alternates.filter((a) => a.hreflang !== 'x-default').map((a) => a.href));
  if (set.size > 0) {
    const fallback = alternates.find((a) => a.hreflang === 'x-default')?.href;
    set.add(self);
    return `alt:${fallback ?? [...set].sort()[0] ?? self}`;
  }
  return `${OWN_GROUP}${self}`;
}

const OWN_GROUP = 'url:';

/** Whether a translation key names one page only (it declared no translations): no other version of it is indexed. */
export function isOwnTranslationGroup(key: string): boolean {
  return key.startsWith(OWN_GROUP);
}

/**
 * The page's language: what it declares (<html lang>, <meta http-equiv>), else the hreflang its alternates give its
 * own URL, else the Content-Language header, else the detector's reading of its text when that is reliable.
 */
export function pageLanguage(facts: PageFacts, url: string, contentLanguage: string | null, text: string): string | null {
  if (facts.declaredLanguage) return facts.declaredLanguage;
  const self = resolve(url, url);
  const own = facts.alternates.find((a) => a.href === self && a.hreflang !== 'x-default');
  const fromAlternate = normaliseLanguageTag(own?.hreflang);
  if (fromAlternate) return fromAlternate;
  const header = normaliseLanguageTag(contentLanguage);
  if (header) return header;
  const detected = detectLanguage(text);
  return detected.reliable ? detected.language : null;
}
