import { createHash } from 'node:crypto';
import { NotaryError } from '../core/index.js';
import {
  singleHeader,
  type AuthenticatedPayer,
  type PaymentAuthorization,
  type PaymentChallenge,
  type PaymentCredential,
  type PaymentMode,
  type PaymentRequest,
} from './mode.js';
import { effectiveTier, type CatalogSnapshot, type CatalogSource } from './catalog.js';
import type { Price, Pricing } from './pricing.js';
import { rateLimitHeaders, type RateLimitDecision, type RateLimitStore } from './rate-limit.js';
import type { UsageRecorder } from './usage.js';
import type { IdempotencyLease, IdempotencyStore, StoredResponse } from './stores/idempotency.js';
import { PaidCall, type GateContext } from './paid-call-run.js';
import { checkCollectionAccess, type CollectionRead } from './collection-access.js';

export { PaidCall } from './paid-call-run.js';

/** Whether a mode can pay work charged when it ends: it holds a payment and settles part of it later. */
function canDefer(mode: PaymentMode): boolean {
  return mode.settlesLess === true && mode.settleHold !== undefined;
}

/** Header a replayed response carries. */
export const REPLAY_HEADER = 'Idempotency-Replayed';

/**
 * Something layered on every paid call whatever its mode (signed receipts): it may refuse a request's headers before
 * any work, and adds members to the response of a call that is about to be charged.
 */
export interface ResponseExtension {
  /** Header checks before any work; throws a 400 NotaryError. */
  check?(request: PaymentRequest): void;
  /** Whether this request's response lists `facts` beside the results. */
  wantsFacts?(request: PaymentRequest): boolean;
  /**
   * Runs with the final response body before the charge; throwing cancels the call (nothing is charged). Returns the
   * members to add, and a commit that runs once the charge went through.
   */
  prepare(context: ExtensionContext): Promise<PreparedExtension | null>;
}

export interface ExtensionContext {
  request: PaymentRequest;
  rawBody: Uint8Array;
  price: Price;
  payer: AuthenticatedPayer;
  /** The response body as it will be sent, without the extension's members. */
  body: Readonly<Record<string, unknown>>;
}

export interface PreparedExtension {
  members: Record<string, unknown>;
  /** After the charge (e.g. appending the receipt to the log). A failure is reported, the paid response still served. */
  commit(): Promise<void>;
}

export interface PaidCallGateOptions {
  modes: readonly PaymentMode[];
  rateLimits: RateLimitStore;
  /** The prices and tiers in force (operators edit them while the service runs); each call uses one snapshot. */
  catalog: CatalogSource;
  idempotency: IdempotencyStore;
  /** Records every served call (usage charts, revenue); a failure to record is reported, never fails the call. */
  usage?: UsageRecorder;
  /** How long the first response to an Idempotency-Key is replayed. */
  idempotencyTtlMs: number;
  /** How long a running call blocks retries with its key. */
  idempotencyLeaseMs: number;
  extensions?: readonly ResponseExtension[];
  /** Reports failures that cannot change the answer any more (a commit after the charge). */
  onError?: (message: string, err: unknown) => void;
  now?: () => number;
}

/** What phase 1 (the headers, before the body is read) established. */
export interface Admission {
  request: PaymentRequest;
  /** The price list this call is quoted from: the one in force when it was admitted. */
  pricing: Pricing;
  /** Null when the request presented no credentials: it gets the challenges once priced. */
  payer: AuthenticatedPayer | null;
  /** The limit shown in the response: the tightest of the payer's subjects. */
  rateLimit: { tier: string; decision: RateLimitDecision };
  rateLimitHeaders: Record<string, string>;
  idempotencyKey: string | null;
}

/** The response members every paid call carries, before the route's own. */
export interface PaidResponseContext {
  creditsUsed: number;
  rateLimit: RateLimitDecision;
  /** The mode's members (PaymentAuthorization.members). */
  members: Readonly<Record<string, unknown>> | undefined;
  facts: boolean;
  /** A test call (sk_test_ key): served as usual, nothing charged. */
  test: boolean;
}

/** How the HTTP adapter turns a result into the body and the exact bytes that are sent (and replayed). */
export interface ResponsePresenter<R> {
  body(result: R, context: PaidResponseContext): Record<string, unknown>;
  serialize(body: Record<string, unknown>): string;
  /**
   * Whether the answer can still reach the caller (its connection is open and will carry this answer). Asked once
   * the work is done, just before the charge: a call whose caller is gone is released, not charged.
   */
  deliverable?(): boolean;
  /** How many of the quoted units the result delivered (a batch's URLs that succeeded); absent: all of them. */
  units?(result: R): number;
}

export type Begun = { kind: 'replay'; response: StoredResponse } | { kind: 'call'; call: PaidCall };

const IDEMPOTENCY_KEY = /^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/;

/**
 * The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header): a structured-field string, e.g.
 * `"8e03978e-40d5-43e8-bc93-6894a57f9324"`; a bare token is accepted too. Visible ASCII, 1 to 255 characters.
 */
export function parseIdempotencyKey(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const trimmed = raw.trim();
  const value = trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  if (!IDEMPOTENCY_KEY.test(value)) {
    throw new NotaryError(
      'invalid_idempotency_key',
      'Idempotency-Key must be 1 to 255 visible ASCII characters without quotes or backslashes inside, e.g. "8e03978e-40d5-43e8-bc93-6894a57f9324"',
    );
  }
  return value;
}

/** Digest of what makes two requests "the same" for an Idempotency-Key: method, path and the exact body bytes. */
export function requestFingerprint(request: PaymentRequest, rawBody: Uint8Array): string {
  return createHash('sha256').update(`${request.method} ${request.path}\n`).update(rawBody).digest('hex');
}

/**
 * The paid-call path shared by every route and every payment mode, with no HTTP framework inside:
 * phase 1 `admit` (identify from headers, authenticate, rate limit), phase 2 `begin` (challenge, Idempotency-Key,
 * authorize the quoted price), then `PaidCall.run` (work, charge once on success, release on failure, record the
 * response for replays).
 */
export class PaidCallGate {
  private readonly extensions: readonly ResponseExtension[];
  private readonly now: () => number;

  constructor(private readonly options: PaidCallGateOptions) {
    if (options.modes.length === 0) throw new NotaryError('invalid_config', 'no payment mode is enabled');
    this.extensions = options.extensions ?? [];
    this.now = options.now ?? (() => Date.now());
  }

  get modes(): readonly PaymentMode[] {
    return this.options.modes;
  }

  /** Phase 1, from the headers alone: which mode, who pays, whether the payer is within its limits. */
  async admit(request: PaymentRequest): Promise<Admission> {
    const idempotencyKey = parseIdempotencyKey(singleHeader(request, 'idempotency-key'));
    for (const extension of this.extensions) extension.check?.(request);
    const found: Array<{ mode: PaymentMode; credential: PaymentCredential }> = [];
    for (const mode of this.options.modes) {
      const credential = await this.withChallenge(mode, request, () => Promise.resolve(mode.identify(request)));
      if (credential) found.push({ mode, credential });
    }
    if (found.length > 1) {
      throw new NotaryError('ambiguous_credentials', `Credentials of ${found.map((f) => f.mode.name).join(' and ')} were sent; pay with one mode per call`, {
        modes: found.map((f) => f.mode.name),
      });
    }
    const chosen = found[0];
    const payer = chosen ? await this.withChallenge(chosen.mode, request, () => chosen.credential.authenticate()) : null;
    const catalog: CatalogSnapshot = await this.options.catalog.current();
    const subjects = payer ? payer.rateLimits : [{ key: `ip:${request.clientAddress}`, tier: catalog.anonymousTier }];
    if (subjects.length === 0) throw new Error(`payment mode ${payer?.mode ?? '?'} named no rate-limit subject`);
    let shown: { tier: string; decision: RateLimitDecision } | undefined;
    for (const subject of subjects) {
      const { name: tierName, settings: tier } = effectiveTier(catalog, subject.tier);
      const decision = await this.options.rateLimits.consume(subject.key, tier);
      if (!decision.allowed) {
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
        throw new NotaryError(
          'rate_limited',
          `Rate limit of the "${tierName}" tier reached; retry in ${seconds} s`,
          { retry_after_s: seconds, retry_after_ms: decision.retryAfterMs },
          { ...rateLimitHeaders(tierName, decision), 'Retry-After': String(seconds) },
        );
      }
      if (!shown || decision.remaining < shown.decision.remaining) shown = { tier: tierName, decision };
    }
    if (!shown) throw new Error('no rate-limit decision');
    return { request, pricing: catalog.pricing, payer, rateLimit: shown, rateLimitHeaders: rateLimitHeaders(shown.tier, shown.decision), idempotencyKey };
  }

  /**
   * Phase 2, once the body is validated and priced: the challenges for a call without credentials, a refusal when the
   * call reads a collection the payer may not (`reads`), a replay for a retried Idempotency-Key, or an authorized call
   * ready to run.
   */
  async begin(
    admission: Admission,
    rawBody: Uint8Array,
    price: Price,
    reads?: CollectionRead,
    options: {
      deferred?: boolean;
      /** The route's own checks (limits, addresses), run once a retried Idempotency-Key is known not to be a replay and before anything is authorized. */
      check?: (payer: AuthenticatedPayer) => Promise<void>;
    } = {},
  ): Promise<Begun> {
    const { request, payer } = admission;
    const deferred = options.deferred === true;
    if (deferred) this.checkDeferred(payer, price);
    else this.checkPartial(payer, price);
    if (!payer) throw await this.challengeError(request, price, rawBody, deferred);
    if (reads) checkCollectionAccess(payer, reads);
    const idempotencyKey = admission.idempotencyKey ?? payer.idempotencyKey ?? null;
    let lease: IdempotencyLease | null = null;
    if (idempotencyKey !== null) {
      const scope = payer.payerId;
      const begun = await this.options.idempotency.begin({
        scope,
        key: idempotencyKey,
        fingerprint: requestFingerprint(request, rawBody),
        requestId: request.requestId,
        now: this.now(),
        leaseMs: this.options.idempotencyLeaseMs,
      });
      switch (begun.state) {
        case 'replay':
          return { kind: 'replay', response: begun.response };
        case 'in_progress':
          throw new NotaryError('idempotency_in_progress', 'A request with this Idempotency-Key is still running; retry shortly to get its response', {
            retry_after_s: 1,
          }, { 'Retry-After': '1' });
        case 'mismatch':
          throw new NotaryError('idempotency_key_reused', 'This Idempotency-Key was used for a different request (method, path or body); use a new key');
        case 'started':
          lease = { scope, key: idempotencyKey, lease: begun.lease };
      }
    }
    let authorization: PaymentAuthorization;
    try {
      await options.check?.(payer);
      authorization = await payer.authorize({ request, rawBody, price });
    } catch (err) {
      if (lease) await this.options.idempotency.abandon(lease);
      if (err instanceof NotaryError && err.status === 402) throw await this.withAllChallenges(err, request, price, rawBody, deferred);
      throw err;
    }
    const context: GateContext = {
      options: this.options,
      extensions: this.extensions,
      now: this.now,
      withChallenges: (err) => this.withAllChallenges(err, request, price, rawBody, deferred),
    };
    return { kind: 'call', call: new PaidCall(context, admission, rawBody, price, payer, authorization, lease) };
  }

  /**
   * A quote of several units (a batch) is charged for the units delivered: only modes that can settle less than they
   * authorized may pay it. Refused before any work or reservation, naming the modes that can and the one-unit call.
   */
  private checkPartial(payer: AuthenticatedPayer | null, price: Price): void {
    if (price.units <= 1) return;
    const able = this.options.modes.filter((mode) => mode.settlesLess === true).map((mode) => mode.name);
    const mode = payer ? this.options.modes.find((m) => m.name === payer.mode) : undefined;
    if (payer ? mode?.settlesLess === true : able.length > 0) return;
    const who = payer ? `${payer.mode} settles exactly the amount the payer authorized` : `no payment mode of this service (${this.options.modes.map((m) => m.name).join(', ')}) can settle less than it authorized`;
    const alternatives = [
      'send the URLs one per call with "url" (or "urls" holding one URL)',
      ...(able.length > 0 ? [`pay the batch with ${able.join(' or ')}`] : []),
    ];
    throw new NotaryError(
      'batch_payment_unsupported',
      `This call is quoted for ${price.units} URLs and charged only for those that succeed, but ${who}: ${alternatives.join(', or ')}`,
      { quoted_units: price.units, ...(payer ? { mode: payer.mode } : {}), partial_settlement_modes: able },
    );
  }

  /**
   * Work charged when it ends (a crawl job, charged for the pages it stored) is held at the quote and settled later,
   * possibly by another process: only modes that can hold a payment and settle less may pay it. Refused before any
   * work or reservation, naming the modes that can.
   */
  checkDeferred(payer: AuthenticatedPayer | null, price: Price): void {
    const able = this.options.modes.filter(canDefer).map((mode) => mode.name);
    const mode = payer ? this.options.modes.find((m) => m.name === payer.mode) : undefined;
    if (payer ? mode !== undefined && canDefer(mode) : able.length > 0) return;
    const who = payer ? `${payer.mode} settles exactly the amount the payer authorized, with the call` : `no payment mode of this service (${this.options.modes.map((m) => m.name).join(', ')}) can hold a payment and settle it later`;
    throw new NotaryError(
      'deferred_payment_unsupported',
      `${price.description} is quoted at its maximum (${price.credits} credits) and charged when it ends for what it did, but ${who}` +
        (able.length > 0 ? `: pay it with ${able.join(' or ')}` : ''),
      { quoted_credits: price.credits, ...(payer ? { mode: payer.mode } : {}), deferred_payment_modes: able },
    );
  }

  /** The challenges of every mode for a call without credentials (those of modes that can pay it when deferred). */
  async challengeFor(admission: Admission, price: Price, deferred: boolean): Promise<NotaryError> {
    return this.challengeError(admission.request, price, new Uint8Array(), deferred);
  }

  private async withChallenge<T>(mode: PaymentMode, request: PaymentRequest, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof NotaryError) || err.status !== 401 || err.headers['WWW-Authenticate']) throw err;
      const challenge = await mode.challenge({ request, error: err });
      return Promise.reject(challenge ? new NotaryError(err.code, err.message, err.extra, { ...err.headers, 'WWW-Authenticate': challenge.wwwAuthenticate }) : err);
    }
  }

  private async challenges(request: PaymentRequest, price: Price, rawBody: Uint8Array, error?: NotaryError, deferred = false): Promise<Array<{ mode: string; challenge: PaymentChallenge }>> {
    const out: Array<{ mode: string; challenge: PaymentChallenge }> = [];
    for (const mode of this.options.modes) {
      if (deferred && !canDefer(mode)) continue;
      // A mode that cannot settle less than it authorized is not offered for a quote of several units.
      if (price.units > 1 && mode.settlesLess !== true) continue;
      const challenge = await mode.challenge({ request, price, rawBody, ...(error ? { error } : {}) });
      if (challenge) out.push({ mode: mode.name, challenge });
    }
    return out;
  }

  private async challengeError(request: PaymentRequest, price: Price, rawBody: Uint8Array, deferred = false): Promise<NotaryError> {
    const all = await this.challenges(request, price, rawBody, undefined, deferred);
    const payable = all.some((c) => c.challenge.status === 402);
    const modes = all.map((c) => c.mode);
    const detail = payable
      ? `This call costs ${price.credits} credits (${price.amount.decimal} ${price.amount.asset}): pay with one of ${modes.join(', ')}`
      : `Send ${all.map((c) => c.challenge.hint).filter((hint) => hint !== undefined).join(', or ') || 'credentials'}`;
    return this.attach(new NotaryError(payable ? 'payment_required' : 'unauthenticated', detail, {}), all, price);
  }

  private async withAllChallenges(err: NotaryError, request: PaymentRequest, price: Price, rawBody: Uint8Array, deferred = false): Promise<NotaryError> {
    return this.attach(err, await this.challenges(request, price, rawBody, err, deferred), price);
  }

  private attach(err: NotaryError, all: Array<{ mode: string; challenge: PaymentChallenge }>, price: Price): NotaryError {
    const headers: Record<string, string | string[]> = { ...err.headers };
    const challenges = all.map((c) => c.challenge.wwwAuthenticate);
    const [only] = challenges;
    if (only !== undefined) headers['WWW-Authenticate'] = challenges.length === 1 ? only : challenges;
    for (const { challenge } of all) Object.assign(headers, challenge.headers ?? {});
    const extra: Record<string, unknown> = {
      ...err.extra,
      price: { credits: price.credits, amount: price.amount.decimal, asset: price.amount.asset },
    };
    const members = all.filter((c) => c.challenge.body);
    if (members.length > 0) extra['challenges'] = Object.fromEntries(members.map((c) => [c.mode, c.challenge.body]));
    return new NotaryError(err.code, err.message, extra, headers);
  }
}
