import { apiKeyProblem } from './api-keys.js';
import { checkpointFromLog, type LogProofs } from './log.js';
import { ConnectionError, errorFor, NotaryError, retryAfterMs, TimeoutError, type NotaryApiError } from './errors.js';
import type { Jwks } from './jwk.js';
import { buildEnvelope, type MppParty } from './mpp.js';
import { verifyReceipt, type ReceiptVerification } from './receipts.js';
import type { X402Payer } from './x402.js';
import type {
  CrawlJob,
  CrawlJobList,
  CrawlJobResult,
  CrawlRequest,
  ExtractBatchRequest,
  ExtractBatchResponseBody,
  ExtractBatchResult,
  ExtractRequest,
  ExtractResponseBody,
  ExtractResult,
  MapRequest,
  MapResponseBody,
  MapResult,
  Problem,
  RawResponse,
  ResultMeta,
  SearchRequest,
  SearchResponseBody,
  SearchResult,
} from './types.js';

/** How calls are paid. Build one with {@link apiKey}, {@link mpp} or {@link x402}. */
export type Payment =
  | { mode: 'api_key'; key: string }
  | { mode: 'mpp'; parties: readonly MppParty[]; maxCredits?: number; ttlSeconds?: number }
  | { mode: 'x402'; payer: X402Payer };

/** A tenant's API key: `Authorization: Bearer sk_live_...`. The key's checksum is checked here, before any call. */
export function apiKey(key: string): Payment {
  const problem = apiKeyProblem(key);
  if (problem) throw new NotaryError(`invalid API key: ${problem}`);
  return { mode: 'api_key', key };
}

/**
 * Several parties share each call: the client signs an MPP envelope per attempt with every party's key. Without
 * `maxCredits` it first asks the service for the call's price (an unpaid attempt answered with the quote).
 */
export function mpp(parties: readonly MppParty[], options: { maxCredits?: number; ttlSeconds?: number } = {}): Payment {
  if (parties.length === 0) throw new NotaryError('MPP needs at least one party');
  return { mode: 'mpp', parties, ...options };
}

/** Pay per call with x402: the payer answers the 402 challenge (a wallet, or a facilitator's settlement receipt). */
export function x402(payer: X402Payer): Payment {
  return { mode: 'x402', payer };
}

export interface NotaryClientOptions {
  /** e.g. `https://search.example.org` (default `NOTARY_URL` where there is an environment, else http://127.0.0.1:8080). */
  baseUrl?: string;
  payment?: Payment;
  /** Ask for a signed receipt on every paid call (`X-Notary-Sign: required`). */
  sign?: boolean;
  /** Per attempt, including reading the body. Default 60 s. */
  timeoutMs?: number;
  /** Retries after the first attempt on 429, 503, 409 idempotency_in_progress, timeouts and connection errors. Default 2. */
  maxRetries?: number;
  /** Backoff base: attempt n waits a random time up to base x 2^n (full jitter). Default 500 ms. */
  retryBaseDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error is thrown. Default 60 s. */
  maxRetryDelayMs?: number;
  fetch?: typeof fetch;
  userAgent?: string;
  /** Injected waiting (tests). */
  sleep?: (ms: number) => Promise<void>;
}

export interface CallOptions {
  /** Reused across retries; default a fresh UUID per call. */
  idempotencyKey?: string;
  /** Overrides the client's `sign`. */
  sign?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  /** Overrides the client's payment for this call. */
  payment?: Payment;
}

export const SDK_VERSION = '0.1.0';

const RETRY_STATUSES = new Set([429, 503]);

function defaultBaseUrl(): string {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.['NOTARY_URL'] ?? 'http://127.0.0.1:8080';
}

async function readProblem(text: string, contentType: string | null): Promise<Problem | null> {
  if (!contentType || !/json/i.test(contentType)) return null;
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as Problem).code === 'string' ? (parsed as Problem) : null;
  } catch {
    return null;
  }
}

function withMeta<T extends object>(body: T, meta: ResultMeta): T & ResultMeta {
  const descriptors: PropertyDescriptorMap = {};
  for (const [key, value] of Object.entries(meta)) descriptors[key] = { value, enumerable: false };
  return Object.defineProperties(body, descriptors) as T & ResultMeta;
}

/**
 * The notary client: typed search and extract over fetch, paid by API key, MPP or x402, with an Idempotency-Key on
 * every paid call (the same one on every retry), retries with jittered backoff that honour Retry-After, per-attempt
 * timeouts, typed errors from the problem's `code`, and offline verification of signed receipts.
 */
export class NotaryClient {
  readonly baseUrl: string;
  private readonly options: NotaryClientOptions;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private jwksCache: { jwks: Jwks; at: number } | null = null;

  constructor(options: NotaryClientOptions = {}) {
    this.options = options;
    this.baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** `POST /v1/search`. */
  async search(request: SearchRequest, options: CallOptions = {}): Promise<SearchResult> {
    // Only the options set are sent: a request of query and depth alone is what older servers accept.
    const { query, depth, ...rest } = request;
    const optional = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined && value !== null && value !== ''));
    return this.paidCall<SearchResponseBody>('/v1/search', { query, depth: depth ?? 1, ...optional }, options);
  }

  /** `POST /v1/extract`. */
  async extract(request: ExtractRequest, options: CallOptions = {}): Promise<ExtractResult> {
    return this.paidCall<ExtractResponseBody>('/v1/extract', { ...request }, options);
  }

  /**
   * `POST /v1/extract` with `urls`: up to 20 pages in one call, each answered in order by its page (`ok: true`) or its
   * problem (`ok: false`); charged only for the pages extracted. Pay with an API key or MPP: x402 settles exactly what
   * it signed, so the server refuses batches of more than one URL paid that way (batch_payment_unsupported).
   */
  async extractBatch(request: ExtractBatchRequest, options: CallOptions = {}): Promise<ExtractBatchResult> {
    return this.paidCall<ExtractBatchResponseBody>('/v1/extract', { ...request }, options);
  }

  /**
   * `POST /v1/crawl`: asks the service to crawl a site into a collection; answered at once (202) with the job, which
   * the service's crawl workers run. Quoted at `max_pages`, charged when it ends for the pages it stored. Pay with an
   * API key or MPP: x402 settles exactly what it signed, so the server refuses it (deferred_payment_unsupported).
   */
  async crawl(request: CrawlRequest, options: CallOptions = {}): Promise<CrawlJobResult> {
    return this.paidCall<CrawlJob>('/v1/crawl', { ...request }, options);
  }

  /**
   * `GET /v1/crawl/{id}`: a job's state and progress; not charged. Read with the payment that ordered the job: its API
   * key, or MPP with the same parties (an envelope for this GET, 0 credits); another payer gets NotFoundError
   * (crawl_job_not_found). x402 payers cannot order jobs, so this refuses x402 payment.
   */
  async crawlJob(id: string, options: CallOptions = {}): Promise<CrawlJob> {
    return this.accountCall<CrawlJob>('GET', `/v1/crawl/${encodeURIComponent(id)}`, options);
  }

  /** `GET /v1/crawl`: the payer's jobs, newest first, 50 a page; not charged. Paid as {@link crawlJob} (API key or MPP). */
  async crawlJobs(cursor?: string, options: CallOptions = {}): Promise<CrawlJobList> {
    return this.accountCall<CrawlJobList>('GET', `/v1/crawl${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, options);
  }

  /**
   * `DELETE /v1/crawl/{id}`: cancels a job; the job is charged for the pages stored by then, the cancel itself is not.
   * Paid as {@link crawlJob} (API key or MPP, the payer that ordered the job).
   */
  async cancelCrawl(id: string, options: CallOptions = {}): Promise<CrawlJob> {
    return this.accountCall<CrawlJob>('DELETE', `/v1/crawl/${encodeURIComponent(id)}`, options);
  }

  /** `POST /v1/map`: one page of the URLs the service knows under a site's folder (1 credit). */
  async map(request: MapRequest, options: CallOptions = {}): Promise<MapResult> {
    return this.paidCall<MapResponseBody>('/v1/map', { ...request }, options);
  }

  /** The service's receipt keys (`/.well-known/jwks.json`), cached for 5 minutes. */
  async jwks(options: { refresh?: boolean } = {}): Promise<Jwks> {
    if (!options.refresh && this.jwksCache && Date.now() - this.jwksCache.at < 300_000) return this.jwksCache.jwks;
    const jwks = await this.getJson<Jwks>('/.well-known/jwks.json');
    this.jwksCache = { jwks, at: Date.now() };
    return jwks;
  }

  /**
   * Verifies a signed result (made with `sign: true`) against the service's JWKS (or `jwks`, a copy you trust):
   * signature, key validity, the response body and the request body the client sent.
   */
  async verifyReceipt(result: SearchResult | ExtractResult | ExtractBatchResult, options: { jwks?: Jwks } = {}): Promise<ReceiptVerification> {
    const jwks = options.jwks ?? (await this.jwks());
    return verifyReceipt(result.raw.body, jwks, { requestBody: result.raw.requestBody });
  }

  /** Proofs of the receipt log (checkpoint, inclusion, consistency), verified with the log's own keys. */
  get log(): LogProofs {
    return checkpointFromLog((path) => this.getText(path));
  }

  /** A GET of the public API, parsed as JSON (errors typed as for paid calls). */
  async getJson<T>(path: string): Promise<T> {
    return JSON.parse(await this.getText(path)) as T;
  }

  async getText(path: string): Promise<string> {
    const { response, text } = await this.send('GET', path, undefined, {}, {});
    if (!response.ok) throw await this.errorOf(response, text, new Uint8Array());
    return text;
  }

  private async paidCall<T extends object>(path: string, body: Record<string, unknown>, options: CallOptions): Promise<T & ResultMeta> {
    const payment = options.payment ?? this.options.payment;
    const requestBody = new TextEncoder().encode(JSON.stringify(body));
    const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID();
    const sign = options.sign ?? this.options.sign ?? false;
    const base: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, application/problem+json',
      'idempotency-key': `"${idempotencyKey}"`,
      ...(sign ? { 'x-notary-sign': 'required' } : {}),
    };
    let credentials: Record<string, string> | null = payment?.mode === 'api_key' ? { authorization: `Bearer ${payment.key}` } : null;
    let mppCredits = payment?.mode === 'mpp' ? payment.maxCredits : undefined;
    let retries = 0;
    let attempts = 0;
    let paymentRounds = 0;
    for (;;) {
      attempts++;
      const headers = { ...base, ...(credentials ?? {}) };
      if (payment?.mode === 'mpp' && mppCredits !== undefined) {
        // A fresh envelope (nonce, times) per attempt; the Idempotency-Key ties the attempts together.
        const { header } = await buildEnvelope({
          method: 'POST',
          url: `${this.baseUrl}${path}`,
          body: requestBody,
          totalCredits: mppCredits,
          parties: payment.parties,
          ...(payment.ttlSeconds ? { ttlSeconds: payment.ttlSeconds } : {}),
        });
        headers['authorization'] = header;
      }
      let exchange: { response: Response; text: string };
      try {
        exchange = await this.send('POST', path, requestBody, headers, options);
      } catch (err) {
        const delay = err instanceof NotaryError ? this.retryDelay(retries, options) : null;
        if (delay === null) throw err;
        await this.sleep(delay);
        retries++;
        continue;
      }
      const { response, text } = exchange;
      if (response.ok) {
        // A crawl job answers before its charge: credits_used is null until it ends (nothing taken yet: 0).
        const parsed = JSON.parse(text) as T & { credits_used: number | null };
        return withMeta(parsed, {
          requestId: response.headers.get('x-request-id') ?? '',
          creditsUsed: parsed.credits_used ?? 0,
          idempotencyKey,
          replayed: response.headers.get('idempotency-replayed') === 'true',
          attempts,
          raw: { status: response.status, headers: response.headers, body: text, requestBody },
        });
      }
      const error = await this.errorOf(response, text, requestBody);
      // Payment rounds: the unpaid attempt's answer carries the quote (MPP) or the challenge (x402).
      if ((error.status === 401 || error.status === 402) && credentials === null && paymentRounds === 0 && payment && payment.mode !== 'api_key') {
        paymentRounds++;
        if (payment.mode === 'mpp' && mppCredits === undefined) {
          const credits = error.problem?.price?.credits;
          if (credits === undefined) throw error;
          mppCredits = credits;
          continue;
        }
        if (payment.mode === 'x402' && error.status === 402) {
          credentials = await payment.payer.pay({ url: `${this.baseUrl}${path}`, method: 'POST', body: requestBody, response: error.raw, problem: error.problem });
          continue;
        }
      }
      const retryable = RETRY_STATUSES.has(error.status) || error.code === 'idempotency_in_progress';
      const delay = retryable ? this.retryDelay(retries, options, response) : null;
      if (delay === null) throw error;
      await this.sleep(delay);
      retries++;
    }
  }

  /**
   * An authenticated call that is not charged (a crawl job's state, its cancellation): the API key's Bearer header,
   * or an MPP envelope signed by every party for this method and URL (empty body, 0 credits), a fresh one per attempt.
   * Retried like paid calls on 429/503 and connection errors (these are safe to repeat); errors typed from the problem.
   */
  private async accountCall<T>(method: 'GET' | 'DELETE', path: string, options: CallOptions): Promise<T> {
    const payment = options.payment ?? this.options.payment;
    if (payment?.mode !== 'api_key' && payment?.mode !== 'mpp') {
      const why = payment?.mode === 'x402' ? 'x402 payers cannot order crawl jobs, so they have none to read or cancel' : 'the service shows a job only to whoever paid it';
      throw new NotaryError(`${method} ${path} needs the credentials that paid for the job: payment: apiKey(...) or mpp([...parties]) (${why})`);
    }
    for (let retries = 0; ; ) {
      const headers = { accept: 'application/json, application/problem+json', authorization: await this.accountAuthorization(payment, method, path) };
      let exchange: { response: Response; text: string };
      try {
        exchange = await this.send(method, path, undefined, headers, options);
      } catch (err) {
        const delay = err instanceof NotaryError ? this.retryDelay(retries, options) : null;
        if (delay === null) throw err;
        await this.sleep(delay);
        retries++;
        continue;
      }
      const { response, text } = exchange;
      if (response.ok) return JSON.parse(text) as T;
      const error = await this.errorOf(response, text, new Uint8Array());
      const delay = RETRY_STATUSES.has(error.status) ? this.retryDelay(retries, options, response) : null;
      if (delay === null) throw error;
      await this.sleep(delay);
      retries++;
    }
  }

  /** The Authorization of one attempt of an uncharged call: the API key, or an envelope for exactly this request. */
  private async accountAuthorization(payment: Extract<Payment, { mode: 'api_key' | 'mpp' }>, method: string, path: string): Promise<string> {
    if (payment.mode === 'api_key') return `Bearer ${payment.key}`;
    const { header } = await buildEnvelope({
      method,
      url: `${this.baseUrl}${path}`,
      body: new Uint8Array(),
      totalCredits: 0,
      parties: payment.parties,
      ...(payment.ttlSeconds ? { ttlSeconds: payment.ttlSeconds } : {}),
    });
    return header;
  }

  /**
   * The wait before retry number `retries`, or null when the call must not be retried (retries spent, caller aborted,
   * or a Retry-After beyond maxRetryDelayMs). Without a Retry-After: jittered exponential backoff. With one: honoured
   * exactly, plus up to 10% so a crowd of clients does not come back in step.
   */
  private retryDelay(retries: number, options: CallOptions, response?: Response): number | null {
    if (retries >= (options.maxRetries ?? this.options.maxRetries ?? 2) || options.signal?.aborted) return null;
    const asked = response ? retryAfterMs(response.headers.get('retry-after')) : null;
    if (asked === null) return this.backoff(retries);
    return asked <= (this.options.maxRetryDelayMs ?? 60_000) ? asked + Math.random() * asked * 0.1 : null;
  }

  private backoff(retry: number): number {
    const base = this.options.retryBaseDelayMs ?? 500;
    return Math.random() * Math.min(30_000, base * 2 ** retry);
  }

  private async errorOf(response: Response, text: string, requestBody: Uint8Array): Promise<NotaryApiError> {
    const raw: RawResponse = { status: response.status, headers: response.headers, body: text, requestBody };
    return errorFor(response.status, await readProblem(text, response.headers.get('content-type')), raw);
  }

  /** One HTTP exchange, body read inside the timeout. Network failures become ConnectionError or TimeoutError. */
  private async send(method: string, path: string, body: Uint8Array | undefined, headers: Record<string, string>, options: CallOptions): Promise<{ response: Response; text: string }> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? 60_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      const response = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers: { 'user-agent': this.options.userAgent ?? `notary-ts/${SDK_VERSION}`, ...headers },
        ...(body ? { body: body as Uint8Array<ArrayBuffer> } : {}),
        signal,
      });
      return { response, text: await response.text() };
    } catch (err) {
      if (options.signal?.aborted) throw err;
      if (timeout.aborted) throw new TimeoutError(`${method} ${path}: no complete answer within ${timeoutMs} ms`, { cause: err });
      throw new ConnectionError(`${method} ${path}: ${err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err)}`, { cause: err });
    }
  }
}
