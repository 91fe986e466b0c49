import { comparableText } from '../core/index.js';
import { cleanDocumentTitle, normaliseSpace } from './metadata.js';

/**
 * Page titles without the site's own name. Most sites add the same prefix or suffix to every <title> ("mod_rewrite -
 * Apache HTTP Server Version 2.4", "binascii — Convert between binary and ASCII — Python 3.11.2 documentation"). It is
 * learnt per site from the titles of its pages: a leading or trailing part, cut at a separator, that many of them
 * share. The page keeps its own part, however short ("mod_rewrite", "Glossary"). With nothing learnt yet (a page of
 * a site never crawled), the page's own evidence decides: the site name it declares, the heading it repeats.
 */

/** A separator between title parts: a dash, bar, bullet, colon or slash with spaces around it, or a full-width bar. */
const SEPARATOR = /\s+[|\-–—·•:»/\\~]\s+|\s*｜\s*/u;
const SEPARATOR_GLOBAL = new RegExp(SEPARATOR.source, 'gu');

export interface SiteTitleAffixes {
  /** Comparable forms (core/text comparableText) of the title prefixes and suffixes the site repeats, longest first. */
  prefixes: string[];
  suffixes: string[];
}

/** How many titles must share a part, and what share of the titles that have separators, for it to be the site's. */
const MIN_PAGES = 3;
const MIN_SHARE = 0.2;
/** At most this many of a title's leading or trailing parts can be the site's. */
const MAX_AFFIX_PARTS = 3;

function partsOf(title: string): string[] {
  return normaliseSpace(title).split(SEPARATOR).map((p) => p.trim()).filter((p) => p.length > 0);
}

/** The prefixes and suffixes a site's titles share, from the raw <title> texts of its pages. */
export function learnSiteTitleAffixes(titles: readonly string[]): SiteTitleAffixes {
  const prefixCounts = new Map<string, number>();
  const suffixCounts = new Map<string, number>();
  let withSeparator = 0;
  for (const title of new Set(titles.map(normaliseSpace))) {
    const parts = partsOf(title);
    if (parts.length < 2) continue;
    withSeparator++;
    for (let k = 1; k <= Math.min(MAX_AFFIX_PARTS, parts.length - 1); k++) {
      const prefix = comparableText(parts.slice(0, k).join(' '));
      const suffix = comparableText(parts.slice(parts.length - k).join(' '));
      if (prefix) prefixCounts.set(prefix, (prefixCounts.get(prefix) ?? 0) + 1);
      if (suffix) suffixCounts.set(suffix, (suffixCounts.get(suffix) ?? 0) + 1);
    }
  }
  const needed = Math.max(MIN_PAGES, Math.ceil(withSeparator * MIN_SHARE));
  const shared = (counts: Map<string, number>): string[] =>
    [...counts.entries()]
      .filter(([, n]) => n >= needed)
      .map(([text]) => text)
      .sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  return { prefixes: shared(prefixCounts), suffixes: shared(suffixCounts) };
}

/** `title` without the site's prefix and suffix; null when neither is found (or nothing of the page's own would be left). */
export function stripSiteAffixes(title: string, affixes: SiteTitleAffixes): string | null {
  const parts = partsOf(title);
  if (parts.length < 2) return null;
  const separators = normaliseSpace(title).match(SEPARATOR_GLOBAL) ?? [];
  let start = 0;
  let end = parts.length;
  for (let k = Math.min(MAX_AFFIX_PARTS, parts.length - 1); k >= 1; k--) {
    if (affixes.suffixes.includes(comparableText(parts.slice(parts.length - k).join(' ')))) {
      end = parts.length - k;
      break;
    }
  }
  for (let k = Math.min(MAX_AFFIX_PARTS, end - 1); k >= 1; k--) {
    if (affixes.prefixes.includes(comparableText(parts.slice(0, k).join(' ')))) {
      start = k;
      break;
    }
  }
  if (start === 0 && end === parts.length) return null;
  if (start >= end) return null;
  // Rejoin the page's own parts with the separators they had.
  let out = parts[start] ?? '';
  for (let i = start + 1; i < end; i++) out += `${separators[i - 1] ?? ' - '}${parts[i]}`;
  return out.trim() || null;
}

export interface TitleEvidence {
  /** The <title> text. */
  rawTitle: string | null;
  /** A title from metadata (JSON-LD headline, og:title, dc:title), usually already without the site name. */
  metaTitle: string | null;
  /** Texts of the page's <h1> elements. */
  h1Texts: readonly string[];
}

/**
 * The page's title. With the site's learnt affixes: the metadata title or the <title> without them. Without (a site
 * not crawled yet), the metadata title, else Readability's clean-up of the <title> (which keeps the site name beside
 * a very short page name, since one page cannot tell which part is the site's), else the first <h1>.
 */
export function decideTitle(evidence: TitleEvidence, affixes?: SiteTitleAffixes | null): string | null {
  const raw = evidence.rawTitle ? normaliseSpace(evidence.rawTitle) : '';
  const meta = evidence.metaTitle ? normaliseSpace(evidence.metaTitle) : '';
  if (affixes && (affixes.prefixes.length > 0 || affixes.suffixes.length > 0)) {
    if (meta) return stripSiteAffixes(meta, affixes) ?? meta;
    const fromRaw = raw ? stripSiteAffixes(raw, affixes) : null;
    if (fromRaw) return fromRaw;
  }
  if (meta) return meta;
  if (raw) {
    const cleaned = cleanDocumentTitle(raw, evidence.h1Texts);
    if (cleaned && cleaned !== raw) {
      // Readability keeps the parts after a short first part ("mod_rewrite - Apache HTTP Server Version 2.4" ->
      // the site name). When the page's <h1> names a part that was dropped, that part is the page's own: keep all.
      const h1s = evidence.h1Texts.map(comparableText).filter((h) => h.length > 0);
      const kept = comparableText(cleaned);
      const named = (part: string): boolean => {
        const text = comparableText(part);
        return text.length > 0 && h1s.some((h) => h.includes(text));
      };
      if (!named(cleaned) && partsOf(raw).some((part) => !kept.includes(comparableText(part)) && named(part))) return raw;
    }
    if (cleaned) return cleaned;
  }
  return evidence.h1Texts[0] ?? null;
}
