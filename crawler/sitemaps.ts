import { gunzipSync } from 'node:zlib';
import { parseSitemap } from '@crawlee/utils';
import { fetchResource, type AddressPolicy, type AgentPool } from '../extract/index.js';

const maxSitemapFiles = 50;
const maxSitemapBytes = 50 * 1024 * 1024;

export interface SitemapFetchOptions {
  userAgent: string;
  policy: AddressPolicy;
  agents?: AgentPool;
  timeoutMs: number;
  signal?: AbortSignal;
  onProblem?: (msg: string) => void;
  /** Page URLs read at most (default: all of the files read); the rest is not read and onProblem says so. */
  maxUrls?: number;
  /** Bytes of one sitemap file at most (default 50 MiB). */
  maxBytes?: number;
}

/** One sitemap file through the one fetcher (address policy, User-Agent, byte cap); .gz files are unpacked. */
async function fetchSitemap(url: string, options: SitemapFetchOptions): Promise<{ status: number; body: string }> {
  const res = await fetchResource(url, {
    userAgent: options.userAgent,
    policy: options.policy,
    headers: { accept: 'application/xml,text/xml,text/plain;q=0.9,*/*;q=0.5' },
    maxRedirects: 10,
    totalTimeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes ?? maxSitemapBytes,
    ...(options.agents ? { agents: options.agents } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (res.status !== 200) return { status: res.status, body: '' };
  let bytes = res.body;
  // Content-Encoding: gzip is undone by the fetcher; a .gz file served as application/gzip still needs unpacking.
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes, { maxOutputLength: maxSitemapBytes });
  return { status: res.status, body: bytes.toString('utf8') };
}

/**
 * Page URLs listed by the given sitemaps, following sitemap indexes (up to 50 files). Every file is fetched by us with
 * our User-Agent; crawlee's parser only reads the text. Missing or broken sitemaps are reported and skipped.
 */
export async function collectSitemapUrls(sitemapUrls: string[], options: SitemapFetchOptions): Promise<string[]> {
  const pending = [...new Set(sitemapUrls)];
  const visited = new Set<string>();
  const pages: string[] = [];
  const maxUrls = options.maxUrls ?? Number.POSITIVE_INFINITY;
  while (pending.length > 0 && visited.size < maxSitemapFiles && pages.length < maxUrls && options.signal?.aborted !== true) {
    const sitemapUrl = pending.shift();
    if (sitemapUrl === undefined || visited.has(sitemapUrl)) continue;
    visited.add(sitemapUrl);
    let content: string;
    try {
      const res = await fetchSitemap(sitemapUrl, options);
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
  if (pages.length >= maxUrls) {
    options.onProblem?.(`sitemaps list more than ${maxUrls} URLs: the first ${maxUrls} were read`);
    return pages.slice(0, maxUrls);
  }
  return pages;
}
