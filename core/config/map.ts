import { z } from 'zod';

/** POST /v1/map: the sitemaps it reads live, under extraction's address policy (extract.allow_private_networks...). */
export const mapSection = z
  .object({
    /** The whole sitemap reading of one call (robots.txt, every sitemap file): past it, the URLs read so far count. */
    sitemap_timeout_ms: z.number().int().min(100).max(120_000).default(10_000),
    /** Sitemap URLs read at most per site (the rest of a larger sitemap is not listed; the answer says so). */
    max_sitemap_urls: z.number().int().min(1).max(1_000_000).default(50_000),
    /** How long a site's sitemap URLs are kept in memory, so the pages of one listing read the same sitemaps. */
    sitemap_cache_s: z.number().int().min(0).max(86_400).default(300),
  })
  .prefault({});
