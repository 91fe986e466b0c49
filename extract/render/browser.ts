import type { Browser, BrowserContext, Route } from 'playwright-core';
import { NotaryError, isNotaryError, CHROMIUM_ARGS } from '../../core/index.js';
import { parseHttpUrl, vetUrl, type AddressPolicy, type HostResolver } from '../fetch/address-policy.js';

export interface RenderOptions {
  userAgent: string;
  allowPrivateNetworks?: boolean;
  allowedPrivateRanges?: readonly string[];
  allowedPrivateHosts?: readonly string[];
  timeoutMs?: number;
  signal?: AbortSignal;
  resolver?: HostResolver;
}

export interface RenderedPage {
  html: string;
  finalUrl: string;
  status: number;
}


/** Resource types a text extraction never needs; not loading them saves most of a render's time. */
const SKIPPED_RESOURCES = new Set(['image', 'media', 'font', 'stylesheet']);

/**
 * Puts every request of a browser context (or page) through the address policy: http(s) only, each host vetted like
 * the static fetcher's; WebSockets are closed. A refused top-level navigation is reported to onBlockedNavigation.
 * Used by the renderer and by the crawler's browser engine.
 */
export async function guardRequests(
  target: Pick<BrowserContext, 'route' | 'routeWebSocket'>,
  policy: AddressPolicy,
  options: { skipResources?: ReadonlySet<string>; onBlockedNavigation?: (err: NotaryError) => void } = {},
): Promise<void> {
  await target.routeWebSocket(/.*/, (ws) => ws.close());
  await target.route('**/*', async (route: Route) => {
    const request = route.request();
    if (options.skipResources?.has(request.resourceType())) return route.abort('blockedbyclient');
    let url: URL;
    try {
      url = new URL(request.url());
    } catch {
      return route.abort('blockedbyclient');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return route.abort('blockedbyclient');
    try {
      await vetUrl(url, policy);
    } catch (err) {
      if (request.isNavigationRequest() && request.frame().parentFrame() === null && isNotaryError(err)) options.onBlockedNavigation?.(err);
      return route.abort('blockedbyclient');
    }
    return route.continue();
  });
}

/**
 * Renders pages in Debian's Chromium (playwright-core; never a downloaded browser). One browser is launched lazily
 * and shared; each page gets its own context. Every request the page makes goes through the same address policy as
 * the static fetcher (page.route), WebSockets and service workers are refused, and downloads are off.
 * Chromium resolves names itself, so between our check and its connection a hostile DNS server could still swap
 * the address; the static fetch path has no such window.
 */
export class BrowserRenderer {
  private browser: Promise<Browser> | null = null;

  constructor(private readonly executablePath = '/usr/bin/chromium') {}

  private launch(): Promise<Browser> {
    if (!this.browser) {
      // Imported on first use: processes that never render (the indexer) do not load Playwright.
      this.browser = import('playwright-core').then(({ chromium }) =>
        chromium.launch({ executablePath: this.executablePath, headless: true, args: [...CHROMIUM_ARGS] }),
      );
      this.browser.catch(() => {
        this.browser = null;
      });
    }
    return this.browser;
  }

  async render(rawUrl: string, options: RenderOptions): Promise<RenderedPage> {
    const url = parseHttpUrl(rawUrl);
    const timeoutMs = options.timeoutMs ?? 20_000;
    const policy: AddressPolicy = {
      allowPrivateNetworks: options.allowPrivateNetworks ?? false,
      allowedPrivateRanges: options.allowedPrivateRanges ?? [],
      allowedPrivateHosts: options.allowedPrivateHosts ?? [],
      ...(options.resolver ? { resolver: options.resolver } : {}),
    };
    // The top-level URL is checked here so a refusal is reported as blocked_address rather than a failed render.
    await vetUrl(url, policy);
    let browser: Browser;
    try {
      browser = await this.launch();
    } catch (err) {
      throw new NotaryError('render_failed', `Chromium could not be started: ${(err as Error).message}`);
    }
    const context = await browser.newContext({
      userAgent: options.userAgent,
      serviceWorkers: 'block',
      acceptDownloads: false,
      javaScriptEnabled: true,
    });
    const onAbort = (): void => void context.close().catch(() => undefined);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let blocked: NotaryError | null = null;
    try {
      await guardRequests(context, policy, {
        skipResources: SKIPPED_RESOURCES,
        onBlockedNavigation: (err) => {
          blocked = err;
        },
      });
      const page = await context.newPage();
      const deadline = Date.now() + timeoutMs;
      let status = 0;
      try {
        const response = await page.goto(url.href, { waitUntil: 'domcontentloaded', timeout: timeoutMs });
        status = response?.status() ?? 0;
      } catch (err) {
        if (blocked) throw blocked;
        const message = (err as Error).message;
        if (/Timeout/i.test(message)) throw new NotaryError('upstream_timeout', `rendering ${url.href} took longer than ${timeoutMs} ms`);
        throw new NotaryError('render_failed', `rendering ${url.href} failed: ${message.split('\n')[0] ?? message}`);
      }
      if (blocked) throw blocked;
      if (status === 404 || status === 410) {
        throw new NotaryError('upstream_not_found', `${url.href} answered HTTP ${status}: the page does not exist`, { upstream_status: status });
      }
      if (status >= 400) throw new NotaryError('upstream_error', `${url.href} answered HTTP ${status}`, { upstream_status: status });
      // Scripts fill the page after DOMContentLoaded: wait for the network to settle, within what is left of the budget.
      const left = Math.max(500, Math.min(5_000, deadline - Date.now()));
      await page.waitForLoadState('networkidle', { timeout: left }).catch(() => undefined);
      const html = await page.content();
      const finalUrl = page.url();
      if (blocked) throw blocked;
      return { html, finalUrl, status };
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      await context.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const pending = this.browser;
    this.browser = null;
    if (pending) await (await pending.catch(() => null))?.close();
  }
}
