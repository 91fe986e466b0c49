import type { NotaryConfig } from '../../core/index.js';
import { normaliseUrl, collectSitemapUrls } from '../../crawler/index.js';
import { RobotsRules, userAgentHeader, type AddressPolicy, type HostResolver } from '../../extract/index.js';

/** A site's sitemap URLs as read live, sorted, each once; `error` says what could not be read (the rest still counts). */
export interface SitemapListing {
  urls: readonly string[];
  error: string | null;
}

export interface SitemapReader {
  /** The page URLs the sitemaps of `origin` list (robots.txt Sitemap lines and /sitemap.xml). */
  read(origin: string): Promise<SitemapListing>;
}

/** Sites whose listing is kept at most (the oldest is dropped first). */
const CACHED_SITES = 256;

/**
 * Reads sitemaps for POST /v1/map under extraction's address policy (extract.allow_private_networks,
 * extract.allowed_private_ranges): every request, the redirects of each and the sitemaps robots.txt names are vetted,
 * so a sitemap on or redirecting to a refused address is skipped and reported. The whole reading of a site ends
 * within map.sitemap_timeout_ms and reads at most map.max_sitemap_urls URLs; a site's listing is kept
 * map.sitemap_cache_s, so the pages of one listing read the same sitemaps.
 */
export function sitemapReader(config: NotaryConfig, options: { resolver?: HostResolver; now?: () => number } = {}): SitemapReader {
  const policy: AddressPolicy = {
    allowPrivateNetworks: config.extract.allow_private_networks,
    allowedPrivateRanges: config.extract.allowed_private_ranges,
    ...(options.resolver ? { resolver: options.resolver } : {}),
  };
  const userAgent = userAgentHeader(config.crawler);
  const robots = new RobotsRules({ ttlS: Math.max(1, config.map.sitemap_cache_s), unreachableTtlS: Math.max(1, config.map.sitemap_cache_s) });
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; listing: Promise<SitemapListing> }>();

  const load = async (origin: string): Promise<SitemapListing> => {
    const limitMs = config.map.sitemap_timeout_ms;
    const signal = AbortSignal.timeout(limitMs);
    const problems: string[] = [];
    let listed: string[] = [];
    try {
      const rules = await robots.forOrigin(origin, { userAgent, policy, timeoutMs: limitMs, signal });
      listed = rules.sitemaps;
      if (rules.cause?.code === 'blocked_address') problems.push(`robots.txt: ${rules.detail ?? 'refused address'}`);
    } catch (err) {
      problems.push(`robots.txt could not be read: ${(err as Error).message}`);
    }
    const found = await collectSitemapUrls([...listed, `${origin}/sitemap.xml`], {
      userAgent,
      policy,
      timeoutMs: limitMs,
      signal,
      maxUrls: config.map.max_sitemap_urls,
      maxBytes: config.extract.max_bytes,
      onProblem: (message) => problems.push(message),
    }).catch((err: unknown) => {
      problems.push(`sitemaps could not be read: ${(err as Error).message}`);
      return [] as string[];
    });
    if (signal.aborted) problems.push(`the sitemaps were not read within ${limitMs} ms (map.sitemap_timeout_ms): the URLs read by then are listed`);
    const urls = [...new Set(found.map((url) => normaliseUrl(url)).filter((url): url is string => url !== null))].sort();
    return { urls, error: problems.length > 0 ? problems.join('; ') : null };
  };

  return {
    read(origin) {
      const ttlMs = config.map.sitemap_cache_s * 1000;
      const cached = cache.get(origin);
      if (cached && now() - cached.at < ttlMs) return cached.listing;
      const listing = load(origin);
      cache.delete(origin);
      if (ttlMs > 0) {
        cache.set(origin, { at: now(), listing });
        if (cache.size > CACHED_SITES) cache.delete(cache.keys().next().value as string);
      }
      return listing;
    },
  };
}
