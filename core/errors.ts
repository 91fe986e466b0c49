/**
 * The one registry of error codes. Every problem+json response and every CLI failure names one of these codes;
 * clients may switch on `code`, so a code is never renamed or reused for another meaning. The shared codes are listed
 * here; each plug-in (a payment mode, an extension) registers its own from its folder (`registerErrorCodes`), so
 * `allErrorCodes()` is the whole registry once the plug-ins are registered.
 */
export const errorCodes = {
  invalid_request: { status: 400, title: 'The request is invalid', retryable: false },
  invalid_json: { status: 400, title: 'The request body is not valid JSON', retryable: false },
  depth_out_of_range: { status: 400, title: 'depth is outside the allowed range', retryable: false },
  invalid_domain: { status: 400, title: 'A domain in include_domains or exclude_domains is not a host name', retryable: false },
  invalid_date_range: { status: 422, title: 'start_date is after end_date (or a date is not a YYYY-MM-DD calendar date)', retryable: false },
  unauthenticated: { status: 401, title: 'Authentication is required', retryable: false },
  insufficient_credits: { status: 402, title: 'Not enough credits for this call', retryable: false },
  payment_required: { status: 402, title: 'This call must be paid for: see the challenges', retryable: false },
  duplicate_header: { status: 400, title: 'A header that may appear once was sent more than once', retryable: false },
  ambiguous_credentials: { status: 400, title: 'Credentials of more than one payment mode were sent', retryable: false },
  invalid_header: { status: 400, title: 'A request header is malformed', retryable: false },
  invalid_idempotency_key: { status: 400, title: 'The Idempotency-Key header is malformed', retryable: false },
  idempotency_key_reused: { status: 422, title: 'The Idempotency-Key was used for a different request', retryable: false },
  idempotency_in_progress: { status: 409, title: 'A request with this Idempotency-Key is still being processed', retryable: true },
  request_timeout: { status: 408, title: 'The request was not received in time', retryable: true },
  client_closed_request: { status: 499, title: 'The caller closed the connection before the answer was ready; nothing was charged', retryable: true },
  header_too_large: { status: 431, title: 'The request headers are too large', retryable: false },
  forbidden: { status: 403, title: 'This call is not allowed', retryable: false },
  not_found: { status: 404, title: 'Not found', retryable: false },
  method_not_allowed: { status: 405, title: 'Method not allowed', retryable: false },
  payload_too_large: { status: 413, title: 'The request body is too large', retryable: false },
  unsupported_media_type: { status: 415, title: 'The content type is not supported', retryable: false },
  expectation_failed: { status: 417, title: 'The Expect header names an expectation this server does not meet', retryable: false },
  rate_limited: { status: 429, title: 'Too many requests', retryable: true },
  internal_error: { status: 500, title: 'Internal error', retryable: true },
  service_unavailable: { status: 503, title: 'The service is not ready', retryable: true },
  // Not HTTP-facing: start-up, CLI and storage failures.
  invalid_config: { status: 500, title: 'The configuration is invalid', retryable: false },
  listen_failed: { status: 500, title: 'The server could not listen on its address', retryable: false },
  data_dir_unusable: { status: 500, title: 'The data folder cannot be used', retryable: false },
  dependency_unavailable: { status: 503, title: 'A service notary depends on did not answer at start', retryable: true },
  tenant_not_found: { status: 404, title: 'No such tenant', retryable: false },
  api_key_not_found: { status: 404, title: 'No such API key', retryable: false },
  model_unavailable: { status: 503, title: 'The reranker model could not be loaded', retryable: false },
  page_too_large: { status: 422, title: 'The page is too large to extract', retryable: false },
  invalid_seed: { status: 400, title: 'A crawl seed is missing or not an absolute http(s) URL', retryable: false },
  tenant_exists: { status: 409, title: 'A tenant with this name already exists', retryable: false },
  // Extraction (POST /v1/extract): the URL, the fetch and the page's content.
  invalid_url: { status: 400, title: 'The URL is not an absolute http(s) URL', retryable: false },
  blocked_address: { status: 403, title: 'The URL resolves to an address this service does not fetch', retryable: false },
  robots_disallowed: { status: 403, title: "The site's robots.txt disallows fetching this URL", retryable: false },
  too_many_redirects: { status: 502, title: 'The URL redirects too many times', retryable: false },
  upstream_error: { status: 502, title: 'The site answered with an error status', retryable: true },
  upstream_unreachable: { status: 502, title: 'The site could not be reached', retryable: true },
  upstream_timeout: { status: 504, title: 'The site did not answer in time', retryable: true },
  body_too_large: { status: 502, title: 'The response is larger than the fetch byte cap', retryable: false },
  unsupported_content_type: { status: 415, title: 'The URL serves a content type that cannot be extracted', retryable: false },
  render_failed: { status: 502, title: 'The page could not be rendered in the browser', retryable: true },
  captcha_detected: { status: 422, title: 'The site answered with a CAPTCHA or bot challenge', retryable: false },
  login_required: { status: 422, title: 'The page is behind a login wall', retryable: false },
  js_shell_empty: { status: 422, title: 'The page needs JavaScript and stayed empty after rendering', retryable: false },
  empty_content: { status: 422, title: 'The page has no main content to extract', retryable: false },
  upstream_not_found: { status: 422, title: 'The site answered that the page does not exist (404 or 410)', retryable: false },
  invalid_batch: { status: 422, title: 'Send either url or urls (1 to 20 distinct absolute http(s) URLs), not both', retryable: false },
  batch_failed: { status: 502, title: 'None of the URLs of the batch could be extracted; nothing was charged', retryable: false },
  batch_payment_unsupported: { status: 422, title: 'This payment mode cannot pay a batch charged per successful URL', retryable: false },
  // Accounts and the dashboard (issue 17).
  session_required: { status: 401, title: 'Sign in to the dashboard first', retryable: false },
  invalid_credentials: { status: 401, title: 'The email or password is wrong', retryable: false },
  signin_throttled: { status: 429, title: 'Too many failed sign-ins: wait before trying again', retryable: true },
  csrf_failed: { status: 403, title: 'The request did not carry this session\'s CSRF token, or came from another site', retryable: false },
  operator_only: { status: 403, title: 'Only operators may do this', retryable: false },
  signup_throttled: { status: 429, title: 'Too many sign-ups from this address: wait before trying again', retryable: true },
  metrics_token_required: { status: 401, title: 'GET /metrics needs the metrics bearer token', retryable: false },
  signup_closed: { status: 403, title: 'Sign-up is closed on this server', retryable: false },
  email_taken: { status: 409, title: 'An account with this email already exists', retryable: false },
  weak_password: { status: 400, title: 'The password is too short or too common', retryable: false },
  user_not_found: { status: 404, title: 'No such user', retryable: false },
  insufficient_scope: { status: 403, title: "The API key's scopes do not include this call", retryable: false },
  feature_not_enabled: { status: 403, title: 'This feature is not enabled for the tenant', retryable: false },
  tenant_suspended: { status: 403, title: 'The tenant is suspended', retryable: false },
  invalid_settings: { status: 400, title: 'The prices or tiers are invalid', retryable: false },
  seed_not_found: { status: 404, title: 'No such crawl seed', retryable: false },
  seed_exists: { status: 409, title: 'This crawl seed exists already', retryable: false },
  // Collections (issue 33).
  collection_not_found: { status: 404, title: 'No such collection', retryable: false },
  collection_forbidden: { status: 403, title: 'The credentials may not read this collection', retryable: false },
  invalid_collection: { status: 400, title: 'A collection name is invalid', retryable: false },
  // Crawling (CLI).
  nothing_to_resume: { status: 409, title: 'There is no stopped or interrupted crawl to resume', retryable: false },
  // Crawl jobs over the API (issue 33).
  crawl_job_not_found: { status: 404, title: 'No such crawl job', retryable: false },
  crawl_limit_reached: { status: 429, title: "A crawl limit of the payer's tier is reached", retryable: true },
  invalid_crawl_pattern: { status: 422, title: 'An include or exclude pattern is not a valid regular expression', retryable: false },
  deferred_payment_unsupported: { status: 422, title: 'This payment mode cannot pay a job charged after it ends', retryable: false },
  // Scaled-out deployment (issue 19): the shared index and stores.
  index_unavailable: { status: 503, title: 'The search index backend could not be reached or did not answer in time', retryable: true },
  store_unavailable: { status: 503, title: 'A shared store (Redis, the database) could not be reached', retryable: true },
  // Webhooks (issue 33): tenant-supplied endpoints that crawl jobs call.
  webhook_address_blocked: { status: 422, title: 'The webhook URL resolves to an address this service does not call', retryable: false },
  webhook_not_found: { status: 404, title: 'No such webhook endpoint', retryable: false },
  // POST /v1/map (issue 33).
  invalid_cursor: { status: 422, title: 'The cursor is not one this listing gave', retryable: false },
} as const satisfies Record<string, { status: number; title: string; retryable: boolean }>;

export interface ErrorEntry {
  status: number;
  title: string;
  retryable: boolean;
}

/**
 * The codes plug-ins add, by name: a plug-in's errors file extends this interface (module augmentation) with its
 * table's type, so its codes type-check like the shared ones, and registers the table at run time.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PluginErrorCodes {}

export type ErrorCode = keyof typeof errorCodes | Extract<keyof PluginErrorCodes, string>;

const pluginCodes = new Map<string, ErrorEntry>();

/** Adds a plug-in's codes to the registry (again with the same entries is a no-op); a code is never taken twice. */
export function registerErrorCodes<T extends Record<string, ErrorEntry>>(table: T): T {
  for (const [code, entry] of Object.entries(table)) {
    const known = (errorCodes as Record<string, ErrorEntry>)[code] ?? pluginCodes.get(code);
    if (known && (known.status !== entry.status || known.title !== entry.title || known.retryable !== entry.retryable)) {
      throw new Error(`error code ${code} is registered twice with different meanings`);
    }
    pluginCodes.set(code, entry);
  }
  return table;
}

/**
 * Lists these plug-ins' codes first, in this order (their plug-ins' registration order), whatever order their modules
 * were loaded in: the registry, problem listings and the OpenAPI document do not depend on import order.
 */
export function orderPluginErrorCodes(codes: readonly string[]): void {
  const entries = new Map(pluginCodes);
  pluginCodes.clear();
  for (const code of codes) {
    const entry = entries.get(code);
    if (entry) pluginCodes.set(code, entry);
  }
  for (const [code, entry] of entries) if (!pluginCodes.has(code)) pluginCodes.set(code, entry);
}

/** The entry of a registered code; a code no plug-in registered is a programming error. */
export function errorEntry(code: ErrorCode): ErrorEntry {
  const entry = (errorCodes as Record<string, ErrorEntry>)[code] ?? pluginCodes.get(code);
  if (!entry) throw new Error(`error code ${code} is not registered (is its plug-in registered?)`);
  return entry;
}

/** Every registered code: the shared ones, then the plug-ins' in registration order. */
export function allErrorCodes(): Readonly<Record<string, ErrorEntry>> {
  return { ...errorCodes, ...Object.fromEntries(pluginCodes) };
}

/**
 * Codes that report what a site did (or failed to do) for a request, not a fault of this service: logged as
 * outcomes of the request, without a stack trace, whatever their HTTP status.
 */
export const upstreamOutcomeCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'too_many_redirects',
  'upstream_error',
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_not_found',
  'body_too_large',
  'render_failed',
]);

export class NotaryError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  /** Extra members for the problem+json body (e.g. `retry_after_s`, `required_credits`). */
  readonly extra: Record<string, unknown>;
  /** Response headers the problem carries (e.g. the payment modes' WWW-Authenticate challenges). */
  readonly headers: Record<string, string | string[]>;

  constructor(code: ErrorCode, detail?: string, extra: Record<string, unknown> = {}, headers: Record<string, string | string[]> = {}) {
    const entry = errorEntry(code);
    super(detail ?? entry.title);
    this.name = 'NotaryError';
    this.code = code;
    this.status = entry.status;
    this.retryable = entry.retryable;
    this.extra = extra;
    this.headers = headers;
  }
}

export function isNotaryError(value: unknown): value is NotaryError {
  return value instanceof NotaryError;
}
