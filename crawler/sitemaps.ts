import { parseSitemap } from '@crawlee/utils';
import { fetchText } from './fetch-text.js';

const maxSitemapFiles = 50;
const maxSitemapBytes = 50 * 1024 * 1024;

/**
 * Page URLs listed by the given sitemaps, following sitemap indexes (up to 50 files). Every file is fetched by us with
 * our User-Agent; crawlee's parser only reads the text. Missing or broken sitemaps are reported and skipped.
 */
export async function collectSitemapUrls(
  sitemapUrls: string[],
  options: { userAgent: string; timeoutMs: number; signal?: AbortSignal; onProblem?: (msg: string) => void },
): Promise<string[]> {
  const pending = [...new Set(sitemapUrls)];
  const visited = new Set<string>();
  const pages: string[] = [];
  while (pending.length > 0 && visited.size < maxSitemapFiles) {
    const sitemapUrl = pending.shift();
    if (sitemapUrl === undefined || visited.has(sitemapUrl)) continue;
    visited.add(sitemapUrl);
    let content: string;
    try {
      const res = await fetchText(sitemapUrl, { ...options, maxBytes: maxSitemapBytes });
      if (res.status !== 200) {
        // /sitemap.xml is probed on every seed host; its absence is normal.
        if (res.status !== 404) options.onProblem?.(`sitemap ${sitemapUrl} answered ${res.status}`);
        continue;
      }
      content = res.body;
    } catch (err) {
      options.onProblem?.(`sitemap ${sitemapUrl} could not be fetched: ${(err as Error).message}`);
      continue;
    }
    if (!content.trimStart().startsWith('<')) {
      // Plain-text sitemap: one URL a line.
      pages.push(...content.split(/\r?\n/).map((line) => line.trim()).filter((line) => /^https?:\/\//i.test(line)));
      continue;
    }
    // maxDepth 0: nested sitemaps are only reported to us, never fetched by crawlee itself.
    for await (const item of parseSitemap([{ type: 'raw', content }], undefined, { emitNestedSitemaps: true, maxDepth: 0 })) {
      if (item.originSitemapUrl === null) {
        const nested = new URL(item.loc, sitemapUrl).href;
        if (!visited.has(nested)) pending.push(nested);
      } else {
        pages.push(new URL(item.loc, sitemapUrl).href);
      }
    }
  }
  return pages;
}
