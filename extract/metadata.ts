import { stripInvisible, type HeadInfo } from './html-tree.js';
import { countWords } from './words.js';
import { parseDateValue } from './date-parse.js';

/**
 * Whitespace collapsed and trimmed, invisible characters (soft hyphens, zero-width spaces, ...) removed: every text
 * the extractor writes goes through here (or, for <pre>, through stripInvisible), so the parse keeps text as it is.
 */
export function normaliseSpace(text: string): string {
  return stripInvisible(text).replace(/\s+/g, ' ').trim();
}

interface JsonLdFacts {
  headline: string | null;
  author: string | null;
  publisher: string | null;
  datePublished: string | null;
  description: string | null;
}

const ARTICLE_TYPES = /article|posting|report|blog|webpage|news|recipe|review/i;

/** Reads schema.org facts from JSON-LD blocks; malformed JSON is ignored. */
export function readJsonLd(blocks: readonly string[]): JsonLdFacts {
  const facts: JsonLdFacts = { headline: null, author: null, publisher: null, datePublished: null, description: null };
  for (const raw of blocks) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.replace(/^\s*<!\[CDATA\[|\]\]>\s*$/g, ''));
    } catch {
      continue;
    }
    const queue: unknown[] = [parsed];
    for (let i = 0; i < queue.length && i < 50; i++) {
      const item = queue[i];
      if (Array.isArray(item)) {
        queue.push(...item);
        continue;
      }
      if (!isRecord(item)) continue;
      if (Array.isArray(item['@graph'])) queue.push(...(item['@graph'] as unknown[]));
      const type = item['@type'];
      const typeText = Array.isArray(type) ? type.join(' ') : typeof type === 'string' ? type : '';
      if (!ARTICLE_TYPES.test(typeText)) continue;
      facts.headline ??= stringOf(item['headline']) ?? stringOf(item['name']);
      facts.author ??= nameOf(item['author']);
      facts.publisher ??= nameOf(item['publisher']);
      facts.datePublished ??= stringOf(item['datePublished']);
      facts.description ??= stringOf(item['description']);
    }
  }
  return facts;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function stringOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = normaliseSpace(value);
  return text.length > 0 ? text : null;
}

function nameOf(value: unknown): string | null {
  if (typeof value === 'string') return stringOf(value);
  if (Array.isArray(value)) {
    const names = value.map(nameOf).filter((n): n is string => n !== null);
    return names.length > 0 ? names.join(', ') : null;
  }
  if (isRecord(value)) return stringOf(value['name']);
  return null;
}

/** A separator between title parts: a dash, bar or bullet between spaces, or a full-width bar (｜) with or without them. */
const TITLE_SEPARATOR = /\s[|\-–—\\/>»·:]\s|\s*｜\s*/;

function wordsIn(text: string): number {
  return countWords(text);
}

/**
 * Readability's <title> clean-up: drop a site name after (or before) a separator when what remains is still a
 * real title; prefer an <h1> that repeats the title exactly.
 */
export function cleanDocumentTitle(rawTitle: string, h1Texts: readonly string[]): string {
  const original = normaliseSpace(rawTitle);
  let title = original;
  if (TITLE_SEPARATOR.test(original)) {
    const parts = original.split(/\s[|\-–—\\/>»·]\s|\s*｜\s*/);
    const beforeLast = original.replace(/(.*)(?:\s[|\-–—\\/>»·]\s|\s*｜\s*).*/, '$1');
    title = beforeLast;
    if (wordsIn(beforeLast) < 3 && parts.length > 1) title = parts.slice(1).join(' - ');
  } else if (original.length > 150 || original.length < 15) {
    const onlyH1 = h1Texts.length === 1 ? h1Texts[0] : undefined;
    if (onlyH1) title = onlyH1;
  }
  title = title.trim();
  const exactH1 = h1Texts.find((h) => h === original);
  if (exactH1) return exactH1;
  const hierarchical = /\s[\\/>»]\s/.test(original);
  const words = wordsIn(title);
  if (words <= 4 && (!hierarchical || words !== wordsIn(original.replace(/[|\-–—\\/>»·｜]+/g, '')) - 1)) {
    return original;
  }
  return title || original;
}

export function pickMeta(head: HeadInfo, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = head.meta.get(key);
    if (value !== undefined) {
      const text = normaliseSpace(value);
      if (text) return text;
    }
  }
  return null;
}

/**
 * A metadata date as an ISO instant (a date alone: its UTC midnight). Parsed without the machine's time zone: a time
 * written without a zone is read as UTC, so two servers in different zones give the same answer.
 */
export function toIsoDate(value: string | null): string | null {
  const parsed = parseDateValue(value, Date.now());
  return parsed ? new Date(parsed.ms).toISOString() : null;
}

export function resolveUrl(href: string | null, base: string): string | null {
  if (!href) return null;
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}
