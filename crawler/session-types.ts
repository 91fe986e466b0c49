import type { NotaryConfig } from '../core/index.js';
import type { CrawlSkipReason } from '../storage/index.js';

/** The types a crawl session shares with the crawler, its workers and its callers: settings, log, progress. */

export type CrawlerConfig = NotaryConfig['crawler'];
export type CrawlLogLevel = 'info' | 'warn' | 'debug';
export type CrawlLog = (level: CrawlLogLevel, msg: string) => void;

export type FailureReason = 'http_error' | 'fetch_error';
export type DeliberateSkipReason = Exclude<CrawlSkipReason, FailureReason | 'duplicate'>;

export interface CrawlProgress {
  /**
   * Every distinct URL the crawl came across. It adds up: found = stored + duplicates + failed + skipped.total + queued.
   * (Pages a resumed run inherited count in stored, found and storedBefore.)
   */
  found: number;
  /** Pages kept in the store: fetched + unchanged + fresh (+ storedBefore when resumed). What max_pages counts. */
  stored: number;
  /** Pages stored with new or changed content. */
  fetched: number;
  /** Pages confirmed current: 304 Not Modified, or 200 with the same content hash as stored. */
  unchanged: number;
  /** Stored pages not fetched because they were checked within recrawl_after_hours (only with skipFresh). */
  fresh: number;
  /** Pages the run this one resumed had stored already. */
  storedBefore: number;
  maxPages: number;
  /** Pages with the same content (or canonical URL, or redirect target) as a page already stored. */
  duplicates: number;
  /** HTTP errors and fetch errors (timeouts, refused connections); `gone` of them were stored pages now marked gone. */
  failed: number;
  failures: Partial<Record<FailureReason, number>>;
  gone: number;
  /** URLs not fetched or not stored on purpose, by reason. */
  skipped: { total: number; byReason: Partial<Record<DeliberateSkipReason, number>> };
  /** Admitted and not finished yet (in the frontier; left for --resume when the run stops early). */
  queued: number;
  /** Out-of-scope URLs grouped by where they lead (origin and first path segment), most frequent first, at most 5. */
  outOfScope: Array<{ where: string; count: number; why: string }>;
  /** Finished page requests per second since the crawl started. */
  pagesPerSecond: number;
  /** Estimated time to finish the queued pages (capped by what max_pages still allows), null while unknown. */
  etaMs: number | null;
  elapsedMs: number;
}

export interface QueuedPage {
  url: string;
  depth: number;
}
