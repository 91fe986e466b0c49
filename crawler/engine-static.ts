import { BasicCrawler, type BasicCrawlingContext } from '@crawlee/basic';
import { isNotaryError } from '../core/index.js';
import { decodeText, fetchResource, headerValue, type FetchResponse } from '../extract/index.js';
import type { CrawlSkipReason } from '../storage/index.js';
import type { EngineContext } from './crawl.js';
import { deliberateStopMarker } from './crawlee-log.js';
import { isHtmlContentType } from './page-response.js';
import { hostOf } from './url.js';
import { backOffIfAsked, runUntilAborted, sharedCrawlerOptions } from './engine-common.js';

/** A page not stored on purpose (non-HTML, too large, refused address, robots.txt of a redirect target). */
class DeliberateStop extends Error {
  constructor(
    readonly reason: CrawlSkipReason,
    readonly detail: string,
    readonly status: number,
  ) {
    super(`${deliberateStopMarker} ${reason}: ${detail}`);
  }
}

function depthOf(userData: Record<string, unknown>): number {
  return typeof userData['depth'] === 'number' ? userData['depth'] : 0;
}

/** Redirects a crawler follows (browsers follow about 20; 10 is crawlee's and most crawlers' default). */
const MAX_REDIRECTS = 10;

/**
 * Static HTML over plain HTTP through the one fetcher (the address policy on every hop, the byte cap, robots.txt for
 * redirect targets), with crawlee's BasicCrawler for the queue, concurrency and retries, and our politeness gate.
 */
export async function runStaticEngine(ctx: EngineContext): Promise<void> {
  const { config, session, gate } = ctx;
  const stops = new Map<string, DeliberateStop>();

  const fetchPage = async (request: BasicCrawlingContext['request']): Promise<FetchResponse> => {
    const stored = await session.prepare(request.uniqueKey);
    const headers: Record<string, string> = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5' };
    if (stored && stored.state !== 'gone') {
      if (stored.etag) headers['if-none-match'] = stored.etag;
      if (stored.last_modified) headers['if-modified-since'] = stored.last_modified;
    }
    const release = await gate.acquire(hostOf(request.url), ctx.signal);
    try {
      return await fetchResource(request.url, {
        userAgent: ctx.userAgent,
        policy: ctx.fetch.policy,
        agents: ctx.fetch.agents,
        headers,
        maxRedirects: MAX_REDIRECTS,
        totalTimeoutMs: config.request_timeout_ms,
        connectTimeoutMs: Math.min(config.request_timeout_ms, 10_000),
        maxBytes: config.max_page_bytes,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        beforeHop: async (url) => {
          // The first hop was checked when the URL was admitted; a redirect target is checked here.
          if (url.href === request.url) return;
          const robots = await ctx.robots.check(url.href);
          if (!robots.allowed) throw new DeliberateStop('robots_txt', `redirected to ${url.href}: ${robots.detail ?? 'disallowed'}`, 0);
        },
        onHeaders: ({ status, headers: answer }) => {
          if (status < 200 || status >= 300) return;
          const contentType = headerValue(answer['content-type']);
          if (!isHtmlContentType(contentType)) throw new DeliberateStop('non_html', contentType ?? 'no content type', status);
          const length = Number(headerValue(answer['content-length']) ?? NaN);
          if (length > config.max_page_bytes) {
            throw new DeliberateStop('too_large', `${length} bytes > max_page_bytes ${config.max_page_bytes}`, status);
          }
        },
      });
    } catch (err) {
      if (err instanceof DeliberateStop) throw err;
      if (isNotaryError(err)) {
        if (err.code === 'blocked_address') throw new DeliberateStop('blocked_address', err.message, 0);
        if (err.code === 'body_too_large') throw new DeliberateStop('too_large', `more than max_page_bytes ${config.max_page_bytes}`, 200);
        if (err.code === 'upstream_timeout') throw new Error(`timed out: ${err.message}`);
        if (err.code === 'invalid_url' || err.code === 'too_many_redirects') throw new DeliberateStop('fetch_error', err.message, 0);
      }
      throw err;
    } finally {
      release();
    }
  };

  const crawler = new BasicCrawler(
    {
      ...sharedCrawlerOptions(ctx),
      // Fixed concurrency: politeness is the HostGate's job, and crawlee's CPU-based throttling pins a busy machine at
      // minConcurrency (measured: 4 requests in flight and ~90 pages/s instead of 32 and 125-160 on postgresql-doc-15).
      minConcurrency: config.max_concurrency,
      maxConcurrency: config.max_concurrency,
      statusMessageLoggingInterval: 3600,
      autoscaledPoolOptions: {
        desiredConcurrency: config.max_concurrency,
        // Check for new work every 10 ms instead of 500 ms so a briefly empty queue does not stall the crawl.
        maybeRunIntervalSecs: 0.01,
        loggingIntervalSecs: null,
        systemStatusOptions: { maxEventLoopOverloadedRatio: 0.9, maxCpuOverloadedRatio: 0.95, maxClientOverloadedRatio: 0.9 },
        snapshotterOptions: { maxBlockedMillis: 200 },
      },
      requestHandler: async ({ request }) => {
        let response: FetchResponse;
        try {
          response = await fetchPage(request);
        } catch (err) {
          if (err instanceof DeliberateStop) {
            stops.set(request.uniqueKey, err);
            request.noRetry = true;
          }
          throw err;
        }
        const retry = backOffIfAsked(ctx, request, {
          status: response.status,
          retryAfter: headerValue(response.headers['retry-after']),
          url: response.finalUrl,
        });
        if (retry) throw retry;
        const contentType = headerValue(response.headers['content-type']);
        const html = response.status >= 200 && response.status < 300 ? decodeText(response.body, contentType, true).text : '';
        await session.handleResponse({
          url: request.uniqueKey,
          finalUrl: response.finalUrl,
          status: response.status,
          depth: depthOf(request.userData),
          contentType,
          etag: headerValue(response.headers['etag']),
          lastModified: headerValue(response.headers['last-modified']),
          contentLanguage: headerValue(response.headers['content-language']),
          html,
        });
      },
      failedRequestHandler: async ({ request }, error) => {
        const stop = stops.get(request.uniqueKey);
        stops.delete(request.uniqueKey);
        // Requests still waiting for their host slot when the crawl was aborted are not failures: queued again.
        if (ctx.signal?.aborted && error.name === 'AbortError') return session.requestAbandoned(request.uniqueKey);
        if (stop) await session.requestFailed(request.uniqueKey, stop.reason, stop.detail, stop.status);
        else await session.requestFailed(request.uniqueKey, 'fetch_error', error.message);
      },
    },
    ctx.crawleeConfig,
  );

  await runUntilAborted(crawler, ctx);
}
