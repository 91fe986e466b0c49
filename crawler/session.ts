import { createHash } from 'node:crypto';
import type { NotaryConfig } from '../core/config.js';
import type { CrawlRunStore, CrawlSkipReason, NewCrawlSkip } from '../storage/crawl-runs.js';
import type { PageStore } from '../storage/pages.js';
import type { Page } from '../storage/schema.js';
import { readHtml, readPage, type HtmlQuery } from './html.js';
import type { RobotsCache } from './robots.js';
import { hostOf, normaliseUrl, type Scope } from './url.js';

export type CrawlerConfig = NotaryConfig['crawler'];
export type CrawlLogLevel = 'info' | 'warn' | 'debug';
export type CrawlLog = (level: CrawlLogLevel, msg: string) => void;

export interface CrawlProgress {
  /** Pages stored with new or changed content. */
  fetched: number;
  /** Pages confirmed current: 304 Not Modified, or 200 with the same content hash as stored. */
  unchanged: number;
  /** Stored pages not fetched because they were checked within recrawl_after_hours (only with skipFresh). */
  fresh: number;
  /** Stored pages that answered 404/410 and were marked gone. */
  gone: number;
  /** Requests admitted to the queue and not finished yet. */
  queued: number;
  /** URLs not stored on purpose, with counts by reason (duplicates included). */
  skipped: { total: number; byReason: Partial<Record<CrawlSkipReason, number>> };
  /** HTTP errors and fetch errors (timeouts, refused connections). */
  failed: number;
  duplicates: number;
  /** Finished page requests per second since the crawl started. */
  pagesPerSecond: number;
  elapsedMs: number;
}

export interface QueuedPage {
  url: string;
  depth: number;
}

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

const failureReasons: ReadonlySet<CrawlSkipReason> = new Set(['http_error', 'fetch_error']);

/** text/html or application/xhtml+xml; a response without a Content-Type is given the benefit of the doubt. */
export function isHtmlContentType(contentType: string | null): boolean {
  if (!contentType) return true;
  const essence = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return essence === 'text/html' || essence === 'application/xhtml+xml';
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The engine-independent part of a crawl: which URLs are admitted (scope, depth, page budget, robots.txt, repeats),
 * what a response means for the page store (new, unchanged, gone, duplicate), and the run's counters and skips.
 */
export class CrawlSession {
  private readonly seen = new Set<string>();
  private readonly skippedUrls = new Set<string>();
  private readonly hashOwner = new Map<string, string>();
  /** Stored rows looked up at admission, handed to the engine for conditional requests. */
  private readonly storedRows = new Map<string, Page>();
  private readonly pendingSkips: NewCrawlSkip[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private admitted = 0;
  private finishedRequests = 0;
  private lastProgressAt = 0;
  private readonly startedAt = Date.now();
  readonly counts = { fetched: 0, unchanged: 0, fresh: 0, gone: 0, failed: 0, duplicates: 0 };
  readonly byReason: Partial<Record<CrawlSkipReason, number>> = {};
  /** Set by the engine: puts admitted pages on its request queue. */
  enqueue: (pages: QueuedPage[]) => Promise<void> = async () => {};

  constructor(
    readonly runId: string,
    private readonly deps: {
      config: CrawlerConfig;
      maxPages: number;
      skipFresh: boolean;
      scope: Scope;
      robots: RobotsCache;
      pages: PageStore;
      runs: CrawlRunStore;
      log: CrawlLog;
      onProgress?: (p: CrawlProgress) => void;
    },
  ) {}

  /** The stored row of a queued URL, as looked up at admission (for If-None-Match / If-Modified-Since). */
  storedFor(url: string): Page | undefined {
    return this.storedRows.get(url);
  }

  /** Checks candidate URLs found at `depth` and queues the ones the crawl should fetch. */
  async admit(urls: string[], depth: number): Promise<void> {
    const accepted: QueuedPage[] = [];
    const followUps: Array<{ page: Page; depth: number }> = [];
    await Promise.all(
      urls.map(async (raw) => {
        const url = normaliseUrl(raw);
        if (!url || this.seen.has(url)) return;
        const outOfScope = this.deps.scope.check(url);
        if (outOfScope) {
          this.seen.add(url);
          this.skip(url, 'out_of_scope', outOfScope);
          return;
        }
        if (depth > this.deps.config.max_depth) {
          // Not marked seen: the same URL may still turn up at a shallower depth.
          this.skip(url, 'max_depth', `depth ${depth} > max_depth ${this.deps.config.max_depth}`);
          return;
        }
        this.seen.add(url);
        const budgetSpent = () => {
          if (this.admitted < this.deps.maxPages) return false;
          this.skip(url, 'max_pages', `max_pages ${this.deps.maxPages} reached`);
          return true;
        };
        if (budgetSpent()) return;
        const robots = await this.deps.robots.check(url);
        if (!robots.allowed) {
          this.deps.log('info', `robots.txt: not fetching ${url} (${robots.detail ?? 'disallowed'})`);
          this.skip(url, 'robots_txt', robots.detail);
          return;
        }
        const stored = await this.deps.pages.getByUrl(url);
        // Checked again after the awaits: other candidates may have used up the budget meanwhile.
        if (budgetSpent()) return;
        this.admitted++;
        if (stored && stored.state !== 'gone' && this.deps.skipFresh && this.isFresh(stored)) {
          this.counts.fresh++;
          followUps.push({ page: stored, depth });
          return;
        }
        if (stored) this.storedRows.set(url, stored);
        accepted.push({ url, depth });
      }),
    );
    if (accepted.length > 0) await this.enqueue(accepted);
    for (const { page, depth: pageDepth } of followUps) {
      if (page.html) await this.admit(readHtml(page.html, page.final_url).links, pageDepth + 1);
    }
  }

  private isFresh(page: Page): boolean {
    return Date.now() - Date.parse(page.checked_at) < this.deps.config.recrawl_after_hours * 3_600_000;
  }

  skip(url: string, reason: CrawlSkipReason, detail: string | null): void {
    const key = `${reason} ${url}`;
    if (this.skippedUrls.has(key)) return;
    this.skippedUrls.add(key);
    this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
    if (reason === 'duplicate') this.counts.duplicates++;
    if (failureReasons.has(reason)) this.counts.failed++;
    this.pendingSkips.push({ url, reason, detail });
    if (this.pendingSkips.length >= 200) void this.flushSkips();
    this.deps.log('debug', `skip ${reason} ${url}${detail ? ` (${detail})` : ''}`);
  }

  flushSkips(): Promise<void> {
    const batch = this.pendingSkips.splice(0);
    this.flushing = this.flushing.then(() => this.deps.runs.addSkips(this.runId, batch));
    return this.flushing;
  }

  /** A stored page that can no longer be served as it was (gone, duplicate, non-HTML, too large). */
  private async retire(url: string, status: number): Promise<void> {
    const stored = await this.deps.pages.getByUrl(url);
    if (stored && stored.state !== 'gone') await this.deps.pages.markGone(url, status);
  }

  /** A request that ended without a usable answer: a deliberate skip or a failure. */
  async requestFailed(url: string, reason: CrawlSkipReason, detail: string, status = 0): Promise<void> {
    this.finishedRequests++;
    this.storedRows.delete(url);
    if (reason === 'fetch_error') this.deps.log('warn', `fetch failed: ${url}: ${detail}`);
    if (reason === 'non_html' || reason === 'too_large') await this.retire(url, status);
    this.skip(url, reason, detail);
    this.reportProgress();
  }

  async handleResponse(res: PageResponse): Promise<void> {
    const stored = this.storedRows.get(res.url);
    try {
      await this.processResponse(res, stored);
    } finally {
      this.storedRows.delete(res.url);
      this.finishedRequests++;
      this.reportProgress();
    }
  }

  private async processResponse(res: PageResponse, stored: Page | undefined): Promise<void> {
    const { url, status, depth } = res;
    if (status === 304) {
      if (!stored) {
        this.skip(url, 'http_error', '304 without a stored copy');
        return;
      }
      await this.deps.pages.markUnchanged(url);
      this.counts.unchanged++;
      if (stored.html) await this.admit(readHtml(stored.html, stored.final_url).links, depth + 1);
      return;
    }
    if (status === 404 || status === 410) {
      if (stored && stored.state !== 'gone') {
        await this.deps.pages.markGone(url, status);
        this.counts.gone++;
      }
      this.skip(url, 'http_error', `HTTP ${status}`);
      return;
    }
    if (status < 200 || status >= 300) {
      this.skip(url, 'http_error', `HTTP ${status}`);
      return;
    }
    if (!isHtmlContentType(res.contentType)) {
      await this.retire(url, status);
      this.skip(url, 'non_html', res.contentType ?? 'no content type');
      return;
    }
    const bytes = Buffer.byteLength(res.html);
    if (bytes > this.deps.config.max_page_bytes) {
      await this.retire(url, status);
      this.skip(url, 'too_large', `${bytes} bytes > max_page_bytes ${this.deps.config.max_page_bytes}`);
      return;
    }

    const finalUrl = normaliseUrl(res.finalUrl) ?? url;
    if (finalUrl !== url) {
      const outOfScope = this.deps.scope.check(finalUrl);
      if (outOfScope) {
        this.skip(url, 'out_of_scope', `redirected to ${finalUrl}: ${outOfScope}`);
        return;
      }
      if (this.seen.has(finalUrl)) {
        await this.retire(url, status);
        this.skip(url, 'duplicate', `redirects to ${finalUrl}`);
        return;
      }
      this.seen.add(finalUrl);
    }

    const page = res.$ ? readPage(res.$, finalUrl) : readHtml(res.html, finalUrl);
    const links = page.links;
    let storeUrl = url;
    const canonical = page.canonical && hostOf(page.canonical) === hostOf(finalUrl) ? page.canonical : null;
    if (canonical && canonical !== url) {
      if (canonical === finalUrl) {
        storeUrl = finalUrl;
      } else if (this.seen.has(canonical)) {
        await this.retire(url, status);
        this.skip(url, 'duplicate', `canonical ${canonical}`);
        await this.admit(links, depth + 1);
        return;
      } else {
        this.seen.add(canonical);
        storeUrl = canonical;
      }
    }

    const contentHash = sha256Hex(res.html);
    const owner = this.hashOwner.get(contentHash);
    if (owner !== undefined && owner !== storeUrl) {
      await this.retire(storeUrl, status);
      this.skip(url, 'duplicate', `same content as ${owner}`);
      await this.admit(links, depth + 1);
      return;
    }
    this.hashOwner.set(contentHash, storeUrl);
    if (owner === undefined) {
      const twin = await this.deps.pages.findDuplicate(contentHash, storeUrl);
      if (twin) {
        this.hashOwner.set(contentHash, twin.url);
        await this.retire(storeUrl, status);
        this.skip(url, 'duplicate', `same content as ${twin.url}`);
        await this.admit(links, depth + 1);
        return;
      }
    }

    const before = storeUrl === url ? stored : await this.deps.pages.getByUrl(storeUrl);
    await this.deps.pages.saveFetched({
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
    }, before ?? null);
    if (before && before.state !== 'gone' && before.content_hash === contentHash) this.counts.unchanged++;
    else this.counts.fetched++;
    await this.admit(links, depth + 1);
  }

  progress(): CrawlProgress {
    const elapsedMs = Date.now() - this.startedAt;
    const skippedTotal = Object.entries(this.byReason)
      .filter(([reason]) => !failureReasons.has(reason as CrawlSkipReason))
      .reduce((sum, [, n]) => sum + n, 0);
    return {
      ...this.counts,
      queued: Math.max(0, this.admitted - this.counts.fresh - this.finishedRequests),
      skipped: { total: skippedTotal, byReason: { ...this.byReason } },
      pagesPerSecond: elapsedMs > 0 ? Math.round((this.finishedRequests / elapsedMs) * 1000 * 10) / 10 : 0,
      elapsedMs,
    };
  }

  reportProgress(force = false): void {
    if (!this.deps.onProgress) return;
    const now = Date.now();
    if (!force && now - this.lastProgressAt < 250) return;
    this.lastProgressAt = now;
    this.deps.onProgress(this.progress());
  }
}
