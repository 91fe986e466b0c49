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
  // MPP (Authorization: MPP envelope=...): each failure of an envelope has its own code; `party` names the party at fault.
  mpp_envelope_encoding: { status: 400, title: 'The MPP envelope is not base64url', retryable: false },
  mpp_envelope_json: { status: 400, title: 'The MPP envelope is not a UTF-8 JSON object', retryable: false },
  mpp_envelope_invalid: { status: 400, title: 'The MPP envelope lacks a member, has one of the wrong form, or one it should not', retryable: false },
  mpp_version_unsupported: { status: 400, title: 'The MPP envelope version is not supported', retryable: false },
  mpp_duplicate_party: { status: 400, title: 'A party appears twice in the MPP envelope', retryable: false },
  mpp_share_malformed: { status: 400, title: 'A share is not a decimal string with at most 6 decimals', retryable: false },
  mpp_shares_not_one: { status: 400, title: 'The shares of the MPP envelope do not sum to exactly 1', retryable: false },
  mpp_too_many_parties: { status: 400, title: 'The MPP envelope lists more parties than this service allows', retryable: false },
  mpp_missing_authorization: { status: 401, title: 'A party of the MPP envelope did not sign it', retryable: false },
  mpp_bad_signature: { status: 401, title: "A party's signature of the MPP envelope does not verify", retryable: false },
  mpp_unknown_party: { status: 401, title: 'A party of the MPP envelope is not known', retryable: false },
  mpp_unknown_key: { status: 401, title: "A party's kid is not one of its registered keys", retryable: false },
  mpp_key_revoked: { status: 401, title: "A party's key was revoked", retryable: false },
  mpp_method_mismatch: { status: 401, title: "The MPP envelope's htm is not the request method", retryable: false },
  mpp_url_mismatch: { status: 401, title: "The MPP envelope's htu is not the request URL", retryable: false },
  mpp_body_digest_mismatch: { status: 401, title: "The MPP envelope's body_digest is not the digest of the request body", retryable: false },
  mpp_envelope_expired: { status: 401, title: 'The MPP envelope has expired', retryable: false },
  mpp_issued_in_future: { status: 401, title: 'The MPP envelope is issued in the future', retryable: false },
  mpp_expiry_too_far: { status: 401, title: 'The MPP envelope expires too far ahead', retryable: false },
  mpp_nonce_replayed: { status: 401, title: "The MPP envelope's nonce was used before", retryable: false },
  mpp_total_below_price: { status: 402, title: "The MPP envelope's total_credits do not cover the price of this call", retryable: false },
  // Party keys (notary parties ..., the dashboard's MPP page).
  invalid_public_key: { status: 400, title: 'The public key is not a base64url Ed25519 key of 32 bytes', retryable: false },
  party_key_exists: { status: 409, title: 'This public key is registered already', retryable: false },
  party_key_not_found: { status: 404, title: 'No such party key', retryable: false },
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
  expired_api_key: { status: 401, title: 'The API key has expired', retryable: false },
  insufficient_scope: { status: 403, title: "The API key's scopes do not include this call", retryable: false },
  feature_not_enabled: { status: 403, title: 'This feature is not enabled for the tenant', retryable: false },
  tenant_suspended: { status: 403, title: 'The tenant is suspended', retryable: false },
  invalid_settings: { status: 400, title: 'The prices or tiers are invalid', retryable: false },
  seed_not_found: { status: 404, title: 'No such crawl seed', retryable: false },
  seed_exists: { status: 409, title: 'This crawl seed exists already', retryable: false },
  // x402 pay-per-call (PAYMENT-SIGNATURE and X-402-Receipt). Nothing is settled when any of these is answered.
  x402_malformed_payment: { status: 400, title: 'The PAYMENT-SIGNATURE header is not valid base64 JSON of an x402 v2 payment', retryable: false },
  x402_malformed_receipt: { status: 400, title: 'The X-402-Receipt header is not a well-formed settlement receipt', retryable: false },
  x402_unsupported: { status: 400, title: 'This x402 version, scheme or payload type is not accepted here', retryable: false },
  x402_wrong_network: { status: 402, title: 'The payment is for another network', retryable: false },
  x402_wrong_asset: { status: 402, title: 'The payment is in another asset', retryable: false },
  x402_wrong_pay_to: { status: 402, title: 'The payment goes to another address', retryable: false },
  x402_amount_too_low: { status: 402, title: 'The payment is less than the price of this call', retryable: false },
  x402_amount_mismatch: { status: 402, title: 'The exact scheme pays exactly the quoted amount', retryable: false },
  x402_challenge_missing: { status: 402, title: 'The payment does not name the challenge it answers', retryable: false },
  x402_challenge_invalid: { status: 402, title: 'The challenge was not issued for this request (method, path, body or price)', retryable: false },
  x402_challenge_expired: { status: 402, title: 'The challenge has expired', retryable: false },
  x402_challenge_used: { status: 402, title: 'The challenge was already paid for by another payment', retryable: false },
  x402_authorization_expired: { status: 402, title: 'The payment authorization has expired or is not valid yet', retryable: false },
  x402_invalid_signature: { status: 402, title: 'The payment signature does not verify', retryable: false },
  x402_insufficient_funds: { status: 402, title: 'The payer does not hold enough of the asset', retryable: false },
  x402_payment_invalid: { status: 402, title: 'The facilitator refused the payment', retryable: false },
  x402_payment_used: { status: 409, title: 'This payment was already used for another call, or is in use by one right now', retryable: false },
  x402_untrusted_receipt: { status: 402, title: 'The settlement receipt is not signed by a trusted facilitator key', retryable: false },
  x402_receipt_expired: { status: 402, title: 'The settlement receipt is too old to redeem', retryable: false },
  x402_settlement_failed: { status: 402, title: 'The payment could not be settled; nothing was charged', retryable: false },
  x402_settlement_pending: { status: 503, title: 'The settlement outcome is not known yet; retry with the same payment, do not pay again', retryable: true },
  x402_facilitator_unavailable: { status: 502, title: 'The payment facilitator could not be reached; nothing was charged', retryable: true },
  // Signed receipts and the receipt log (issue 14).
  invalid_notary_sign: { status: 400, title: 'X-Notary-Sign must be "required"', retryable: false },
  receipt_not_found: { status: 404, title: 'No such receipt in the log at that tree size', retryable: false },
  tree_size_out_of_range: { status: 404, title: 'The tree size is outside the receipt log', retryable: false },
  receipt_key_invalid: { status: 503, title: 'The receipt signing key is missing or corrupted', retryable: false },
  receipt_key_insecure: { status: 503, title: 'The receipt key file is readable by other users', retryable: false },
  receipt_log_corrupt: { status: 503, title: 'The receipt log does not match its published checkpoints', retryable: false },
  receipt_verification_failed: { status: 422, title: 'The receipt did not verify', retryable: false },
  // Crawling (CLI).
  nothing_to_resume: { status: 409, title: 'There is no stopped or interrupted crawl to resume', retryable: false },
  // Scaled-out deployment (issue 19): the shared index and stores.
  index_unavailable: { status: 503, title: 'The search index backend could not be reached or did not answer in time', retryable: true },
  store_unavailable: { status: 503, title: 'A shared store (Redis, the database) could not be reached', retryable: true },
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
