import { createRequire } from 'node:module';
import { NotaryError, isNotaryError } from '../../core/index.js';
import type { AddressPolicy } from './address-policy.js';
import { FetchCache } from './cache.js';
import { fetchResource, type AgentPool } from './fetcher.js';

interface ParsedRobotsTxt {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
}
// robots-parser is CommonJS with `export default` typings that do not match its module.exports under NodeNext.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => ParsedRobotsTxt;

/** RFC 9309 §2.5: crawlers must parse at least the first 500 KiB; the rest is ignored, not an error. */
export const ROBOTS_MAX_BYTES = 500 * 1024;
/** RFC 9309 §2.3.1.2: follow at least five consecutive redirects. */
const ROBOTS_MAX_REDIRECTS = 5;

/**
 * The rules of one origin, as RFC 9309 reads them:
 * - `parsed`: robots.txt answered 2xx and its groups apply;
 * - `unavailable`: it answered 4xx (not 429), or redirected too often: everything is allowed (§2.3.1.3);
 * - `unreachable`: it answered 429 or 5xx, or the site could not be reached: everything is disallowed (§2.3.1.4).
 */
export interface OriginRobots {
  origin: string;
  state: 'parsed' | 'unavailable' | 'unreachable';
  /** Why robots.txt is unavailable or unreachable ("answered HTTP 503", a network error), else null. */
  detail: string | null;
  /** The failure behind an unreachable robots.txt (blocked_address, upstream_unreachable, upstream_timeout), if any. */
  cause: NotaryError | null;
  /** Crawl-delay for our User-Agent (or `*`), in seconds. */
  crawlDelayS: number | null;
  /** Sitemap: lines, absolute URLs. */
  sitemaps: string[];
  isAllowed(url: string): boolean;
}

export type RobotsVerdict =
  | { allowed: true; rules: OriginRobots }
  | { allowed: false; reason: 'disallowed' | 'unreachable'; detail: string; rules: OriginRobots };

export interface RobotsFetchOptions {
  userAgent: string;
  policy: AddressPolicy;
  /** For the robots.txt request itself (default 10 s); callers wait at most until their own signal aborts. */
  timeoutMs?: number;
  connectTimeoutMs?: number;
  agents?: AgentPool;
  /** The caller's signal: stops waiting, never cancels a load other callers share. */
  signal?: AbortSignal;
}

/**
 * robots.txt per origin: fetched through the one fetcher (same address policy, so robots.txt cannot reach a private
 * address either), parsed with robots-parser, and kept `ttlS` (an unreachable answer only `unreachableTtlS`, so a
 * site that was briefly down is asked again soon). The one robots.txt implementation of `/v1/extract` and the crawler.
 */
export class RobotsRules {
  private readonly origins: FetchCache<Promise<OriginRobots>>;
  private readonly ttlS: number;
  private readonly unreachableTtlS: number;

  constructor(options: { ttlS?: number; unreachableTtlS?: number; maxOrigins?: number } = {}) {
    // RFC 9309 §2.4: a cached robots.txt should not be used for more than 24 hours.
    this.ttlS = Math.min(options.ttlS ?? 3600, 86_400);
    this.unreachableTtlS = options.unreachableTtlS ?? 300;
    this.origins = new FetchCache(options.maxOrigins ?? 1024);
  }

  /** The rules of `url`'s origin, loaded once and shared by concurrent callers. */
  async forOrigin(url: URL | string, options: RobotsFetchOptions): Promise<OriginRobots> {
    const origin = new URL(url).origin;
    let pending = this.origins.get(origin, this.ttlS);
    if (!pending) {
      const loading = load(origin, options);
      this.origins.set(origin, loading);
      loading.then(
        (rules) => {
          if (rules.state === 'unreachable' && this.unreachableTtlS < this.ttlS) this.expireAfter(origin, loading, this.unreachableTtlS);
        },
        () => this.origins.delete(origin),
      );
      pending = loading;
    }
    return waitFor(pending, options.signal);
  }

  async verdict(url: URL | string, options: RobotsFetchOptions): Promise<RobotsVerdict> {
    const href = typeof url === 'string' ? url : url.href;
    const rules = await this.forOrigin(href, options);
    if (rules.state === 'unreachable') {
      return { allowed: false, reason: 'unreachable', detail: `robots.txt unreachable (${rules.detail ?? 'unknown'})`, rules };
    }
    if (rules.isAllowed(href)) return { allowed: true, rules };
    return { allowed: false, reason: 'disallowed', detail: 'disallowed by robots.txt', rules };
  }

  private expireAfter(origin: string, entry: Promise<OriginRobots>, seconds: number): void {
    setTimeout(() => {
      if (this.origins.get(origin, Number.POSITIVE_INFINITY) === entry) this.origins.delete(origin);
    }, seconds * 1000).unref();
  }
}

async function load(origin: string, options: RobotsFetchOptions): Promise<OriginRobots> {
  const robotsUrl = `${origin}/robots.txt`;
  const base = { origin, cause: null, crawlDelayS: null, sitemaps: [] as string[] };
  const unreachable = (detail: string, cause: NotaryError | null): OriginRobots => ({
    ...base,
    state: 'unreachable',
    detail,
    cause,
    isAllowed: () => false,
  });
  let res;
  try {
    res = await fetchResource(robotsUrl, {
      userAgent: options.userAgent,
      policy: options.policy,
      headers: { accept: 'text/plain,*/*;q=0.5' },
      maxRedirects: ROBOTS_MAX_REDIRECTS,
      totalTimeoutMs: options.timeoutMs ?? 10_000,
      ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
      maxBytes: ROBOTS_MAX_BYTES,
      overflow: 'truncate',
      ...(options.agents ? { agents: options.agents } : {}),
    });
  } catch (err) {
    if (isNotaryError(err) && err.code === 'too_many_redirects') {
      return { ...base, state: 'unavailable', detail: 'robots.txt redirects more than 5 times', isAllowed: () => true };
    }
    if (isNotaryError(err)) return unreachable(err.message, err);
    return unreachable((err as Error).message, null);
  }
  if (res.status === 429 || res.status >= 500) return unreachable(`robots.txt answered HTTP ${res.status}`, null);
  if (res.status < 200 || res.status >= 300) {
    return { ...base, state: 'unavailable', detail: `robots.txt answered HTTP ${res.status}`, isAllowed: () => true };
  }
  const parsed = robotsParser(robotsUrl, res.body.toString('utf8'));
  const delay = parsed.getCrawlDelay(options.userAgent);
  return {
    ...base,
    state: 'parsed',
    detail: null,
    crawlDelayS: delay !== undefined && delay > 0 ? delay : null,
    sitemaps: parsed.getSitemaps(),
    isAllowed: (url) => parsed.isAllowed(url, options.userAgent) !== false,
  };
}

/** Waits for a shared promise until the caller's own signal aborts. */
function waitFor<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new NotaryError('upstream_timeout', 'robots.txt did not answer within the time limit', { phase: 'total' });
  }
  return reason instanceof Error ? reason : new Error('aborted');
}
