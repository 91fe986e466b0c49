import { CheerioCrawler, type CheerioCrawlingContext } from '@crawlee/cheerio';
import type { IncomingHttpHeaders } from 'node:http';
import type { CrawlSkipReason } from '../storage/crawl-runs.js';
import type { EngineContext } from './crawl.js';
import { deliberateStopMarker } from './crawlee-log.js';
import { isHtmlContentType } from './session.js';
import { hostOf } from './url.js';
import { backOffIfAsked, gateReleases, runUntilAborted, sharedCrawlerOptions } from './engine-common.js';

interface DeliberateStop {
  reason: CrawlSkipReason;
  detail: string;
  status: number;
}

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

function depthOf(userData: Record<string, unknown>): number {
  return typeof userData['depth'] === 'number' ? userData['depth'] : 0;
}

/** Static HTML over plain HTTP: crawlee's CheerioCrawler with our politeness gate, validators and size limits. */
export async function runStaticEngine(ctx: EngineContext): Promise<void> {
  const { config, session, gate } = ctx;
  const { releases, finish } = gateReleases();
  const stops = new Map<string, DeliberateStop>();

  const crawler = new CheerioCrawler(
    {
      ...sharedCrawlerOptions(ctx),
      // Fixed concurrency: politeness is the HostGate's job, and crawlee's CPU-based throttling pins a busy machine at
      // minConcurrency (measured: 4 requests in flight and ~90 pages/s instead of 32 and 125-160 on postgresql-doc-15).
      minConcurrency: config.max_concurrency,
      maxConcurrency: config.max_concurrency,
      // Every type reaches our hooks, which decide what is HTML; crawlee would otherwise throw on the rest.
      additionalMimeTypes: ['*/*'],
      // 5xx answers are recorded as http_error like any other status instead of being retried as exceptions.
      ignoreHttpErrorStatusCodes: Array.from({ length: 100 }, (_, i) => 500 + i),
      statusMessageLoggingInterval: 3600,
      autoscaledPoolOptions: {
        desiredConcurrency: config.max_concurrency,
        // Check for new work every 10 ms instead of 500 ms so a briefly empty queue does not stall the crawl.
        maybeRunIntervalSecs: 0.01,
        loggingIntervalSecs: null,
        systemStatusOptions: { maxEventLoopOverloadedRatio: 0.9, maxCpuOverloadedRatio: 0.95, maxClientOverloadedRatio: 0.9 },
        snapshotterOptions: { maxBlockedMillis: 200 },
      },
      preNavigationHooks: [
        async ({ request }, gotOptions) => {
          const stored = await session.prepare(request.uniqueKey);
          const headers: Record<string, string> = { 'user-agent': ctx.userAgent, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5' };
          if (stored && stored.state !== 'gone') {
            if (stored.etag) headers['if-none-match'] = stored.etag;
            if (stored.last_modified) headers['if-modified-since'] = stored.last_modified;
          }
          gotOptions.headers = { ...gotOptions.headers, ...headers };
          Object.assign(gotOptions, { useHeaderGenerator: false });
          releases.set(request.uniqueKey, await gate.acquire(hostOf(request.url), ctx.signal));
        },
      ],
      postNavigationHooks: [
        ({ request, response }) => {
          if (!response) return;
          const status = response.statusCode ?? 0;
          const retryAfter = header(response.headers, 'retry-after');
          const retry = backOffIfAsked(ctx, request, { status, retryAfter, url: response.url ?? request.url });
          if (retry) {
            response.destroy();
            throw retry;
          }
          if (status < 200 || status >= 300) return;
          const stop = (reason: CrawlSkipReason, detail: string) => {
            stops.set(request.uniqueKey, { reason, detail, status });
            request.noRetry = true;
            response.destroy();
            throw new Error(`${deliberateStopMarker} ${reason}: ${detail}`);
          };
          const contentType = header(response.headers, 'content-type');
          if (!isHtmlContentType(contentType)) stop('non_html', contentType ?? 'no content type');
          const length = Number(header(response.headers, 'content-length') ?? NaN);
          if (length > config.max_page_bytes) stop('too_large', `${length} bytes > max_page_bytes ${config.max_page_bytes}`);
          // Without Content-Length, stop the download as soon as it passes the limit.
          response.on('downloadProgress', (progress: { transferred: number }) => {
            if (progress.transferred > config.max_page_bytes && !stops.has(request.uniqueKey)) {
              stops.set(request.uniqueKey, {
                reason: 'too_large',
                detail: `more than max_page_bytes ${config.max_page_bytes}`,
                status,
              });
              request.noRetry = true;
              response.destroy(new Error(`${deliberateStopMarker} too_large`));
            }
          });
        },
      ],
      requestHandler: async (context: CheerioCrawlingContext) => {
        const { request, response } = context;
        finish(request.uniqueKey);
        const status = response.statusCode ?? 0;
        const html = typeof context.body === 'string' ? context.body : context.body.toString('utf8');
        await session.handleResponse(
          {
            url: request.uniqueKey,
            finalUrl: request.loadedUrl ?? request.url,
            status,
            depth: depthOf(request.userData),
            contentType: header(response.headers, 'content-type'),
            etag: header(response.headers, 'etag'),
            lastModified: header(response.headers, 'last-modified'),
            contentLanguage: header(response.headers, 'content-language'),
            html: status === 304 ? '' : html,
            $: status >= 200 && status < 300 && typeof context.body === 'string' ? context.$ : undefined,
          },
        );
      },
      errorHandler: ({ request }) => {
        finish(request.uniqueKey);
      },
      failedRequestHandler: async ({ request }, error) => {
        finish(request.uniqueKey);
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
