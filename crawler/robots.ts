import { RobotsRules, type AddressPolicy, type AgentPool, type OriginRobots } from '../extract/index.js';

export interface RobotsVerdict {
  allowed: boolean;
  /** Why a URL is disallowed (the skip detail). */
  detail: string | null;
}

/**
 * One crawl's view of robots.txt: the shared RobotsRules (fetched through the one fetcher and address policy,
 * RFC 9309's status rules) plus what a crawl needs around them: an off switch for the rules, and the Crawl-delay of
 * each origin reported once, when its robots.txt is first read.
 */
export class RobotsCache {
  private readonly rules = new RobotsRules({ ttlS: 86_400, unreachableTtlS: 86_400 });
  private readonly reported = new Set<string>();

  constructor(
    private readonly options: {
      userAgent: string;
      policy: AddressPolicy;
      agents?: AgentPool;
      timeoutMs: number;
      enabled: boolean;
      signal?: AbortSignal;
      /** Called once per origin whose robots.txt gives a Crawl-delay (seconds) for our User-Agent or `*`. */
      onCrawlDelay?: (origin: string, seconds: number) => void;
    },
  ) {}

  private async load(url: string): Promise<OriginRobots> {
    let rules: OriginRobots;
    try {
      rules = await this.rules.forOrigin(url, {
        userAgent: this.options.userAgent,
        policy: this.options.policy,
        timeoutMs: this.options.timeoutMs,
        ...(this.options.agents ? { agents: this.options.agents } : {}),
        ...(this.options.signal ? { signal: this.options.signal } : {}),
      });
    } catch (err) {
      // A crawl stopped while robots.txt was loading: fetch nothing more from that origin.
      if (!this.options.signal?.aborted) throw err;
      return { origin: new URL(url).origin, state: 'unreachable', detail: 'the crawl was stopped', cause: null, crawlDelayS: null, sitemaps: [], isAllowed: () => false };
    }
    if (!this.reported.has(rules.origin)) {
      this.reported.add(rules.origin);
      if (this.options.enabled && rules.crawlDelayS !== null) this.options.onCrawlDelay?.(rules.origin, rules.crawlDelayS);
    }
    return rules;
  }

  async check(url: string): Promise<RobotsVerdict> {
    if (!this.options.enabled) return { allowed: true, detail: null };
    const rules = await this.load(url);
    // A refused address is not a robots.txt matter: the page fetch is refused the same way and recorded as such.
    if (rules.cause?.code === 'blocked_address') return { allowed: true, detail: null };
    if (rules.state === 'unreachable') return { allowed: false, detail: `robots.txt unreachable (${rules.detail ?? 'unknown'}); RFC 9309 disallows the site` };
    if (rules.isAllowed(url)) return { allowed: true, detail: null };
    return { allowed: false, detail: 'disallowed by robots.txt' };
  }

  /** Sitemap URLs named by the origin's robots.txt (read even when robots rules are not honoured). */
  async sitemaps(origin: string): Promise<string[]> {
    return (await this.load(origin)).sitemaps;
  }
}
