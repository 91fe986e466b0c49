import { Configuration, RequestQueue } from '@crawlee/core';
import type { Log } from '@crawlee/core';
import { NotaryError } from '../core/errors.js';
import { AgentPool, userAgentHeader, type AddressPolicy } from '../extract/fetch/index.js';
import type { CrawlRunStore } from '../storage/crawl-runs.js';
import type { PageStore } from '../storage/pages.js';
import { crawleeLog } from './crawlee-log.js';
import { RobotsCache } from './robots.js';
import { CrawlSession, type CrawlerConfig, type CrawlLog, type CrawlProgress } from './session.js';
import { collectSitemapUrls } from './sitemaps.js';
import { runBrowserEngine } from './engine-browser.js';
import { runStaticEngine } from './engine-static.js';
import { HostGate } from './host-gate.js';
import { crawlDelayMs } from './politeness.js';
import { compileScope, hostOf, normaliseUrl } from './url.js';

export interface RunCrawlOptions {
  config: CrawlerConfig;
  pages: PageStore;
  runs: CrawlRunStore;
  /** Overrides config.seeds. */
  seeds?: string[];
  /** Overrides config.max_pages. */
  maxPages?: number;
  /**
   * Leave pages checked within config.recrawl_after_hours alone (their stored links are still followed). For the
   * background worker; an explicit crawl re-checks every page with conditional requests.
   */
  skipFresh?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: CrawlProgress) => void;
  log?: (level: 'info' | 'warn' | 'debug', msg: string) => void;
  /**
   * The address policy of every request of the crawl (pages, robots.txt, sitemaps, the browser's requests): the same
   * as /v1/extract's (config extract.allow_private_networks and extract.allowed_private_ranges). The seeds' own
   * origins are always reachable, since the operator named them; link-local and metadata addresses never are.
   * Default: public addresses only.
   */
  addressPolicy?: Omit<AddressPolicy, 'allowedPrivateOrigins'>;
}

/** How the crawler reaches sites: the one fetcher's address policy, and keep-alive connections for the crawl. */
export interface CrawlFetch {
  policy: AddressPolicy;
  agents: AgentPool;
}

export interface CrawlSummary extends CrawlProgress {
  runId: string;
  seeds: string[];
  /** True when the signal (or SIGINT, which crawlee handles during a run) stopped the crawl before the queue ran dry. */
  aborted: boolean;
}

/** Everything an engine (static HTTP or browser) needs to run the queue of one crawl. */
export interface EngineContext {
  config: CrawlerConfig;
  session: CrawlSession;
  gate: HostGate;
  queue: RequestQueue;
  crawleeConfig: Configuration;
  crawleeLog: Log;
  userAgent: string;
  fetch: CrawlFetch;
  robots: RobotsCache;
  maxPages: number;
  signal?: AbortSignal;
  log: CrawlLog;
}

function resolveSeeds(raw: string[]): string[] {
  if (raw.length === 0) throw new NotaryError('invalid_seed', 'no crawl seeds: pass seeds or set crawler.seeds');
  return raw.map((seed) => {
    const url = normaliseUrl(seed.trim());
    if (!url) throw new NotaryError('invalid_seed', `crawl seed "${seed}" is not an absolute http(s) URL`);
    return url;
  });
}

/**
 * Crawls from the seeds within the configured scope, storing HTML pages through the PageStore and recording the run in
 * crawl_runs / crawl_skips. Resolves when the queue is empty, max_pages is reached, or the signal aborts.
 */
export async function runCrawl(options: RunCrawlOptions): Promise<CrawlSummary> {
  const { config } = options;
  const log: CrawlLog = options.log ?? (() => {});
  const seeds = resolveSeeds(options.seeds ?? config.seeds);
  const maxPages = options.maxPages ?? config.max_pages;
  if (!Number.isInteger(maxPages) || maxPages <= 0) throw new NotaryError('invalid_request', `maxPages must be a positive integer, got ${maxPages}`);
  const scope = compileScope(seeds, { sameHost: config.same_host, include: config.include, exclude: config.exclude });
  const userAgent = userAgentHeader(config);
  const fetch: CrawlFetch = {
    policy: {
      allowPrivateNetworks: false,
      ...options.addressPolicy,
      allowedPrivateOrigins: [...new Set(seeds.map((seed) => new URL(seed).origin))],
    },
    agents: new AgentPool(config.per_host_concurrency),
  };
  const gate = new HostGate(config.per_host_concurrency, config.per_host_delay_ms);
  const robots = new RobotsCache({
    userAgent,
    policy: fetch.policy,
    agents: fetch.agents,
    timeoutMs: config.request_timeout_ms,
    enabled: config.respect_robots_txt,
    signal: options.signal,
    // robots.txt is read when a URL of its origin is admitted, so the spacing is set before the first request.
    onCrawlDelay: (origin, seconds) => {
      const delay = crawlDelayMs(seconds, { perHostDelayMs: config.per_host_delay_ms, maxMs: config.crawl_delay_max_ms });
      if (!delay) return;
      const host = hostOf(origin);
      if (delay.capped) {
        log('warn', `robots.txt of ${origin}: Crawl-delay ${seconds} s is more than crawl_delay_max_ms ${config.crawl_delay_max_ms}; using the cap`);
      }
      gate.setHostDelay(host, delay.delayMs);
      log('info', `robots.txt of ${origin}: Crawl-delay ${seconds} s; requests to ${host} start ${gate.hostDelay(host)} ms apart`);
    },
  });

  const runId = await options.runs.start(seeds);
  const session = new CrawlSession(runId, {
    config,
    maxPages,
    skipFresh: options.skipFresh ?? false,
    scope,
    robots,
    pages: options.pages,
    runs: options.runs,
    log,
    onProgress: options.onProgress,
  });
  // A private, memory-only crawlee configuration: nothing is written under the working directory.
  const crawleeConfig = new Configuration({ persistStorage: false, purgeOnStart: false, headless: true });
  const queue = await RequestQueue.open(`crawl-${runId}`, { config: crawleeConfig });
  session.enqueue = async (batch) => {
    await queue.addRequests(batch.map(({ url, depth }) => ({ url, uniqueKey: url, userData: { depth } })));
  };

  let aborted = false;
  try {
    log('info', `crawl ${runId}: seeds ${seeds.join(', ')}; max_pages ${maxPages}, max_depth ${config.max_depth}`);
    await session.admit(seeds, 0);
    if (config.use_sitemaps && !options.signal?.aborted) {
      const origins = [...new Set(seeds.map((seed) => new URL(seed).origin))];
      for (const origin of origins) {
        const listed = await robots.sitemaps(origin);
        const urls = await collectSitemapUrls([...listed, `${origin}/sitemap.xml`], {
          userAgent,
          policy: fetch.policy,
          agents: fetch.agents,
          timeoutMs: config.request_timeout_ms,
          signal: options.signal,
          onProblem: (msg) => log('warn', msg),
        });
        if (urls.length > 0) log('info', `sitemaps of ${origin}: ${urls.length} URLs`);
        await session.admit(urls, 1);
      }
    }
    const context: EngineContext = {
      config,
      session,
      gate,
      queue,
      crawleeConfig,
      crawleeLog: crawleeLog(log),
      userAgent,
      fetch,
      robots,
      maxPages,
      signal: options.signal,
      log,
    };
    if (!options.signal?.aborted) {
      if (config.renderer === 'browser') await runBrowserEngine(context);
      else await runStaticEngine(context);
    }
    // Crawlee also ends a run early on SIGINT; an unfinished queue tells that apart from a completed crawl.
    aborted = (options.signal?.aborted ?? false) || !(await queue.isFinished());
  } finally {
    await session.flushSkips();
    const summary = session.progress();
    await options.runs.finish(runId, { ...summary, aborted });
    await queue.drop().catch(() => {});
    fetch.agents.destroy();
  }
  session.reportProgress(true);
  const summary: CrawlSummary = { ...session.progress(), runId, seeds, aborted };
  log(
    'info',
    `crawl ${runId} done: ${summary.fetched} fetched, ${summary.unchanged} unchanged, ${summary.skipped.total} skipped, ` +
      `${summary.failed} failed in ${(summary.elapsedMs / 1000).toFixed(1)} s (${summary.pagesPerSecond} pages/s)`,
  );
  return summary;
}
