import type { NotaryConfig } from '../../core/index.js';
import { isNotaryError, NotaryError } from '../../core/index.js';
import { normaliseUrl, seedFolder } from '../../crawler/index.js';
import { parseHttpUrl, vetUrl, type HostResolver } from '../../extract/index.js';
import type { SiteUrlStore } from '../../storage/index.js';
import { definePaidRoute, type PaidRoute, type ResolvedCollection } from '../paid/context.js';
import { ABSOLUTE_HTTP_URL } from './extract.js';
import type { SitemapReader } from './map-sitemaps.js';
import { collectionSchema } from './search.js';

export const MAP_MAX_LIMIT = 5000;
export const MAP_DEFAULT_LIMIT = 1000;
export const MAP_SOURCES = ['index', 'frontier', 'sitemap'] as const;
type MapSource = (typeof MAP_SOURCES)[number];

export interface MapBody {
  url: string;
  limit?: number;
  cursor?: string;
  sitemaps?: boolean;
  collection?: string;
}

interface MapEntry {
  url: string;
  source: MapSource;
  title?: string;
  last_crawled_at?: string;
}

interface MapResult {
  url: string;
  urls: MapEntry[];
  next_cursor: string | null;
  sitemap_error?: string;
}

/** What a cursor carries: the listing it belongs to and the last URL given. Opaque to callers (base64url JSON). */
interface Cursor {
  v: 1;
  /** The site's prefix, whether sitemaps are read, the collection named. */
  p: string;
  s: boolean;
  c: string | null;
  a: string;
}

const CURSOR_FIX = 'send the next_cursor of the previous page of the same listing (same url, sitemaps and collection), or leave cursor out to start over';

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

function decodeCursor(raw: string): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw new NotaryError('invalid_cursor', `cursor is not one this service gave: ${CURSOR_FIX}`);
  }
  const c = parsed as Partial<Cursor> | null;
  if (!c || c.v !== 1 || typeof c.p !== 'string' || typeof c.s !== 'boolean' || (c.c !== null && typeof c.c !== 'string') || typeof c.a !== 'string') {
    throw new NotaryError('invalid_cursor', `cursor is not one this service gave: ${CURSOR_FIX}`);
  }
  return c as Cursor;
}

/** The site a URL names: its normalised form and the prefix under it (origin and folder, as the crawler's scope "path"). */
export function siteOf(raw: string): { url: string; origin: string; prefix: string } {
  const parsed = parseHttpUrl(raw);
  const url = normaliseUrl(parsed.href) ?? parsed.href;
  const normal = new URL(url);
  return { url, origin: normal.origin, prefix: `${normal.origin}${seedFolder(url)}` };
}

export interface MapDeps {
  sites: SiteUrlStore;
  sitemaps: SitemapReader;
  resolver?: HostResolver;
}

/** `POST /v1/map`: the URLs the index, the crawl frontier and the site's sitemaps know under a site, paged. */
export function mapRoute(config: NotaryConfig, deps: MapDeps): PaidRoute {
  const listingOf = (body: MapBody) => ({ p: siteOf(body.url).prefix, s: body.sitemaps !== false, c: body.collection ?? null });
  return definePaidRoute<MapBody, MapResult>({
    url: '/v1/map',
    summary: 'The URLs the index, the crawl frontier and the sitemaps know under a site (its origin and folder), paged by cursor.',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: { type: 'string', minLength: 1, maxLength: 4096, pattern: ABSOLUTE_HTTP_URL, description: 'The site: URLs under its origin and folder are listed.' },
        limit: { type: 'integer', format: 'int32', minimum: 1, maximum: MAP_MAX_LIMIT, default: MAP_DEFAULT_LIMIT, description: 'URLs in this page.' },
        cursor: { type: 'string', minLength: 1, maxLength: 8192, description: 'The next_cursor of the previous page.' },
        sitemaps: { type: 'boolean', default: true, description: "Also read the site's sitemaps live (robots.txt Sitemap lines, /sitemap.xml)." },
        collection: { ...collectionSchema, description: `${collectionSchema.description} Index entries come from it alone.` },
      },
    },
    result: {
      properties: {
        url: { type: 'string', description: 'The site, normalised.' },
        urls: {
          type: 'array',
          maxItems: MAP_MAX_LIMIT,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['url', 'source'],
            properties: {
              url: { type: 'string' },
              source: { type: 'string', enum: [...MAP_SOURCES], description: 'Where the URL is known from: the index first, then the frontier, then a sitemap.' },
              title: { type: 'string' },
              last_crawled_at: { type: 'string', description: 'When the page was last fetched or confirmed (ISO 8601 UTC), for index entries.' },
            },
          },
        },
        next_cursor: { type: ['string', 'null'], description: 'Send it as cursor for the next page; null on the last page.' },
        sitemap_error: { type: 'string', description: 'What of the sitemaps could not be read (the URLs of the index and frontier are listed all the same).' },
      },
      required: ['url', 'urls', 'next_cursor'],
    },
    problems: [403, 404],
    prepare(body) {
      if (body.cursor !== undefined) {
        const cursor = decodeCursor(body.cursor);
        const listing = listingOf(body);
        if (cursor.p !== listing.p || cursor.s !== listing.s || cursor.c !== listing.c) {
          throw new NotaryError('invalid_cursor', `cursor belongs to another listing: ${CURSOR_FIX}`);
        }
      }
      return body;
    },
    price: () => ({ operation: 'map' }),
    collection: (body) => body.collection,
    async work(body, { collection }) {
      return mapSite(body, collection, deps, config);
    },
  });
}

async function mapSite(body: MapBody, collection: ResolvedCollection | undefined, deps: MapDeps, config: NotaryConfig): Promise<MapResult> {
  const site = siteOf(body.url);
  const limit = body.limit ?? MAP_DEFAULT_LIMIT;
  const readSitemaps = body.sitemaps !== false;
  const after = body.cursor !== undefined ? decodeCursor(body.cursor).a : '';
  // The site's address is vetted as /v1/extract vets a page's: a refused one (loopback, metadata...) is 403 blocked_address.
  let sitemapError: string | null = null;
  try {
    await vetUrl(new URL(site.url), {
      allowPrivateNetworks: config.extract.allow_private_networks,
      allowedPrivateRanges: config.extract.allowed_private_ranges,
      ...(deps.resolver ? { resolver: deps.resolver } : {}),
    });
  } catch (err) {
    if (!isNotaryError(err) || err.code !== 'upstream_unreachable') throw err;
    sitemapError = err.message;
  }
  // Frontier rows belong to no collection: they are listed only where the deployment has one.
  const only = collection === undefined || collection.only;
  const [indexed, frontier, sitemap] = await Promise.all([
    deps.sites.indexed(site.prefix, after, limit + 1, only ? undefined : collection.id),
    only ? deps.sites.frontier(site.prefix, after, limit + 1) : Promise.resolve([]),
    readSitemaps && sitemapError === null ? deps.sitemaps.read(site.origin) : Promise.resolve({ urls: [], error: null }),
  ]);
  if (readSitemaps && sitemap.error !== null) sitemapError = sitemap.error;
  const entries = new Map<string, MapEntry>();
  for (const page of indexed) {
    entries.set(page.url, { url: page.url, source: 'index', ...(page.title ? { title: page.title } : {}), last_crawled_at: page.checkedAt });
  }
  for (const url of frontier) if (!entries.has(url)) entries.set(url, { url, source: 'frontier' });
  let fromSitemap = 0;
  for (const url of sitemap.urls) {
    if (fromSitemap > limit) break;
    if (url <= after || !url.startsWith(site.prefix)) continue;
    fromSitemap++;
    if (!entries.has(url)) entries.set(url, { url, source: 'sitemap' });
  }
  const sorted = [...entries.values()].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  const page = sorted.slice(0, limit);
  const last = page[page.length - 1];
  const next = sorted.length > limit && last ? encodeCursor({ v: 1, p: site.prefix, s: readSitemaps, c: body.collection ?? null, a: last.url }) : null;
  return { url: site.url, urls: page, next_cursor: next, ...(readSitemaps && sitemapError !== null ? { sitemap_error: sitemapError } : {}) };
}
