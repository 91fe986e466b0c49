/**
 * Publication and modification dates in a page's JSON-LD: the article's own item first. A page often carries several
 * items (the article, its WebPage, a breadcrumb, an ItemList of related stories, the comments); only article-like
 * and page-like types are read, comments and lists are not walked into, and when several articles disagree the one
 * whose url or @id is the page's own wins. Embedded videos' upload dates are not the page's.
 */

export interface JsonLdDate {
  kind: 'published' | 'modified';
  raw: string;
  /** `NewsArticle.datePublished` and the like. */
  detail: string;
}

const ARTICLE_TYPES = /article|posting|report|blog|news|recipe|review|howto|creativework/i;
/** A video or podcast item dates the page only when it is the page (its url is the page's): else it is an embed. */
const MEDIA_TYPES = /videoobject|podcastepisode|audioobject|clip|episode/i;
const PAGE_TYPES = /webpage|aboutpage|qapage|faqpage|collectionpage|itempage/i;

interface Item {
  type: string;
  rank: number;
  own: boolean;
  record: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeOf(record: Record<string, unknown>): string {
  const type = record['@type'];
  if (Array.isArray(type)) return type.filter((t) => typeof t === 'string').join(' ');
  return typeof type === 'string' ? type : '';
}

function samePage(value: unknown, pageUrl: string): boolean {
  const candidates: unknown[] = Array.isArray(value) ? value : [value];
  for (const c of candidates) {
    const href = typeof c === 'string' ? c : isRecord(c) ? c['@id'] ?? c['url'] : null;
    if (typeof href !== 'string') continue;
    try {
      const a = new URL(href, pageUrl);
      const b = new URL(pageUrl);
      if (a.host.replace(/^www\./, '') === b.host.replace(/^www\./, '') && a.pathname.replace(/\/$/, '') === b.pathname.replace(/\/$/, '')) {
        return true;
      }
    } catch {
      // not a URL
    }
  }
  return false;
}

function dateString(value: unknown): string | null {
  if (typeof value === 'string' && value.trim()) return value.trim();
  if (Array.isArray(value)) return dateString(value[0]);
  if (isRecord(value)) return dateString(value['@value']);
  return null;
}

/**
 * JSON-LD that is not JSON (raw line breaks in strings, single quotes, trailing commas: 6 of 194 blocks on the
 * scrapinghub pages) still names its dates: the first `"datePublished": "..."` and `"dateModified": "..."` of each
 * such block, read after every parseable block's.
 */
function unparsedDates(raw: string): JsonLdDate[] {
  const out: JsonLdDate[] = [];
  for (const [key, kind] of [['datePublished', 'published'], ['dateModified', 'modified']] as const) {
    const value = new RegExp(`["']${key}["']\\s*:\\s*["']([^"'\\n]{6,60})["']`).exec(raw)?.[1];
    if (value) out.push({ kind, raw: value, detail: `${key} (invalid JSON-LD)` });
  }
  return out;
}

function itemsOf(blocks: readonly string[], pageUrl: string, broken: string[]): Item[] {
  const items: Item[] = [];
  for (const raw of blocks) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.replace(/^\s*(?:<!--)?\s*(?:<!\[CDATA\[)?|(?:\]\]>)?\s*(?:-->)?\s*$/g, ''));
    } catch {
      broken.push(raw);
      continue;
    }
    const queue: unknown[] = [parsed];
    for (let i = 0; i < queue.length && i < 200; i++) {
      const item = queue[i];
      if (Array.isArray(item)) {
        queue.push(...(item as unknown[]));
        continue;
      }
      if (!isRecord(item)) continue;
      if (Array.isArray(item['@graph'])) queue.push(...(item['@graph'] as unknown[]));
      // A WebPage's mainEntity is the article itself; other nested items (comments, authors, images) are not it.
      if (isRecord(item['mainEntity'])) queue.push(item['mainEntity']);
      const type = typeOf(item);
      const own = samePage(item['url'], pageUrl) || samePage(item['@id'], pageUrl) || samePage(item['mainEntityOfPage'], pageUrl);
      const rank = MEDIA_TYPES.test(type) ? (own ? 2 : -1) : ARTICLE_TYPES.test(type) ? 0 : PAGE_TYPES.test(type) ? 1 : -1;
      if (rank < 0) continue;
      items.push({ type: type.split(' ')[0] ?? type, rank, own, record: item });
    }
  }
  // Articles before pages; among them the page's own item first; otherwise document order.
  return items.sort((a, b) => a.rank - b.rank || Number(b.own) - Number(a.own));
}

export function readJsonLdDates(blocks: readonly string[], pageUrl: string): JsonLdDate[] {
  const out: JsonLdDate[] = [];
  const broken: string[] = [];
  for (const item of itemsOf(blocks, pageUrl, broken)) {
    for (const [key, kind] of [
      ['datePublished', 'published'],
      ['dateCreated', 'published'],
      ['uploadDate', 'published'],
      ['dateModified', 'modified'],
    ] as const) {
      const raw = dateString(item.record[key]);
      if (raw) out.push({ kind, raw, detail: `${item.type}.${key}` });
    }
  }
  for (const raw of broken) out.push(...unparsedDates(raw));
  return out;
}
