import { CHROMIUM_ARGS } from '../core/index.js';
import { guardRequests } from '../extract/index.js';
import type { EngineContext } from './crawl.js';
import { hostOf } from './url.js';
import { backOffIfAsked, gateReleases, requestTimeoutSecs, runUntilAborted, sharedCrawlerOptions } from './engine-common.js';

/**
 * Rendered pages: crawlee's PlaywrightCrawler driving the system Chromium (config.chromium_path) through playwright-core.
 * Loaded only when renderer is "browser". No conditional requests here: a browser navigation is not a good place for
 * If-None-Match, so unchanged pages are recognised by their content hash instead.
 */
export async function runBrowserEngine(ctx: EngineContext): Promise<void> {
  const [{ PlaywrightCrawler }, { chromium }] = await Promise.all([import('@crawlee/playwright'), import('playwright-core')]);
  const { config, session, gate } = ctx;
  const { releases, finish } = gateReleases();
  const blocked = new Map<string, string>();

  const crawler = new PlaywrightCrawler(
    {
      ...sharedCrawlerOptions(ctx),
      navigationTimeoutSecs: requestTimeoutSecs(ctx),
      persistCookiesPerSession: false,
      maxConcurrency: config.max_concurrency,
      statusMessageLoggingInterval: 3600,
      headless: true,
      launchContext: {
        launcher: chromium,
        useChrome: false,
        userAgent: ctx.userAgent,
        launchOptions: { executablePath: config.chromium_path, headless: true, args: [...CHROMIUM_ARGS] },
      },
      browserPoolOptions: { useFingerprints: false },
      autoscaledPoolOptions: { loggingIntervalSecs: null },
      preNavigationHooks: [
        async ({ request, page }, gotoOptions) => {
          // Every request the page makes passes the same address policy as the static fetcher.
          await guardRequests(page, ctx.fetch.policy, { onBlockedNavigation: (err) => blocked.set(request.uniqueKey, err.message) });
          await page.setExtraHTTPHeaders({ 'user-agent': ctx.userAgent });
          if (gotoOptions) gotoOptions.waitUntil = 'load';
          releases.set(request.uniqueKey, await gate.acquire(hostOf(request.url), ctx.signal));
        },
      ],
      requestHandler: async ({ request, page, response }) => {
        const headers = response ? await response.allHeaders() : {};
        const status = response?.status() ?? 0;
        const retry = backOffIfAsked(ctx, request, { status, retryAfter: headers['retry-after'] ?? null, url: page.url() });
        // errorHandler releases the gate slot of a request thrown back to the queue.
        if (retry) throw retry;
        finish(request.uniqueKey);
        const html = await page.content();
        await session.handleResponse(
          {
            url: request.uniqueKey,
            finalUrl: page.url(),
            status,
            depth: typeof request.userData['depth'] === 'number' ? request.userData['depth'] : 0,
            contentType: headers['content-type'] ?? null,
            etag: headers['etag'] ?? null,
            lastModified: headers['last-modified'] ?? null,
            contentLanguage: headers['content-language'] ?? null,
            html,
          },
        );
      },
      errorHandler: ({ request }) => finish(request.uniqueKey),
      failedRequestHandler: async ({ request }, error) => {
        finish(request.uniqueKey);
        if (ctx.signal?.aborted && error.name === 'AbortError') return session.requestAbandoned(request.uniqueKey);
        const refusal = blocked.get(request.uniqueKey);
        blocked.delete(request.uniqueKey);
        if (refusal) await session.requestFailed(request.uniqueKey, 'blocked_address', refusal);
        else await session.requestFailed(request.uniqueKey, 'fetch_error', error.message);
      },
    },
    ctx.crawleeConfig,
  );

  await runUntilAborted(crawler, ctx);
}
