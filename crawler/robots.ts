import { RobotsTxtFile } from '@crawlee/utils';
import { createRequire } from 'node:module';
import { fetchText } from './fetch-text.js';

interface ParsedRobots {
  getCrawlDelay(ua?: string): number | undefined;
}
// RobotsTxtFile keeps its robots-parser instance private; Crawl-delay is read with robots-parser directly.
// robots-parser is CommonJS with `export default` typings that do not match its module.exports under NodeNext.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => ParsedRobots;

export interface RobotsVerdict {
  allowed: boolean;
  /** Why a URL is disallowed (the skip detail). */
  detail: string | null;
}

interface OriginRules {
  /** null when robots.txt could not be read and the whole origin is treated as disallowed (RFC 9309 §2.3.1.4). */
  file: RobotsTxtFile | null;
  unreachableReason: string | null;
  sitemaps: string[];
}

/**
 * robots.txt per origin, fetched once per crawl with our User-Agent and parsed by crawlee's RobotsTxtFile.
 * A 4xx (or a missing file) allows everything; a 5xx or a network failure disallows the origin, as RFC 9309 asks.
 */
export class RobotsCache {
  private readonly origins = new Map<string, Promise<OriginRules>>();

  constructor(
    private readonly options: {
      userAgent: string;
      timeoutMs: number;
      enabled: boolean;
      signal?: AbortSignal;
      /** Called once per origin whose robots.txt gives a Crawl-delay (seconds) for our User-Agent or `*`. */
      onCrawlDelay?: (origin: string, seconds: number) => void;
    },
  ) {}

  private load(origin: string): Promise<OriginRules> {
    let pending = this.origins.get(origin);
    if (!pending) {
      pending = this.fetchRules(origin);
      this.origins.set(origin, pending);
    }
    return pending;
  }

  private async fetchRules(origin: string): Promise<OriginRules> {
    const robotsUrl = `${origin}/robots.txt`;
    try {
      const res = await fetchText(robotsUrl, {
        userAgent: this.options.userAgent,
        timeoutMs: this.options.timeoutMs,
        maxBytes: 500 * 1024,
        signal: this.options.signal,
      });
      if (res.status >= 500) {
        return { file: null, unreachableReason: `robots.txt answered ${res.status}`, sitemaps: [] };
      }
      const content = res.status >= 200 && res.status < 300 ? res.body : '';
      const file = RobotsTxtFile.from(robotsUrl, content);
      if (this.options.enabled && this.options.onCrawlDelay && /crawl-delay/i.test(content)) {
        const seconds = robotsParser(robotsUrl, content).getCrawlDelay(this.options.userAgent);
        if (seconds !== undefined && seconds > 0) this.options.onCrawlDelay(origin, seconds);
      }
      return { file, unreachableReason: null, sitemaps: file.getSitemaps({ enqueueStrategy: 'all' }) };
    } catch (err) {
      return { file: null, unreachableReason: `robots.txt unreachable: ${(err as Error).message}`, sitemaps: [] };
    }
  }

  async check(url: string): Promise<RobotsVerdict> {
    if (!this.options.enabled) return { allowed: true, detail: null };
    const rules = await this.load(new URL(url).origin);
    if (!rules.file) return { allowed: false, detail: rules.unreachableReason };
    if (rules.file.isAllowed(url, this.options.userAgent)) return { allowed: true, detail: null };
    return { allowed: false, detail: 'disallowed by robots.txt' };
  }

  /** Sitemap URLs named by the origin's robots.txt (fetched even when robots rules are not honoured). */
  async sitemaps(origin: string): Promise<string[]> {
    return (await this.load(origin)).sitemaps;
  }
}
