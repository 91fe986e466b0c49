import type { EngineContext } from './crawl.js';

/** Crawlee options both engines (static and browser) share: our queue, logging, limits and timeouts. */
export function sharedCrawlerOptions(ctx: EngineContext) {
  const timeoutSecs = Math.max(1, Math.ceil(ctx.config.request_timeout_ms / 1000));
  return {
    requestQueue: ctx.queue,
    log: ctx.crawleeLog,
    maxRequestsPerCrawl: ctx.maxPages,
    maxRequestRetries: 1,
    navigationTimeoutSecs: timeoutSecs,
    requestHandlerTimeoutSecs: timeoutSecs * 2 + 30,
    useSessionPool: false,
    persistCookiesPerSession: false,
  };
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
