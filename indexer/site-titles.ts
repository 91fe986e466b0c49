import { learnSiteTitleAffixes, type SiteTitleAffixes } from '../extract/index.js';
import type { PageStore } from '../storage/index.js';

/**
 * The title prefixes and suffixes of each host, learnt from its stored pages the way the indexer learns them, kept
 * for `ttlMs`: /v1/extract titles an indexed site's page as search results do.
 */
export function storedSiteTitles(pages: PageStore, ttlMs = 10 * 60_000): (host: string) => Promise<SiteTitleAffixes | null> {
  const cache = new Map<string, { at: number; affixes: SiteTitleAffixes }>();
  return async (host) => {
    const now = Date.now();
    const hit = cache.get(host);
    if (hit && now - hit.at < ttlMs) return hit.affixes;
    const affixes = learnSiteTitleAffixes(await pages.titlesOfHost(host));
    if (cache.size > 1000) cache.clear();
    cache.set(host, { at: now, affixes });
    return affixes;
  };
}
