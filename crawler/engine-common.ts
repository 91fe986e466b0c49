import { RetryRequestError, type Request, type RequestQueue } from '@crawlee/core';
import type { EngineContext } from './crawl.js';
import { deliberateStopMarker } from './crawlee-log.js';
import { asksToBackOff, retryAfterMs } from './politeness.js';
import { hostOf } from './url.js';

const maxRequestRetries = 1;
/** userData flag of a request that was already retried once after a 429 / 503 with Retry-After. */
const backedOffKey = 'notaryBackedOff';

/** Crawlee options both engines (static and browser) share: our queue, logging, limits and timeouts. */
export function sharedCrawlerOptions(ctx: EngineContext) {
  return {
    // Our frontier in the database is crawlee's request manager (IRequestManager); it also enforces max_pages.
    // Passed as requestQueue: crawlee 3.18's HttpCrawler option check does not know the requestManager key yet.
    requestQueue: ctx.queue as unknown as RequestQueue,
    log: ctx.crawleeLog,
    maxRequestRetries,
    requestHandlerTimeoutSecs: requestHandlerTimeoutSecs(ctx.config),
    useSessionPool: false,
  };
}

/**
 * Crawlee's request handler timeout. Requests wait for their HostGate slot inside it, so it leaves room for every
 * crawler slot queueing on one host at the longest spacing, plus the longest Retry-After pause.
 */
export function requestHandlerTimeoutSecs(config: EngineContext['config']): number {
  const longestDelayMs = Math.max(config.per_host_delay_ms, config.crawl_delay_max_ms);
  const gateWaitSecs = Math.ceil((config.max_concurrency * longestDelayMs + config.retry_after_max_ms) / 1000);
  return Math.max(1, Math.ceil(config.request_timeout_ms / 1000)) * 2 + 30 + gateWaitSecs;
}

/**
 * The longest crawlee can hold a request before it reports its outcome: the handler's timeout, then its error handling
 * and the handled mark, each under crawlee's internal timeout (twice the handler's, at least 300 s), and a minute to
 * spare. A request in flight longer is lost to crawlee; the frontier queue queues it again (FrontierQueue).
 */
export function maxInFlightMs(config: EngineContext['config']): number {
  const handlerMs = requestHandlerTimeoutSecs(config) * 1000;
  const internalMs = Math.max(handlerMs * 2, 300_000);
  return handlerMs + 2 * internalMs + 60_000;
}

export function requestTimeoutSecs(ctx: EngineContext): number {
  return Math.max(1, Math.ceil(ctx.config.request_timeout_ms / 1000));
}

/** Per-request release functions of the HostGate slot a request holds, keyed by crawlee's uniqueKey. */
export function gateReleases(): { releases: Map<string, () => void>; finish: (uniqueKey: string) => void } {
  const releases = new Map<string, () => void>();
  return {
    releases,
    finish: (uniqueKey: string) => {
      releases.get(uniqueKey)?.();
      releases.delete(uniqueKey);
    },
  };
}

/** Runs a crawler until its queue is empty or the crawl's signal aborts it, then tears it down. */
export async function runUntilAborted(
  crawler: { run(): Promise<unknown>; stop(message?: string): void; teardown(): Promise<void> },
  ctx: EngineContext,
): Promise<void> {
  const onAbort = () => {
    ctx.log('info', 'crawl aborted: finishing requests in flight');
    crawler.stop('aborted');
  };
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await crawler.run();
  } finally {
    ctx.signal?.removeEventListener('abort', onAbort);
    await crawler.teardown().catch(() => {});
  }
}

/**
 * An answer asking us to slow down (429, or 503 with Retry-After) pauses the host in the HostGate. The first time for a
 * request this returns an error to throw, which makes crawlee queue the request again: the retry waits in the gate
 * until the pause is over, and does not use up the retry kept for network errors. A second such answer returns null
 * and is recorded like any other HTTP error.
 */
export function backOffIfAsked(
  ctx: EngineContext,
  request: Request,
  answer: { status: number; retryAfter: string | null; url: string },
): RetryRequestError | null {
  if (!asksToBackOff(answer.status, answer.retryAfter)) return null;
  const { config } = ctx;
  const waitMs = retryAfterMs(answer.retryAfter, { defaultMs: config.retry_after_default_ms, maxMs: config.retry_after_max_ms });
  // The retry waits on the gate of the requested host; a redirect target that answered is paused as well.
  const hosts = new Set([hostOf(request.url), hostOf(answer.url)]);
  for (const host of hosts) ctx.gate.pause(host, waitMs);
  const hostList = [...hosts].join(', ');
  if (request.userData[backedOffKey] === true) {
    ctx.log('info', `HTTP ${answer.status} again for ${request.url}: pausing ${hostList} for ${waitMs} ms, not retrying`);
    return null;
  }
  request.userData[backedOffKey] = true;
  request.maxRetries = (request.maxRetries ?? maxRequestRetries) + 1;
  ctx.log('info', `HTTP ${answer.status} for ${request.url}: pausing ${hostList} for ${waitMs} ms, then retrying once`);
  return new RetryRequestError(`${deliberateStopMarker} HTTP ${answer.status}: retry after ${waitMs} ms`);
}
