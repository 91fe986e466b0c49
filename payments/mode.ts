import { NotaryError } from '../core/index.js';
import type { Price } from './pricing.js';
import type { UsageRecord } from './usage.js';

/**
 * What the payments core sees of an HTTP request: plain data, no framework types. Header names are lower case;
 * a header sent more than once keeps every value, so a mode can refuse duplicates of a credential.
 */
export interface PaymentRequest {
  method: string;
  /** The path without the query string, e.g. /v1/search. */
  path: string;
  /** The absolute URL the client addressed (scheme, host, path and query). */
  url: string;
  headers: Readonly<Record<string, readonly string[]>>;
  /** The peer's address, for the limits of calls that present no credentials. */
  clientAddress: string;
  requestId: string;
}

/** The one value of a header that may appear at most once; undefined when absent, 400 duplicate_header when repeated. */
export function singleHeader(request: PaymentRequest, name: string): string | undefined {
  const values = request.headers[name.toLowerCase()];
  if (!values || values.length === 0) return undefined;
  if (values.length > 1) {
    const display = name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase());
    throw new NotaryError('duplicate_header', `The ${display} header was sent ${values.length} times; send it once`, { header: display });
  }
  return values[0];
}

/** A counter of the rate limiter: its key and the tier whose limits apply. */
export interface RateLimitSubject {
  key: string;
  tier: string;
}

/** What a settled call adds to its response. */
export interface Settlement {
  /** Never more than the quote: the gate refuses a settlement that says otherwise. */
  creditsUsed: number;
  /** Extra response headers, e.g. x402's PAYMENT-RESPONSE. */
  headers?: Record<string, string>;
  /** The mode wrote SettleContext.usage with its charge, in one transaction: the gate records nothing more. */
  usageRecorded?: boolean;
}

export interface SettleContext {
  requestId: string;
  /**
   * What to take, when it is less than the quote: the price of the units the call delivered (a batch extraction whose
   * other URLs failed; Pricing.partOf). Absent: the quote. Only modes with `settlesLess` are ever asked for less.
   */
  charge?: Price;
  /** The Idempotency-Key of the call, when it has one: the mode's single-use record of the charge uses it. */
  idempotencyKey: string | null;
  /**
   * The call's usage row (as charged), given when usage is kept in the service's database: a mode whose charge is
   * one transaction of that database may write it there and say so (Settlement.usageRecorded). Otherwise the gate
   * records it after the settlement.
   */
  usage?: UsageRecord;
}

/**
 * A payment held for work that ends after the call that ordered it (a crawl job): the quote is taken or reserved so
 * nothing else can spend it, and the mode settles it once when the work ends (PaymentMode.settleHold). Plain JSON:
 * it is stored with the job and may be settled by another process after a restart.
 */
export interface HeldPayment {
  mode: string;
  /** What the hold covers: the quote's credits. A settlement never charges more. */
  credits: number;
  /** A test call's hold: nothing was taken, and the settlement charges nothing. */
  test?: boolean;
  /** The mode's own record of the hold (who pays, what was taken). */
  record: Readonly<Record<string, unknown>>;
}

export interface HoldContext {
  requestId: string;
  /** The id of the work the hold pays for (the job's id): the hold and its settlement are single-use under it. */
  key: string;
}

export interface HoldSettlement {
  /** What the work is charged: the credits given, or, when the hold was settled before, what that settlement charged. */
  creditsUsed: number;
  /** True when the hold was settled before (a second settlement after a crash): nothing moved now. */
  already: boolean;
}

/**
 * A payment that was verified (and, where the mode can, reserved) for one priced call. Exactly one of settle,
 * release or hold is called.
 */
export interface PaymentAuthorization {
  /**
   * Members the mode adds to the response (e.g. each paying party's share of the price), known before the charge so
   * the response and its receipt can list them; their schema is the plug-in's `responseMembers`.
   */
  members?: Readonly<Record<string, unknown>>;
  /** The members for a charge below the quote (SettleContext.charge), when they depend on the amount; else `members`. */
  membersFor?(charge: Price): Readonly<Record<string, unknown>>;
  /** The mode's responses repeat the result list as `facts` (the interface's name for it in pay-per-call examples). */
  facts?: boolean;
  /** A test call: served as usual, settled for 0 credits, its response marked `test: true`. */
  test?: boolean;
  /** Takes the price, once, after the work succeeded. Throws (402, 502, ...) when it cannot: nothing is served then. */
  settle(context: SettleContext): Promise<Settlement>;
  /** The work failed or the call was abandoned: gives back whatever authorize reserved. Must not throw. */
  release(reason: string): Promise<void>;
  /**
   * For modes that can be paid after the call (PaymentMode.settleHold): takes or reserves the quote now, durably, and
   * returns the record the mode settles later. Throws (402, ...) when it cannot: nothing is held then.
   */
  hold?(context: HoldContext): Promise<HeldPayment>;
}

export interface AuthorizeContext {
  request: PaymentRequest;
  /** The exact request body bytes (MPP binds its digest, receipts hash it). */
  rawBody: Uint8Array;
  price: Price;
}

/** A payer whose credentials were verified; nothing is charged yet. */
export interface AuthenticatedPayer {
  mode: string;
  /** Stable identity of the paying side: the scope of its Idempotency-Keys (a tenant, a wallet, an envelope's parties). */
  payerId: string;
  /** One subject per paying party: each one's limits apply. */
  rateLimits: RateLimitSubject[];
  /** The tenant that pays, when the payer is an account (usage is recorded under it). */
  tenantId?: string;
  /** The API key used, when there is one. */
  keyId?: string;
  /**
   * The ids of the only collections the payer may read (core/collections.ts); absent: every collection. A mode whose
   * credentials carry no such limit leaves it out; the gate refuses a call naming another collection, before any charge.
   */
  collections?: readonly string[];
  /**
   * An idempotency key the credential itself carries (x402's payment-identifier extension), used in the payer's scope
   * when the request has no Idempotency-Key header: a retry replays the stored response without a second charge.
   */
  idempotencyKey?: string;
  /** Verifies that the payer can pay this price (and reserves it where the mode can); throws 402-class errors. */
  authorize(context: AuthorizeContext): Promise<PaymentAuthorization>;
}

/** Credentials found in a request's headers, not yet checked against any store. */
export interface PaymentCredential {
  mode: string;
  /** Verifies the credentials (database lookups, signatures); throws 401-class errors for bad ones. */
  authenticate(): Promise<AuthenticatedPayer>;
}

export interface ChallengeContext {
  request: PaymentRequest;
  /** The quote, when the body was parsed already; a mode whose challenge needs it returns null without it. */
  price?: Price;
  /** The exact body bytes, when read (x402 binds its challenge to their digest). */
  rawBody?: Uint8Array;
  /** The error that led to the challenge (a bad credential of this mode), when there is one. */
  error?: NotaryError;
}

/** How a mode asks for payment in a 401 or 402 answer. */
export interface PaymentChallenge {
  /** 401 for modes that authenticate an account (API key), 402 for modes that take payment with the call (x402). */
  status: 401 | 402;
  /** One WWW-Authenticate challenge: scheme and parameters. */
  wwwAuthenticate: string;
  /** What to send, for the problem's detail, e.g. "Authorization: Bearer <API key>". */
  hint?: string;
  headers?: Record<string, string>;
  /** Members of the problem body, under the mode's name. */
  body?: Record<string, unknown>;
}

/**
 * One way to pay for a call. Every mode implements this; a route never names one. Adding a mode is a folder in
 * payments/modes (its NotaryPlugin, payments/plugin.ts) and one registration line in payments/plugins.ts.
 */
export interface PaymentMode {
  readonly name: string;
  /** How the OpenAPI document describes the mode's credentials: its security scheme, under `key`. */
  readonly securityScheme?: { key: string; scheme: Readonly<Record<string, unknown>> };
  /**
   * Whether the mode can settle less than it authorized (SettleContext.charge): a batch is quoted at its maximum and
   * charged for what it delivered, so only such modes are offered and accepted for quotes of more than one unit.
   * A mode whose payer signs one exact amount (x402's `exact` scheme) cannot.
   */
  readonly settlesLess?: boolean;
  /**
   * Cheap recognition from the headers alone (no database, no signature work): null when the request is not in this
   * mode's scheme; a 400/401 NotaryError when it is but the credentials are malformed.
   */
  identify(request: PaymentRequest): PaymentCredential | null;
  /** The mode's challenge for a 401/402 answer; null when it has none in this context. */
  challenge(context: ChallengeContext): Promise<PaymentChallenge | null>;
  /**
   * For modes whose settlement can end with an unknown outcome (a settle that timed out): decides the undecided ones
   * from the source of truth (the chain), charging none twice. Run periodically by `notary serve`.
   */
  reconcile?(): Promise<ReconcileSummary>;
  /**
   * Settles a hold (PaymentAuthorization.hold) once, for `credits` of it (0: nothing, all of it given back; never more
   * than held): every party's part in one transaction, single-use under `key`, so a second settlement after a crash
   * moves nothing and reports the first. A mode without it cannot pay work that is charged when it ends.
   */
  settleHold?(held: HeldPayment, settlement: { key: string; credits: number; reason: string; requestId: string | null }): Promise<HoldSettlement>;
}

export interface ReconcileSummary {
  /** Undecided payments looked at. */
  checked: number;
  /** Found settled (recorded in the ledger now). */
  settled: number;
  /** Found never charged and no longer chargeable: released. */
  released: number;
  /** Still undecided (e.g. the authorization is valid and not used yet). */
  pending: number;
  /** What could not be asked (a chain RPC that did not answer in time): reconciliation stopped there, to try again later. */
  unreachable?: string[];
}
