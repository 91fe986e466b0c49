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
} as const satisfies Record<string, { status: number; title: string; retryable: boolean }>;

export type ErrorCode = keyof typeof errorCodes;

export class NotaryError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  /** Extra members for the problem+json body (e.g. `retry_after_s`, `required_credits`). */
  readonly extra: Record<string, unknown>;

  constructor(code: ErrorCode, detail?: string, extra: Record<string, unknown> = {}) {
    const entry = errorCodes[code];
    super(detail ?? entry.title);
    this.name = 'NotaryError';
    this.code = code;
    this.status = entry.status;
    this.retryable = entry.retryable;
    this.extra = extra;
  }
}

export function isNotaryError(value: unknown): value is NotaryError {
  return value instanceof NotaryError;
}
