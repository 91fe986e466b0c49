import { createHash } from 'node:crypto';
import type { CrawlSkipReason, InTransaction, PageStore, Page } from '../storage/index.js';
import { readHtml, readPage, type HtmlQuery } from './html.js';
import type { CrawlerConfig } from './session.js';
import { hostOf, normaliseUrl, type Scope } from './url.js';

/** processResponse's answer when the page was stored and its frontier entry marked done in one transaction. */
export const STORED_AND_DONE = 'stored and done';

/** A page request that got an HTTP answer, as either engine saw it. */
export interface PageResponse {
  /** The normalised URL that was requested (the key it was queued under). */
  url: string;
  /** URL after redirects. */
  finalUrl: string;
  status: number;
  depth: number;
  contentType: string | null;
  etag: string | null;
  lastModified: string | null;
  contentLanguage?: string | null;
  /** HTML as received (static) or as rendered (browser); empty for a 304. */
  html: string;
  /** The parsed document when the engine already has one. */
  $?: HtmlQuery;
}

/** text/html or application/xhtml+xml; a response without a Content-Type is given the benefit of the doubt. */
export function isHtmlContentType(contentType: string | null): boolean {
  if (!contentType) return true;
  const essence = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return essence === 'text/html' || essence === 'application/xhtml+xml';
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** What handling a response needs of the crawl session it belongs to (CrawlSession). */
export interface ResponseSession {
  readonly config: CrawlerConfig;
  readonly pages: PageStore;
  readonly scope: Scope;
  /** Normalised URLs the crawl has come across. */
  readonly seen: ReadonlySet<string>;
  /** The URL stored under each content hash seen in this run. */
  readonly hashOwner: Map<string, string>;
  readonly counts: { unchanged: number; fetched: number; gone: number };
  skip(url: string, reason: CrawlSkipReason, detail: string | null): void;
  /** Marks a stored page gone (it can no longer be served as it was). */
  retire(url: string, status: number): Promise<void>;
  /** Queues the links found at `depth`. */
  admit(urls: string[], depth: number): Promise<void>;
  /** Records URLs that are the same page as one being handled (redirect target, canonical URL). */
  markSeen(urls: string[], depth: number): Promise<void>;
  /** Marks the request's frontier entry done inside the transaction that stores its page. */
  finishIn(url: string, outcome: 'stored' | 'unchanged'): InTransaction;
}

/**
 * What a response means for the page store: new, changed or unchanged (stored, its frontier entry marked done in the
 * same transaction: STORED_AND_DONE), gone, a duplicate (same redirect target, canonical URL or content as a page
 * already stored), or a skip; returns the frontier outcome.
 */
export async function processResponse(session: ResponseSession, res: PageResponse, stored: Page | undefined): Promise<string> {
  const { url, status, depth } = res;
  if (status === 304) {
    if (!stored) {
      session.skip(url, 'http_error', '304 without a stored copy');
      return 'http_error';
    }
    // Links first, then the page and its frontier entry in one transaction: a process dying in between leaves the
    // entry leased and the page not marked (fetched again by whoever takes the lease over), never the page marked
    // and the entry leased (which would fetch a page this run already has).
    if (stored.html) await session.admit(readHtml(stored.html, stored.final_url).links, depth + 1);
    await session.pages.markUnchanged(url, session.finishIn(url, 'unchanged'));
    session.counts.unchanged++;
    return STORED_AND_DONE;
  }
  if (status === 404 || status === 410) {
    if (stored && stored.state !== 'gone') {
      await session.pages.markGone(url, status);
      session.counts.gone++;
    }
    session.skip(url, 'http_error', `HTTP ${status}`);
    return 'http_error';
  }
  if (status < 200 || status >= 300) {
    session.skip(url, 'http_error', `HTTP ${status}`);
    return 'http_error';
  }
  if (!isHtmlContentType(res.contentType)) {
    await session.retire(url, status);
    session.skip(url, 'non_html', res.contentType ?? 'no content type');
    return 'non_html';
  }
  const bytes = Buffer.byteLength(res.html);
  if (bytes > session.config.max_page_bytes) {
    await session.retire(url, status);
    session.skip(url, 'too_large', `${bytes} bytes > max_page_bytes ${session.config.max_page_bytes}`);
    return 'too_large';
  }

  const finalUrl = normaliseUrl(res.finalUrl) ?? url;
  if (finalUrl !== url) {
    const outOfScope = session.scope.check(finalUrl);
    if (outOfScope) {
      session.skip(url, 'out_of_scope', `redirected to ${finalUrl}: ${outOfScope}`);
      return 'out_of_scope';
    }
    if (session.seen.has(finalUrl)) {
      await session.retire(url, status);
      session.skip(url, 'duplicate', `redirects to ${finalUrl}`);
      return 'duplicate';
    }
    await session.markSeen([finalUrl], depth);
  }

  const page = res.$ ? readPage(res.$, finalUrl) : readHtml(res.html, finalUrl);
  const links = page.links;
  let storeUrl = url;
  const canonical = page.canonical && hostOf(page.canonical) === hostOf(finalUrl) ? page.canonical : null;
  if (canonical && canonical !== url) {
    if (canonical === finalUrl) {
      storeUrl = finalUrl;
    } else if (session.seen.has(canonical)) {
      await session.retire(url, status);
      session.skip(url, 'duplicate', `canonical ${canonical}`);
      await session.admit(links, depth + 1);
      return 'duplicate';
    } else {
      await session.markSeen([canonical], depth);
      storeUrl = canonical;
    }
  }

  const contentHash = sha256Hex(res.html);
  const owner = session.hashOwner.get(contentHash);
  if (owner !== undefined && owner !== storeUrl) {
    await session.retire(storeUrl, status);
    session.skip(url, 'duplicate', `same content as ${owner}`);
    await session.admit(links, depth + 1);
    return 'duplicate';
  }
  session.hashOwner.set(contentHash, storeUrl);
  if (owner === undefined) {
    const twin = await session.pages.findDuplicate(contentHash, storeUrl);
    if (twin) {
      session.hashOwner.set(contentHash, twin.url);
      await session.retire(storeUrl, status);
      session.skip(url, 'duplicate', `same content as ${twin.url}`);
      await session.admit(links, depth + 1);
      return 'duplicate';
    }
  }

  const before = storeUrl === url ? stored : await session.pages.getByUrl(storeUrl);
  const unchanged = before !== undefined && before.state !== 'gone' && before.content_hash === contentHash;
  // As for a 304: links first, then the page and its frontier entry in one transaction.
  await session.admit(links, depth + 1);
  await session.pages.saveFetched({
    url: storeUrl,
    final_url: finalUrl,
    host: hostOf(finalUrl),
    http_status: status,
    content_type: res.contentType,
    etag: res.etag,
    last_modified: res.lastModified,
    content_language: res.contentLanguage ?? null,
    content_hash: contentHash,
    title: page.title,
    html: res.html,
    crawl_depth: depth,
  }, before ?? null, session.finishIn(url, unchanged ? 'unchanged' : 'stored'));
  if (unchanged) session.counts.unchanged++;
  else session.counts.fetched++;
  return STORED_AND_DONE;
}
