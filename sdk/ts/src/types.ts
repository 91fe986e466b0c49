import type { NotaryReceipt } from './receipts.js';

export interface SearchRequest {
  /** What to search for (1 to 512 characters by default). */
  query: string;
  /** 1 (default here) to the server's max_depth; each level above 1 adds a reflection pass and costs more. */
  depth?: number;
  /** Results in this language only (BCP 47: "en", "pt-BR"); default: the deployment's, else the query's own. */
  language?: string;
  /** Results wanted: 1 to the server's search.max_results_cap (default: its search.max_results, 10). No extra charge. */
  max_results?: number;
  /** Only results from these hosts (at most 100): "docs.example.com", or "*.example.com" for it and every host under it. */
  include_domains?: string[];
  /** No results from these hosts (at most 100), same form. */
  exclude_domains?: string[];
  /** Only pages published on or after this date (YYYY-MM-DD, UTC). */
  start_date?: string;
  /** Only pages published on or before this date (YYYY-MM-DD, UTC). */
  end_date?: string;
  /** With a date range: keep (server default) or exclude pages whose publication date is not known. */
  undated?: 'keep' | 'exclude';
  /** Passages of each result's page most relevant to the query, best first (count 1..10, default 3; max_chars 40..2000). */
  highlights?: { count?: number; max_chars?: number };
  /** Optional result fields: "published_date" adds each result's publication date where it is known. */
  include?: SearchIncludeField[];
  /**
   * The collection to search (default "default": every page not put in another one). An unknown name is 404
   * `collection_not_found` (NotFoundError); one the API key may not read, 403 `collection_forbidden`
   * (PermissionDeniedError). Nothing is charged for either.
   */
  collection?: string;
}

/** Result fields a search may ask for with `include`. */
export type SearchIncludeField = 'published_date';

/** One passage of a result's page (when the request asked for highlights). */
export interface SearchHighlight {
  text: string;
  /** 0..1, the passage's relevance to the query. */
  score: number;
}

export interface SearchResultItem {
  url: string;
  title: string;
  snippet: string;
  /** 0..1, higher is better. */
  rerank_score: number;
  /** Present only when the request asked for highlights. */
  highlights?: SearchHighlight[];
  /** The page's publication date (ISO 8601, UTC): only when the request's include asked for it and it is known. */
  published_date?: string;
}

export interface ExtractRequest {
  /** An absolute http(s) URL. */
  url: string;
  mode?: 'excerpt' | 'text' | 'markdown' | 'html';
  /** With mode excerpt: the passages that best answer this. */
  query?: string;
  /** auto (default): a browser only for JavaScript shells, at the static price; always: the rendered price. */
  render?: 'auto' | 'never' | 'always';
  /** Seconds a cached copy may be old; 0 fetches fresh. */
  max_age?: number;
  /** Keep the reader comments after the article (default false). */
  include_comments?: boolean;
  /**
   * The collection whose access rules the call is under (default "default"); the page is fetched the same either
   * way. Unknown: 404 `collection_not_found`; not readable with this key: 403 `collection_forbidden`.
   */
  collection?: string;
}

/** A batch: 1 to 20 distinct URLs with the options of {@link ExtractRequest}; charged only for the pages extracted. */
export interface ExtractBatchRequest extends Omit<ExtractRequest, 'url'> {
  urls: string[];
}

export interface RateLimitInfo {
  limit: number;
  remaining: number;
  reset_ms: number;
}

/** MPP: one receipt per paying party; they add up to credits_used. */
export interface PartyReceipt {
  party: string;
  credits: number;
  share: string;
}

/** Members every paid response carries. */
export interface PaidResponseBody {
  credits_used: number;
  rate_limit: RateLimitInfo;
  receipts?: PartyReceipt[];
  notary_receipt?: NotaryReceipt;
  /** With `notary_receipt`: the salt its `request_digest` is keyed with (keep it with the request to prove it later). */
  notary_request_salt?: string;
}

export interface SearchResponseBody extends PaidResponseBody {
  query: string;
  depth: number;
  results: SearchResultItem[];
  /** The result list again, in pay-per-call modes and with signed receipts (the interface's name for it). */
  facts?: SearchResultItem[];
}

export interface ExtractResponseBody extends PaidResponseBody {
  url: string;
  final_url: string;
  status: number | null;
  title: string | null;
  byline: string | null;
  site_name: string | null;
  lang: string | null;
  published_at: string | null;
  mode: string;
  content: string;
  excerpt: string;
  word_count: number;
}

/** The members of one extracted page (an {@link ExtractResponseBody} without the paid members). */
export type ExtractedPage = Omit<ExtractResponseBody, keyof PaidResponseBody>;

/** One URL of a batch answer, in the request's order: its page, or the problem that stopped it (not charged). */
export type ExtractBatchItem = ({ url: string; ok: true } & Omit<ExtractedPage, 'url'>) | { url: string; ok: false; problem: Problem };

export interface ExtractBatchResponseBody extends PaidResponseBody {
  results: ExtractBatchItem[];
}

/** The HTTP exchange behind a result or an error, for whatever the typed members do not cover. */
export interface RawResponse {
  status: number;
  headers: Headers;
  /** The body exactly as received. */
  body: string;
  /** The exact request body bytes sent (what request_digest and MPP's body_digest cover). */
  requestBody: Uint8Array;
}

/** What the client adds to every result (not enumerable: JSON.stringify(result) is the body as received). */
export interface ResultMeta {
  /** X-Request-Id of the call that produced the result. */
  readonly requestId: string;
  readonly creditsUsed: number;
  /** The Idempotency-Key the call sent on every attempt. */
  readonly idempotencyKey: string;
  /** The server replayed a stored response for the Idempotency-Key (nothing was charged again). */
  readonly replayed: boolean;
  /** HTTP attempts made, retries and payment round trips included. */
  readonly attempts: number;
  readonly raw: RawResponse;
}

export type SearchResult = SearchResponseBody & ResultMeta;
export type ExtractResult = ExtractResponseBody & ResultMeta;
export type ExtractBatchResult = ExtractBatchResponseBody & ResultMeta;

/** RFC 9457 problem details as notary writes them. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id: string;
  retryable: boolean;
  price?: { credits: number; amount: string; asset: string };
  challenges?: Record<string, Record<string, unknown>>;
  [member: string]: unknown;
}

/** `POST /v1/crawl`: exactly one of `url` and `urls` (1 to 20 seeds). See docs/crawl-jobs.md. */
export interface CrawlRequest {
  url?: string;
  urls?: string[];
  /** The collection the pages join (it must exist); default: the default collection. */
  collection?: string;
  /** How far from the seeds: under the seed's folder (default), its host, or its registrable domain. */
  scope?: 'path' | 'host' | 'domain';
  /** The page budget: the job is quoted at it and charged for the pages it stored (default 100). */
  max_pages?: number;
  max_depth?: number;
  include?: string[];
  exclude?: string[];
  /** A webhook endpoint id (`whe_...`, POST /v1/webhooks) told when the job ends. */
  webhook?: string;
}

export type CrawlJobStatus = 'queued' | 'running' | 'completed' | 'cancelled' | 'failed';

/** A crawl job as the API shows it. */
export interface CrawlJob {
  id: string;
  status: CrawlJobStatus;
  collection: string;
  seeds: string[];
  scope: string;
  max_pages: number;
  max_depth: number;
  progress: { stored: number; queued: number; failed: number; pages_per_minute: number | null; eta_seconds: number | null };
  credits_quoted: number;
  /** What the job was charged, once it ended; null before. */
  credits_used: number | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  error: { code: string; detail: string } | null;
  webhook: string | null;
}

/** A submitted job: `creditsUsed` is 0 (the quote is held; the charge comes when the job ends). */
export type CrawlJobResult = CrawlJob & ResultMeta;

export interface CrawlJobList {
  jobs: CrawlJob[];
  next_cursor: string | null;
}

/** `POST /v1/map`: the URLs the index, the frontier and the site's sitemaps know under `url`'s folder. See docs/map.md. */
export interface MapRequest {
  url: string;
  /** 1 to 5000 a page (default 1000). */
  limit?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string;
  /** Read the site's sitemaps live (default true). */
  sitemaps?: boolean;
  collection?: string;
}

export interface MapResponseBody {
  url: string;
  urls: Array<{ url: string; source: 'index' | 'frontier' | 'sitemap'; title?: string; last_crawled_at?: string }>;
  next_cursor: string | null;
  /** Why the sitemaps could not be read, when they could not (the index and frontier still answer). */
  sitemap_error?: string;
  credits_used: number;
}

export type MapResult = MapResponseBody & ResultMeta;
