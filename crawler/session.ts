import type {
  CrawlRunStore,
  CrawlSkipReason,
  NewCrawlSkip,
  FrontierStore,
  InTransaction,
  PageStore,
  Page,
} from '../storage/index.js';
import { readHtml } from './html.js';
import { processResponse, STORED_AND_DONE, type PageResponse, type ResponseSession } from './page-response.js';
import type { RobotsCache } from './robots.js';
import { normaliseUrl, type Scope } from './url.js';

export type { CrawlerConfig, CrawlLogLevel, CrawlLog, FailureReason, DeliberateSkipReason, CrawlProgress, QueuedPage } from './session-types.js';
import type { CrawlLog, CrawlProgress, CrawlerConfig, DeliberateSkipReason, FailureReason, QueuedPage } from './session-types.js';

/** Where an out-of-scope URL leads: its origin and first path segment ("http://h/fr/", "http://h/about.html"). */
function whereOf(url: string): string {
  const u = new URL(url);
  const [, first, ...rest] = u.pathname.split('/');
  return `${u.origin}/${first ?? ''}${first && rest.length > 0 ? '/' : ''}`;
}

/** What the session needs of the frontier: queue admitted pages, record outcomes. */
export interface SessionFrontier {
  add(pages: QueuedPage[]): Promise<number>;
  inFlightCount: number;
}

/**
 * The engine-independent part of a crawl: which URLs are admitted (scope, depth, robots.txt, repeats), what a
 * response means for the page store (new, unchanged, gone, duplicate), the page budget, and the run's counters and
 * skips. Every admitted URL is a row of the crawl frontier; its outcome is recorded there when it is done.
 */
export class CrawlSession {
  private readonly seen = new Set<string>();
  private readonly skippedUrls = new Set<string>();
  /** URLs skipped for max_depth that may still be admitted at a shallower depth. */
  private readonly depthSkipped = new Set<string>();
  private readonly hashOwner = new Map<string, string>();
  private readonly storedRows = new Map<string, Page | null>();
  private readonly pendingSkips: NewCrawlSkip[] = [];
  private readonly outOfScope = new Map<string, { count: number; why: string }>();
  private flushing: Promise<void> = Promise.resolve();
  private admitted = 0;
  private finishedRequests = 0;
  private lastProgressAt = 0;
  private readonly startedAt = Date.now();
  readonly counts = { fetched: 0, unchanged: 0, fresh: 0, gone: 0, duplicates: 0, storedBefore: 0, recovered: 0 };
  /** Shared frontier: pages other workers stored in this run, as of the last refresh (they count against max_pages). */
  private othersStored = 0;
  /** URLs turned away before entering the frontier (out of scope, too deep, robots.txt). */
  private admissionSkips = 0;
  readonly byReason: Partial<Record<DeliberateSkipReason, number>> = {};
  readonly failures: Partial<Record<FailureReason, number>> = {};
  /** Set by runCrawl: the frontier queue admitted pages go to. */
  frontier: SessionFrontier = { add: async () => 0, inFlightCount: 0 };
  /** This session as processResponse sees it. */
  private readonly responses: ResponseSession;

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
      store: FrontierStore;
      log: CrawlLog;
      onProgress?: (p: CrawlProgress) => void;
      /** The collection (id) every page this run stores, or finds fresh, joins. */
      collection?: string;
    },
  ) {
    this.responses = {
      config: deps.config,
      pages: deps.pages,
      scope: deps.scope,
      seen: this.seen,
      hashOwner: this.hashOwner,
      counts: this.counts,
      skip: (url, reason, detail) => this.skip(url, reason, detail),
      retire: (url, status) => this.retire(url, status),
      admit: (urls, depth) => this.admit(urls, depth),
      markSeen: (urls, depth) => this.markSeen(urls, depth),
      finishIn: (url, outcome) => this.finishIn(url, outcome),
    };
  }

  get storedCount(): number {
    return this.ownStored + this.counts.storedBefore + this.othersStored;
  }

  private get ownStored(): number {
    return this.counts.fetched + this.counts.unchanged + this.counts.fresh + this.counts.recovered;
  }

  /** Shared frontier: re-reads how many pages the whole run has stored, so max_pages holds across workers. */
  async refreshSharedCounts(): Promise<void> {
    const counts = await this.deps.store.counts(this.runId);
    const stored = ['stored', 'unchanged', 'fresh'].reduce((sum, outcome) => sum + (counts.outcomes[outcome] ?? 0), 0);
    this.othersStored = Math.max(0, stored - this.ownStored - this.counts.storedBefore);
  }

  /**
   * Shared frontier: a leased URL whose page was stored since the run started was fetched by a worker that died (or
   * hung past its lease) before marking it done. It is done now, its links are followed from the stored copy, and it
   * is not fetched again. Returns whether the URL was settled this way.
   */
  async settleIfStoredSince(url: string, depth: number, runStartedAt: string): Promise<boolean> {
    // Read now, not from the row cached when the URL was admitted: another worker may have stored it since.
    const stored = await this.deps.pages.getByUrl(url);
    this.storedRows.set(url, stored ?? null);
    if (!stored || stored.state === 'gone' || stored.checked_at < runStartedAt) return false;
    this.storedRows.delete(url);
    this.counts.recovered++;
    this.finishedRequests++;
    if (stored.html) await this.admit(readHtml(stored.html, stored.final_url).links, depth + 1);
    await this.deps.store.finish(this.runId, url, 'stored');
    return true;
  }

  /** Page requests that may still start, given the requests in flight. */
  budgetLeft(inFlight: number): number {
    return this.deps.maxPages - this.storedCount - inFlight;
  }

  /**
   * Continues the frontier of a stopped or interrupted run: its URLs count as seen, the pages it stored count against
   * max_pages, and a request it had in flight is done if its page was stored after that run started (its links are
   * followed again from the stored copy), else queued again.
   */
  async resumeFrom(previous: { startedAt: string }): Promise<{ requeued: number; recovered: number }> {
    for (const url of await this.deps.store.urls(this.runId)) this.seen.add(url);
    const counts = await this.deps.store.counts(this.runId);
    const stored = ['stored', 'unchanged', 'fresh'].reduce((sum, outcome) => sum + (counts.outcomes[outcome] ?? 0), 0);
    let recovered = 0;
    const requeue: string[] = [];
    for (const entry of await this.deps.store.leased(this.runId)) {
      const page = await this.deps.pages.getByUrl(entry.url);
      if (page && page.state !== 'gone' && page.checked_at >= previous.startedAt) {
        await this.deps.store.finish(this.runId, entry.url, 'stored');
        recovered++;
        if (page.html) await this.admit(readHtml(page.html, page.final_url).links, entry.depth + 1);
      } else {
        requeue.push(entry.url);
      }
    }
    await this.deps.store.release(this.runId, requeue);
    // Done rows other than stored pages were aliases, failures and skips of the earlier run, counted there.
    this.counts.storedBefore = stored + recovered;
    this.admitted += counts.queued + requeue.length;
    return { requeued: requeue.length, recovered };
  }

  /** The stored row of a URL about to be fetched (for If-None-Match / If-Modified-Since), looked up once. */
  async prepare(url: string): Promise<Page | undefined> {
    if (!this.storedRows.has(url)) this.storedRows.set(url, (await this.deps.pages.getByUrl(url)) ?? null);
    return this.storedRows.get(url) ?? undefined;
  }

  /** Checks candidate URLs found at `depth` and queues the ones the crawl should fetch. */
  async admit(urls: string[], depth: number): Promise<void> {
    const accepted: QueuedPage[] = [];
    const followUps: Array<{ page: Page; depth: number }> = [];
    const freshDone: QueuedPage[] = [];
    await Promise.all(
      urls.map(async (raw) => {
        const url = normaliseUrl(raw);
        if (!url || this.seen.has(url)) return;
        const outOfScope = this.deps.scope.check(url);
        if (outOfScope) {
          this.seen.add(url);
          this.admissionSkips++;
          this.skip(url, 'out_of_scope', outOfScope);
          return;
        }
        if (depth > this.deps.config.max_depth) {
          // Not marked seen: the same URL may still turn up at a shallower depth.
          if (!this.depthSkipped.has(url)) {
            this.depthSkipped.add(url);
            this.admissionSkips++;
            this.skip(url, 'max_depth', `depth ${depth} > max_depth ${this.deps.config.max_depth}`);
          }
          return;
        }
        this.seen.add(url);
        if (this.depthSkipped.delete(url)) {
          // Found again closer to a seed: it is admitted after all (its crawl_skips row stays as a record).
          this.byReason.max_depth = (this.byReason.max_depth ?? 1) - 1;
          this.admissionSkips--;
        }
        const robots = await this.deps.robots.check(url);
        if (!robots.allowed) {
          this.deps.log('info', `robots.txt: not fetching ${url} (${robots.detail ?? 'disallowed'})`);
          this.admissionSkips++;
          this.skip(url, 'robots_txt', robots.detail);
          return;
        }
        this.admitted++;
        if (this.deps.skipFresh) {
          const stored = await this.deps.pages.getByUrl(url);
          if (stored && stored.state !== 'gone' && this.isFresh(stored) && this.budgetLeft(this.frontier.inFlightCount) > 0) {
            this.counts.fresh++;
            this.finishedRequests++;
            freshDone.push({ url, depth });
            followUps.push({ page: stored, depth });
            return;
          }
          this.storedRows.set(url, stored ?? null);
        }
        accepted.push({ url, depth });
      }),
    );
    if (accepted.length > 0) await this.frontier.add(accepted);
    if (freshDone.length > 0) await this.deps.store.addDone(this.runId, freshDone, 'fresh');
    const collection = this.deps.collection;
    if (collection !== undefined) for (const { url } of freshDone) await this.deps.pages.joinCollection(url, collection);
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
    if (reason === 'duplicate') this.counts.duplicates++;
    else if (reason === 'http_error' || reason === 'fetch_error') this.failures[reason] = (this.failures[reason] ?? 0) + 1;
    else this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
    if (reason === 'out_of_scope') {
      const where = whereOf(url);
      const entry = this.outOfScope.get(where) ?? { count: 0, why: detail ?? '' };
      entry.count++;
      this.outOfScope.set(where, entry);
    }
    this.pendingSkips.push({ url, reason, detail });
    if (this.pendingSkips.length >= 200) void this.flushSkips();
    this.deps.log('debug', `skip ${reason} ${url}${detail ? ` (${detail})` : ''}`);
  }

  flushSkips(): Promise<void> {
    const batch = this.pendingSkips.splice(0);
    this.flushing = this.flushing.then(() => this.deps.runs.addSkips(this.runId, batch));
    return this.flushing;
  }

  /** At the end of a run whose page budget is spent: the URLs still queued are skipped for max_pages. */
  async skipRemaining(urls: readonly string[]): Promise<void> {
    for (const url of urls) {
      this.skip(url, 'max_pages', `max_pages ${this.deps.maxPages} reached`);
      this.finishedRequests++;
    }
  }

  /** A stored page that can no longer be served as it was (gone, duplicate, non-HTML, too large). */
  private async retire(url: string, status: number): Promise<void> {
    const stored = await this.deps.pages.getByUrl(url);
    if (stored && stored.state !== 'gone') await this.deps.pages.markGone(url, status);
  }

  /** A request that ended without a usable answer: a deliberate skip or a failure. */
  async requestFailed(url: string, reason: CrawlSkipReason, detail: string, status = 0): Promise<void> {
    this.storedRows.delete(url);
    if (reason === 'fetch_error') this.deps.log('warn', `fetch failed: ${url}: ${detail}`);
    if (reason === 'non_html' || reason === 'too_large') await this.retire(url, status);
    this.skip(url, reason, detail);
    await this.deps.store.finish(this.runId, url, reason);
    this.finishedRequests++;
    this.reportProgress();
  }

  /** A request that never ran because the crawl stopped: back to the queue for a resume. */
  async requestAbandoned(url: string): Promise<void> {
    this.storedRows.delete(url);
    await this.deps.store.release(this.runId, [url]);
  }

  async handleResponse(res: PageResponse): Promise<void> {
    const stored = this.storedRows.has(res.url) ? (this.storedRows.get(res.url) ?? undefined) : await this.deps.pages.getByUrl(res.url);
    try {
      const outcome = await processResponse(this.responses, res, stored);
      // A stored page's entry was marked done in the transaction that stored it; every other outcome is done now.
      if (outcome !== STORED_AND_DONE) await this.deps.store.finish(this.runId, res.url, outcome);
    } finally {
      this.storedRows.delete(res.url);
      this.finishedRequests++;
      this.reportProgress();
    }
  }

  /** Marks the request's frontier entry done inside the transaction that stores its page. */
  private finishIn(url: string, outcome: 'stored' | 'unchanged'): InTransaction {
    const collection = this.deps.collection;
    return async (db) => {
      await this.deps.store.finish(this.runId, url, outcome, db);
      if (collection !== undefined) await this.deps.pages.joinCollection(url, collection, db);
    };
  }

  private async markSeen(urls: string[], depth: number): Promise<void> {
    for (const url of urls) this.seen.add(url);
    await this.deps.store.addDone(this.runId, urls.map((url) => ({ url, depth })), 'alias');
  }

  progress(): CrawlProgress {
    const elapsedMs = Date.now() - this.startedAt;
    const skippedTotal = Object.values(this.byReason).reduce((sum, n) => sum + n, 0);
    const failed = Object.values(this.failures).reduce((sum, n) => sum + n, 0);
    const queued = Math.max(0, this.admitted - this.finishedRequests);
    // Pages stored per second, what the line and the summary call pages/s (requests that skip or fail, and the queue
    // skipped for max_pages at the end, are not pages).
    const rate = elapsedMs > 0 ? ((this.storedCount - this.counts.storedBefore) / elapsedMs) * 1000 : 0;
    const ahead = Math.min(queued, Math.max(0, this.deps.maxPages - this.storedCount));
    const outOfScope = [...this.outOfScope.entries()]
      .sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]))
      .slice(0, 5)
      .map(([where, { count, why }]) => ({ where, count, why }));
    return {
      found: this.counts.storedBefore + this.admitted + this.admissionSkips,
      stored: this.storedCount,
      fetched: this.counts.fetched,
      unchanged: this.counts.unchanged,
      fresh: this.counts.fresh,
      storedBefore: this.counts.storedBefore,
      maxPages: this.deps.maxPages,
      duplicates: this.counts.duplicates,
      failed,
      failures: { ...this.failures },
      gone: this.counts.gone,
      skipped: { total: skippedTotal, byReason: { ...this.byReason } },
      queued,
      outOfScope,
      pagesPerSecond: Math.round(rate * 10) / 10,
      etaMs: rate > 0 && this.finishedRequests >= 5 ? Math.round((ahead / rate) * 1000) : null,
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
