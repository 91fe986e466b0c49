import { NotaryError, comparableText } from '../core/index.js';
import { countWords, extractBlocks, textOf } from './content.js';
import { parseHtml } from './html-tree.js';
import { normaliseSpace, pickMeta, readJsonLd, resolveUrl, toIsoDate } from './metadata.js';
import { decideTitle, type SiteTitleAffixes } from './site-title.js';
import type { ExtractedDocument } from './types.js';

/** Bounds the work one page can cost; larger documents are refused rather than parsed. */
export const MAX_HTML_CHARS = 10_000_000;

/**
 * Extracts the main content and metadata of an HTML page: boilerplate (navigation, headers, footers, sidebars,
 * cookie banners, scripts) removed, headings kept with their levels. Pure and synchronous; a few ms a page.
 */
export interface ExtractOptions {
  /** The title prefixes and suffixes the page's site repeats (learnt from its other pages), when known. */
  siteTitles?: SiteTitleAffixes | null;
  /** Keep reader comments after the article (`include_comments`); by default the article alone is the content. */
  includeComments?: boolean;
}

export function extractDocument(html: string, url: string, options: ExtractOptions = {}): ExtractedDocument {
  if (typeof html !== 'string') throw new NotaryError('invalid_request', 'extractDocument: html must be a string');
  if (html.length > MAX_HTML_CHARS) {
    throw new NotaryError('page_too_large', `page has ${html.length} characters; the limit is ${MAX_HTML_CHARS}`);
  }
  const { body, head, h1s, bylineCandidates, noscripts, controlledIds } = parseHtml(html);
  const blocks = extractBlocks({ body, noscripts, controlledIds, includeComments: options.includeComments === true });
  const jsonLd = readJsonLd(head.jsonLd);

  const h1Texts = h1s.map((h) => textOf(h)).filter((t) => t.length > 0);
  const metaTitle =
    jsonLd.headline ?? pickMeta(head, ['dc:title', 'dcterm:title', 'og:title', 'twitter:title', 'parsely-title']);
  const title = decideTitle({ rawTitle: head.title, metaTitle, h1Texts }, options.siteTitles);

  const metaAuthor = pickMeta(head, ['dc:creator', 'dcterm:creator', 'author', 'parsely-author', 'article:author']);
  let byline = jsonLd.author ?? (metaAuthor && !/^https?:\/\//.test(metaAuthor) ? metaAuthor : null);
  if (!byline) {
    for (const candidate of bylineCandidates) {
      const text = normaliseSpace(textOf(candidate));
      if (text.length > 0 && text.length < 100) {
        byline = text;
        break;
      }
    }
  }

  for (const block of blocks) {
    if (block.type !== 'heading' && block.links) {
      for (const link of block.links) link.href = resolveUrl(link.href, url) ?? link.href;
    }
  }
  // The body text leaves out a heading that repeats the title (the title is its own field, and word_count and the
  // excerpt are the body's); the blocks keep it, and so do the text and markdown outputs (renderText), once.
  const titleKey = title ? comparableText(title) : null;
  const text = blocks
    .filter((b, i) => !(i < 3 && b.type === 'heading' && titleKey && isSameTitle(comparableText(b.text), titleKey)))
    .map((b) => b.text)
    .join('\n\n');
  return {
    title,
    byline,
    siteName: jsonLd.publisher ?? pickMeta(head, ['og:site_name', 'application-name']),
    lang: head.lang ? head.lang.trim() || null : pickMeta(head, ['content-language', 'og:locale']),
    publishedAt: toIsoDate(
      jsonLd.datePublished ??
        pickMeta(head, ['article:published_time', 'parsely-pub-date', 'og:published_time', 'dc.date', 'dcterms.date', 'date']),
    ),
    description:
      jsonLd.description ?? pickMeta(head, ['dc:description', 'dcterm:description', 'og:description', 'description', 'twitter:description']),
    canonicalUrl: resolveUrl(head.canonicalHref, url),
    blocks,
    text,
    wordCount: countWords(text),
  };
}


/** Readability's check: the heading and the title share nearly all their words. */
export function isSameTitle(heading: string, title: string): boolean {
  if (!heading || !title) return false;
  if (heading === title || title.includes(heading) || heading.includes(title)) return heading.length >= title.length * 0.5;
  const titleWords = new Set(title.split(' '));
  const headingWords = heading.split(' ');
  const shared = headingWords.filter((w) => titleWords.has(w)).length;
  return shared / Math.max(headingWords.length, titleWords.size) >= 0.75;
}
