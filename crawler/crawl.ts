import { Configuration } from '@crawlee/core';
import type { Log } from '@crawlee/core';
import { NotaryError } from '../core/index.js';
import { AgentPool, userAgentHeader, type AddressPolicy } from '../extract/index.js';
import { processOwner, type CrawlRun, type CrawlRunStore } from '../storage/index.js';
import type { FrontierStore, PageStore } from '../storage/index.js';
import { FrontierQueue } from './frontier-queue.js';
import { crawleeLog } from './crawlee-log.js';
import { RobotsCache } from './robots.js';
import { CrawlSession, type CrawlerConfig, type CrawlLog, type CrawlProgress } from './session.js';
import { collectSitemapUrls } from './sitemaps.js';
import { runBrowserEngine } from './engine-browser.js';
import { runStaticEngine } from './engine-static.js';
import { maxInFlightMs } from './engine-common.js';
import { HostGate } from './host-gate.js';
import { crawlDelayMs } from './politeness.js';
import { compileScope, hostOf, normaliseUrl } from './url.js';

export interface RunCrawlOptions {
  config: CrawlerConfig;
  pages: PageStore;
  runs: CrawlRunStore;
  frontier: FrontierStore;
  /** Overrides config.seeds. */
  seeds?: string[];
  /** Overrides config.max_pages. */
  maxPages?: number;
  /**
   * Leave pages checked within config.recrawl_after_hours alone (their stored links are still followed). For the
   * background worker; an explicit crawl re-checks every page with conditional requests.
   */
  skipFresh?: boolean;
  /** A stopped or interrupted run to continue: its seeds, page budget, collection and frontier. */
  resume?: CrawlRun;
  /** The collection (id) every page the run stores joins (a resume keeps the one it was started with); default: none. */
  collection?: string;
  /**
   * Crawl with the other crawler processes of a deployment (crawler.shared_frontier): join the running run with the
   * same seeds or start it, lease with `leaseMs` leases, and leave the run to the others when they still hold leases.
   */
  shared?: {
    leaseMs: number;
    hostSlots?: {
      reserve(host: string, delayMs: number): Promise<number>;
      acquire(host: string, limit: number, owner: string, options: { ttlMs: number; signal?: AbortSignal | undefined }): Promise<() => Promise<void>>;
    };
  };
  signal?: AbortSignal;
  onProgress?: (p: CrawlProgress) => void;
  /** Called with the run's id once it is recorded, before anything is fetched. */
  onStart?: (runId: string) => void;
  log?: (level: 'info' | 'warn' | 'debug', msg: string) => void;
  /**
   * The address policy of every request of the crawl (pages, robots.txt, sitemaps, the browser's requests): the same
   * as /v1/extract's (config extract.allow_private_networks and extract.allowed_private_ranges). The seeds' own
   * origins are always reachable, since the operator named them; link-local and metadata addresses never are.
   * Default: public addresses only.
   */
  addressPolicy?: Omit<AddressPolicy, 'allowedPrivateOrigins'>;
  /**
   * Whether the seeds' origins are reachable whatever the address policy says (default true: an operator named them).
   * False for seeds a tenant submitted (crawl jobs): the policy alone decides.
   */
  exemptSeedOrigins?: boolean;
}

/** How the crawler reaches sites: the one fetcher's address policy, and keep-alive connections for the crawl. */
export interface CrawlFetch {
  policy: AddressPolicy;
  agents: AgentPool;
}

export interface CrawlSummary extends CrawlProgress {
  runId: string;
  seeds: string[];
  /** What the crawl kept to (scope rule, include and exclude patterns). */
  scope: string;
  /** finished: the queue ran dry or max_pages was reached; stopped: a signal ended it, `notary crawl --resume` goes on. */
  status: 'finished' | 'stopped';
  /** True when the crawl stopped before its queue ran dry (status stopped). */
  aborted: boolean;
  /** The run this one resumed. */
  resumedFrom: string | null;
  /** Shared frontier: whether this process joined a run another worker started, and left it to the others. */
  joined?: boolean;
  leftToOthers?: boolean;
}

/** Everything an engine (static HTTP or browser) needs to run the queue of one crawl. */
export interface EngineContext {
  config: CrawlerConfig;
  session: CrawlSession;
  gate: HostGate;
  queue: FrontierQueue;
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

interface RunOptions {
  max_pages?: number;
  skip_fresh?: boolean;
  collection?: string;
}

/** The options a stopped run was started with, as recorded in crawl_runs.options. */
function recordedOptions(run: CrawlRun): RunOptions {
  try {
    return run.options ? (JSON.parse(run.options) as RunOptions) : {};
  } catch {
    return {};
  }
}

const HEARTBEAT_MS = 10_000;

/**
 * Crawls from the seeds within the configured scope, storing HTML pages through the PageStore and recording the run in
 * crawl_runs / crawl_skips, with its frontier in crawl_frontier. Resolves when the queue is empty, max_pages pages are
 * stored, or the signal aborts (the run is then "stopped" and can be resumed).
 */
export async function runCrawl(options: RunCrawlOptions): Promise<CrawlSummary> {
  const { config, resume } = options;
  const log: CrawlLog = options.log ?? (() => {});
  const dead = await options.runs.markDead();
  for (const id of dead) log('info', `crawl ${id} was interrupted (its process is gone): resumable with notary crawl --resume`);
  const recorded = resume ? recordedOptions(resume) : {};
  const seeds = resolveSeeds(resume ? (JSON.parse(resume.seeds) as string[]) : (options.seeds ?? config.seeds));
  const maxPages = options.maxPages ?? recorded.max_pages ?? config.max_pages;
  const skipFresh = options.skipFresh ?? recorded.skip_fresh ?? false;
  if (!Number.isInteger(maxPages) || maxPages <= 0) throw new NotaryError('invalid_request', `maxPages must be a positive integer, got ${maxPages}`);
  const scope = compileScope(seeds, { scope: config.scope, include: config.include, exclude: config.exclude });
  const userAgent = userAgentHeader(config);
  const fetch: CrawlFetch = {
    policy: {
      allowPrivateNetworks: false,
      ...options.addressPolicy,
      allowedPrivateOrigins: options.exemptSeedOrigins === false ? [] : [...new Set(seeds.map((seed) => new URL(seed).origin))],
    },
    agents: new AgentPool(config.per_host_concurrency),
  };
  const owner = processOwner();
  const hostSlots = options.shared?.hostSlots;
  const leaseMs = options.shared?.leaseMs ?? 0;
  const gate = new HostGate(
    config.per_host_concurrency,
    config.per_host_delay_ms,
    hostSlots && {
      reserve: (host, delayMs) => hostSlots.reserve(host, delayMs),
      hold: (host, limit, signal) => hostSlots.acquire(host, limit, owner, { ttlMs: leaseMs, signal }),
    },
  );
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

  const collection = options.collection ?? recorded.collection;
  const runOptions = { max_pages: maxPages, skip_fresh: skipFresh, ...(options.shared ? { shared: true } : {}), ...(collection !== undefined ? { collection } : {}) };
  const joinedRun = options.shared && !resume ? await options.runs.joinShared(seeds, runOptions) : undefined;
  const runId =
    joinedRun?.id ??
    (await options.runs.start(seeds, {
      ...(resume ? { resumedFrom: resume.id } : {}),
      runOptions,
    }));
  const runStartedAt = joinedRun?.started_at ?? (await options.runs.get(runId))?.started_at ?? new Date().toISOString();
  if (resume) await options.frontier.adopt(resume.id, runId);
  options.onStart?.(runId);
  const session = new CrawlSession(runId, {
    config,
    maxPages,
    skipFresh,
    scope,
    robots,
    pages: options.pages,
    runs: options.runs,
    store: options.frontier,
    log,
    ...(collection !== undefined ? { collection } : {}),
    onProgress: options.onProgress,
  });
  const queue = new FrontierQueue({
    store: options.frontier,
    runId,
    owner,
    // Shared: small batches, so a worker does not sit on leases the others could be fetching.
    batch: options.shared ? Math.max(2, config.max_concurrency) : Math.max(16, config.max_concurrency * 2),
    budgetLeft: (inFlight) => session.budgetLeft(inFlight),
    maxInFlightMs: maxInFlightMs(config),
    onLost: (url, ms) => log('warn', `${url}: no outcome ${Math.round(ms / 1000)} s after it started (lost by the crawler engine); queued again`),
    ...(options.shared
      ? {
          shared: {
            leaseMs: options.shared.leaseMs,
            maxPages,
            onRefill: () => session.refreshSharedCounts(),
            settle: (url: string, depth: number) => session.settleIfStoredSince(url, depth, runStartedAt),
          },
        }
      : {}),
  });
  session.frontier = queue;
  // A private, memory-only crawlee configuration: nothing is written under the working directory.
  const crawleeConfig = new Configuration({ persistStorage: false, purgeOnStart: false, headless: true });
  const heartbeat = setInterval(() => void options.runs.heartbeat(runId).catch(() => {}), HEARTBEAT_MS);
  heartbeat.unref();

  let status: 'finished' | 'stopped' = 'stopped';
  let leftToOthers = false;
  try {
    log(
      'info',
      `crawl ${runId}${joinedRun ? ' (joined: a shared frontier)' : options.shared ? ' (started: a shared frontier)' : ''}: seeds ${seeds.join(', ')}; ` +
        `${scope.description}; max_pages ${maxPages}, max_depth ${config.max_depth}`,
    );
    if (joinedRun) {
      // The worker that started the run admitted the seeds and sitemaps; admitting the seeds again is harmless and
      // covers a starter that died before it did.
      await session.admit(seeds, 0);
    } else if (resume) {
      const resumed = await session.resumeFrom({ startedAt: resume.started_at });
      log(
        'info',
        `resuming ${resume.id} (${resume.status ?? 'stopped'}): ${session.counts.storedBefore} pages stored before, ` +
          `${resumed.recovered} of them finished just before it stopped; ${resumed.requeued} requests in flight queued again`,
      );
    } else {
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
    const budgetSpent = queue.budgetSpent();
    await queue.close();
    // Shared: while other workers hold leases the run is theirs to end; this process only leaves it.
    leftToOthers = options.shared !== undefined && (await options.frontier.leasedByOthers(runId, owner)) > 0;
    const pending = await options.frontier.pending(runId);
    if (leftToOthers) {
      status = options.signal?.aborted ? 'stopped' : 'finished';
    } else if (budgetSpent) {
      await session.skipRemaining(pending);
      status = 'finished';
    } else {
      // Crawlee also ends a run early on SIGINT; requests left in the frontier tell that apart from a completed crawl.
      status = pending.length === 0 && !options.signal?.aborted ? 'finished' : 'stopped';
    }
  } finally {
    clearInterval(heartbeat);
    // An engine that threw left the queue open: stop renewing its leases and give back what never started.
    await queue.close().catch(() => {});
    await session.flushSkips();
    const summary = session.progress();
    if (leftToOthers) {
      log('info', `crawl ${runId}: leaving the run to the workers that still hold leases`);
    } else {
      await options.runs.finish(runId, { ...summary, aborted: status === 'stopped' }, status);
      if (status === 'finished') await options.frontier.clear(runId);
    }
    fetch.agents.destroy();
  }
  session.reportProgress(true);
  const summary: CrawlSummary = {
    ...session.progress(),
    runId,
    seeds,
    scope: scope.description,
    status,
    aborted: status === 'stopped',
    resumedFrom: resume?.id ?? null,
    ...(options.shared ? { joined: joinedRun !== undefined, leftToOthers } : {}),
  };
  log(
    'info',
    `crawl ${runId} ${status}: ${summary.stored} pages stored (${summary.fetched} new or changed, ${summary.unchanged} unchanged), ` +
      `${summary.duplicates} duplicates, ${summary.failed} failed, ${summary.skipped.total} skipped, ${summary.queued} queued ` +
      `in ${(summary.elapsedMs / 1000).toFixed(1)} s (${summary.pagesPerSecond} pages/s)`,
  );
  return summary;
}
