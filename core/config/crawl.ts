import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const hostPattern = z.string().min(1);

const cidrRange = z.string().refine(
  (value) => {
    try {
      ipaddr.parseCIDR(value.trim());
      return true;
    } catch {
      return false;
    }
  },
  { message: 'must be a CIDR range such as 10.0.0.0/8 or fd00::/8' },
);

export const crawlerSection = z
  .object({
    seeds: z.array(z.url()).default([]),
    max_pages: z.number().int().positive().default(10_000),
    max_depth: z.number().int().min(0).default(20),
    /**
     * How far from the seeds: path (under each seed's folder; the whole host when the seed is the root), host,
     * domain (registrable domain, subdomains included) or any.
     */
    scope: z.enum(['path', 'host', 'domain', 'any']).default('path'),
    /** Regular expressions a URL must match (any) / must not match (all); they narrow the scope. */
    include: z.array(hostPattern).default([]),
    exclude: z.array(hostPattern).default([]),
    user_agent: z.string().min(1).default('notary-crawler/0.1'),
    contact_url: z.string().min(1).default('https://github.com/notary-search/notary#crawler'),
    respect_robots_txt: z.boolean().default(true),
    use_sitemaps: z.boolean().default(true),
    max_concurrency: z.number().int().positive().default(8),
    per_host_concurrency: z.number().int().positive().default(2),
    /** Delay between two requests to the same host; 0 turns politeness off (loopback benchmarks). */
    per_host_delay_ms: z.number().int().min(0).default(500),
    /** Upper bound on a robots.txt Crawl-delay; a larger one is logged and cut to this. */
    crawl_delay_max_ms: z.number().int().min(0).default(30_000),
    /** Pause of a host that answers 429 (or 503) without a readable Retry-After. */
    retry_after_default_ms: z.number().int().min(0).default(30_000),
    /** Upper bound on the pause a Retry-After header can ask for. */
    retry_after_max_ms: z.number().int().min(0).default(120_000),
    request_timeout_ms: z.number().int().positive().default(20_000),
    max_page_bytes: z.number().int().positive().default(5 * 1024 * 1024),
    /** A page fetched less than this long ago is not fetched again by the background worker. */
    recrawl_after_hours: z.number().positive().default(24),
    renderer: z.enum(['static', 'browser']).default('static'),
    chromium_path: z.string().default('/usr/bin/chromium'),
    /**
     * Several crawler processes (`notary crawl-worker`, on one machine or many) crawl one frontier in PostgreSQL:
     * each joins the running round, leases URLs with FOR UPDATE SKIP LOCKED, and takes over the leases of a
     * worker that died. Needs storage.driver postgres. NOTARY_CRAWL_SHARED_FRONTIER overrides.
     */
    shared_frontier: z.boolean().default(false),
    /** How long a worker's lease on a URL lasts without renewal (a live worker renews every third of it). */
    lease_seconds: z.number().int().min(1).max(3600).default(60),
  })
  .prefault({});

export const extractSection = z
  .object({
    /**
     * The address policy of every request notary makes (extraction, the crawler's pages, robots.txt and sitemaps):
     * reach loopback, RFC 1918, unique-local and CGNAT addresses (private deployments). Link-local and cloud
     * metadata addresses stay refused whatever this says.
     */
    allow_private_networks: z.boolean().default(false),
    /** Private CIDR ranges that may be reached without allow_private_networks (the narrower, safer choice). */
    allowed_private_ranges: z.array(cidrRange).default([]),
    max_redirects: z.number().int().min(0).max(20).default(5),
    connect_timeout_ms: z.number().int().positive().default(5_000),
    /** Whole fetch: DNS, connect, redirects and body. */
    total_timeout_ms: z.number().int().positive().default(20_000),
    /** Byte cap on a response body (after decompression). */
    max_bytes: z.number().int().positive().default(10 * 1024 * 1024),
    respect_robots_txt: z.boolean().default(true),
    /** How long a fetched document may be served from the in-memory cache when the call gives no max_age. */
    cache_ttl_s: z.number().int().min(0).default(300),
    cache_max_entries: z.number().int().min(0).default(256),
    render: z.enum(['auto', 'never', 'always']).default('auto'),
    render_timeout_ms: z.number().int().positive().default(20_000),
    /** A batch (`urls`): how many of its URLs are fetched at once (each host also keeps crawler.per_host_concurrency and per_host_delay_ms). */
    batch_concurrency: z.number().int().min(1).max(20).default(8),
    /** A batch (`urls`): the whole call's time; URLs not extracted by then are answered as upstream_timeout. */
    batch_timeout_ms: z.number().int().positive().default(60_000),
    chromium_path: z.string().default('/usr/bin/chromium'),
    /** Deprecated: pricing.extract.credits. */
    credits: z.number().int().min(0).optional(),
    /** Deprecated: pricing.extract.credits_rendered. */
    credits_rendered: z.number().int().min(0).optional(),
  })
  .prefault({});
