/**
 * The one registry of error codes. Every problem+json response and every CLI failure names one of these codes;
 * clients may switch on `code`, so a code is never renamed or reused for another meaning.
 */
export const errorCodes = {
  invalid_request: { status: 400, title: 'The request is invalid', retryable: false },
  invalid_json: { status: 400, title: 'The request body is not valid JSON', retryable: false },
  depth_out_of_range: { status: 400, title: 'depth is outside the allowed range', retryable: false },
  unauthenticated: { status: 401, title: 'Authentication is required', retryable: false },
  invalid_api_key: { status: 401, title: 'The API key is not valid', retryable: false },
  revoked_api_key: { status: 401, title: 'The API key has been revoked', retryable: false },
  insufficient_credits: { status: 402, title: 'Not enough credits for this call', retryable: false },
  payment_required: { status: 402, title: 'This call must be paid for: see the challenges', retryable: false },
  duplicate_header: { status: 400, title: 'A header that may appear once was sent more than once', retryable: false },
  ambiguous_credentials: { status: 400, title: 'Credentials of more than one payment mode were sent', retryable: false },
  invalid_header: { status: 400, title: 'A request header is malformed', retryable: false },
  invalid_idempotency_key: { status: 400, title: 'The Idempotency-Key header is malformed', retryable: false },
  idempotency_key_reused: { status: 422, title: 'The Idempotency-Key was used for a different request', retryable: false },
  idempotency_in_progress: { status: 409, title: 'A request with this Idempotency-Key is still being processed', retryable: true },
  request_timeout: { status: 408, title: 'The request was not received in time', retryable: true },
  header_too_large: { status: 431, title: 'The request headers are too large', retryable: false },
  forbidden: { status: 403, title: 'This call is not allowed', retryable: false },
  not_found: { status: 404, title: 'Not found', retryable: false },
  method_not_allowed: { status: 405, title: 'Method not allowed', retryable: false },
  payload_too_large: { status: 413, title: 'The request body is too large', retryable: false },
  unsupported_media_type: { status: 415, title: 'The content type is not supported', retryable: false },
  rate_limited: { status: 429, title: 'Too many requests', retryable: true },
  internal_error: { status: 500, title: 'Internal error', retryable: true },
  service_unavailable: { status: 503, title: 'The service is not ready', retryable: true },
  // Not HTTP-facing: start-up, CLI and storage failures.
  invalid_config: { status: 500, title: 'The configuration is invalid', retryable: false },
  tenant_not_found: { status: 404, title: 'No such tenant', retryable: false },
  api_key_not_found: { status: 404, title: 'No such API key', retryable: false },
  model_unavailable: { status: 503, title: 'The reranker model could not be loaded', retryable: false },
  page_too_large: { status: 422, title: 'The page is too large to extract', retryable: false },
  invalid_seed: { status: 400, title: 'A crawl seed is missing or not an absolute http(s) URL', retryable: false },
  tenant_exists: { status: 409, title: 'A tenant with this name already exists', retryable: false },
  // Extraction (POST /v1/extract): the URL, the fetch and the page's content.
  invalid_url: { status: 400, title: 'The URL is not an absolute http(s) URL', retryable: false },
  blocked_address: { status: 400, title: 'The URL resolves to an address this service does not fetch', retryable: false },
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
  // Signed receipts and the receipt log (issue 14).
  invalid_notary_sign: { status: 400, title: 'X-Notary-Sign must be "required"', retryable: false },
  receipt_not_found: { status: 404, title: 'No such receipt in the log at that tree size', retryable: false },
  tree_size_out_of_range: { status: 400, title: 'The tree size is outside the receipt log', retryable: false },
  receipt_key_invalid: { status: 503, title: 'The receipt signing key is missing or corrupted', retryable: false },
  receipt_key_insecure: { status: 503, title: 'The receipt key file is readable by other users', retryable: false },
  receipt_log_corrupt: { status: 503, title: 'The receipt log does not match its published checkpoints', retryable: false },
  receipt_verification_failed: { status: 422, title: 'The receipt did not verify', retryable: false },
} as const satisfies Record<string, { status: number; title: string; retryable: boolean }>;

export type ErrorCode = keyof typeof errorCodes;

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
    const entry = errorCodes[code];
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
