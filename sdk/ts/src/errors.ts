import type { Problem, RawResponse } from './types.js';

/** Every error the client throws. */
export class NotaryError extends Error {
  override readonly name: string = 'NotaryError';
}

/** The server answered with a problem (RFC 9457). `code` is stable: switch on it. */
export class NotaryApiError extends NotaryError {
  override readonly name: string = 'NotaryApiError';
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly retryable: boolean;
  readonly problem: Problem | null;
  readonly raw: RawResponse;

  constructor(status: number, problem: Problem | null, raw: RawResponse) {
    const code = problem?.code ?? `http_${status}`;
    super(`${status} ${code}: ${problem?.detail ?? raw.body.slice(0, 200)}`);
    this.status = status;
    this.code = code;
    this.requestId = problem?.request_id ?? raw.headers.get('x-request-id');
    this.retryable = problem?.retryable ?? status >= 500;
    this.problem = problem;
    this.raw = raw;
  }
}

/** 400, 413, 415, 431: the request itself is wrong (schema, JSON, headers, size); fix it before sending again. */
export class BadRequestError extends NotaryApiError {
  override readonly name = 'BadRequestError';
}
/** 401: no, a malformed, unknown or revoked credential. */
export class AuthenticationError extends NotaryApiError {
  override readonly name = 'AuthenticationError';
}
/** 402: the call must be paid, or the payer cannot cover it (`price` says what it costs). */
export class PaymentRequiredError extends NotaryApiError {
  override readonly name = 'PaymentRequiredError';
  get price(): Problem['price'] {
    return this.problem?.price;
  }
}
/** 403: not allowed (e.g. robots.txt forbids fetching the page, or `collection_forbidden`: the key may not read the collection). */
export class PermissionDeniedError extends NotaryApiError {
  override readonly name = 'PermissionDeniedError';
}
/** 404 (e.g. `collection_not_found`: no collection of that name), 405. */
export class NotFoundError extends NotaryApiError {
  override readonly name = 'NotFoundError';
}
/** 409, and 422 idempotency_key_reused: the Idempotency-Key is in use or belongs to another request. */
export class ConflictError extends NotaryApiError {
  override readonly name = 'ConflictError';
}
/** 422: the request was understood but cannot be served (no main content, CAPTCHA, login wall, ...). */
export class UnprocessableError extends NotaryApiError {
  override readonly name = 'UnprocessableError';
}
/** 429 after the retries ran out; `retryAfterMs` is what the server asked for. */
export class RateLimitError extends NotaryApiError {
  override readonly name = 'RateLimitError';
  get retryAfterMs(): number | null {
    return retryAfterMs(this.raw.headers.get('retry-after'));
  }
}
/** 5xx (408 too): the service or the site it fetched failed; `retryable` says whether to try again. */
export class ServerError extends NotaryApiError {
  override readonly name = 'ServerError';
}

/** The connection failed (refused, reset, DNS) on every attempt. */
export class ConnectionError extends NotaryError {
  override readonly name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
/** No complete answer within the timeout, on every attempt. */
export class TimeoutError extends NotaryError {
  override readonly name = 'TimeoutError';
}

/** Retry-After in milliseconds: delay-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

export function errorFor(status: number, problem: Problem | null, raw: RawResponse): NotaryApiError {
  const code = problem?.code;
  if (status === 401) return new AuthenticationError(status, problem, raw);
  if (status === 402) return new PaymentRequiredError(status, problem, raw);
  if (status === 403) return new PermissionDeniedError(status, problem, raw);
  if (status === 404 || status === 405) return new NotFoundError(status, problem, raw);
  if (status === 409 || code === 'idempotency_key_reused') return new ConflictError(status, problem, raw);
  if (status === 422) return new UnprocessableError(status, problem, raw);
  if (status === 429) return new RateLimitError(status, problem, raw);
  if (status === 408 || status >= 500) return new ServerError(status, problem, raw);
  return new BadRequestError(status, problem, raw);
}
