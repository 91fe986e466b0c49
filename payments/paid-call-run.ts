import { NotaryError } from '../core/index.js';
import type { AuthenticatedPayer, HeldPayment, PaymentAuthorization, Settlement } from './mode.js';
import type { Admission, PaidCallGateOptions, PreparedExtension, ResponseExtension, ResponsePresenter } from './paid-call.js';
import type { Price } from './pricing.js';
import type { IdempotencyLease, StoredResponse } from './stores/idempotency.js';
import type { UsageRecord } from './usage.js';

/** What a paid call uses of its gate. */
export interface GateContext {
  options: PaidCallGateOptions;
  extensions: readonly ResponseExtension[];
  now: () => number;
  /** A 402 from a failed charge carries every mode's challenge too (nothing was charged: the caller may pay anew). */
  withChallenges: (err: NotaryError) => Promise<NotaryError>;
}

/** One authorized call: runs the work and charges for it exactly once, or releases the payment. */
export class PaidCall {
  private done = false;
  /** What the call is charged: the quote until the work says it delivered fewer units. */
  private charge: Price;

  constructor(
    private readonly gate: GateContext,
    private readonly admission: Admission,
    private readonly rawBody: Uint8Array,
    private readonly price: Price,
    private readonly payer: AuthenticatedPayer,
    private readonly authorization: PaymentAuthorization,
    private readonly lease: IdempotencyLease | null,
  ) {
    this.charge = price;
  }

  /**
   * Work, then the response body, then the extensions' members (before the charge, so a failure there costs
   * nothing), then the charge, then the record for replays. Any failure before the charge releases the payment and
   * frees the Idempotency-Key; the result of a call whose charge failed is never served.
   */
  async run<R>(work: () => Promise<R>, presenter: ResponsePresenter<R>): Promise<StoredResponse> {
    if (this.done) throw new Error('a paid call runs once');
    this.done = true;
    const { request } = this.admission;
    const options = this.gate.options;
    let body: Record<string, unknown>;
    let prepared: PreparedExtension[];
    try {
      const result = await work();
      this.charge = this.chargeFor(presenter.units ? presenter.units(result) : this.price.units);
      const facts = this.authorization.facts === true || this.gate.extensions.some((e) => e.wantsFacts?.(request) === true);
      const members = this.charge === this.price ? this.authorization.members : (this.authorization.membersFor?.(this.charge) ?? this.authorization.members);
      body = presenter.body(result, {
        creditsUsed: this.test ? 0 : this.charge.credits,
        rateLimit: this.admission.rateLimit.decision,
        members,
        facts,
        test: this.test,
      });
      prepared = [];
      for (const extension of this.gate.extensions) {
        // A test call's receipt (and anything else layered on) states what it consumed: nothing.
        const ready = await extension.prepare({ request, rawBody: this.rawBody, price: this.chargedPrice, payer: this.payer, body });
        if (ready) prepared.push(ready);
      }
    } catch (err) {
      await this.release('the work failed');
      throw err;
    }
    // The rule: no charge without a deliverable answer. A caller that hangs up after this point is charged and gets
    // the answer again by retrying with its Idempotency-Key.
    if (presenter.deliverable && !presenter.deliverable()) {
      await this.release('the caller closed the connection before the answer was ready');
      throw new NotaryError('client_closed_request', 'The connection was closed before the answer was ready; nothing was charged');
    }
    let settlement: Settlement;
    const charged = this.test ? 0 : this.charge.credits;
    // Usage kept in the service's database goes to the mode with the charge: one transaction for both where it can.
    const usage = this.gate.options.usage?.inServiceDatabase === true ? this.usageRecord(charged) : undefined;
    try {
      settlement = await this.authorization.settle({
        requestId: request.requestId,
        idempotencyKey: this.lease?.key ?? null,
        ...(this.charge === this.price ? {} : { charge: this.charge }),
        ...(usage ? { usage } : {}),
      });
    } catch (err) {
      await this.abandon();
      if (err instanceof NotaryError && err.status === 402) throw await this.gate.withChallenges(err);
      throw err;
    }
    if (settlement.creditsUsed !== charged) {
      options.onError?.(`payment mode ${this.payer.mode} settled ${settlement.creditsUsed} credits for a quote of ${charged}`, null);
    }
    if (!(usage && settlement.usageRecorded === true)) await this.recordUsage(settlement.creditsUsed);
    for (const ready of prepared) {
      Object.assign(body, ready.members);
      try {
        await ready.commit();
      } catch (err) {
        options.onError?.('a response extension failed after the charge', err);
      }
    }
    const response: StoredResponse = {
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8', ...this.admission.rateLimitHeaders, ...(settlement.headers ?? {}) },
      body: presenter.serialize(body),
    };
    await this.keepForReplays(response);
    return response;
  }

  /** Stores the answer for Idempotency-Key replays; a failure here is reported, never undoes the charge. */
  private async keepForReplays(response: StoredResponse): Promise<void> {
    if (!this.lease) return;
    const options = this.gate.options;
    try {
      await options.idempotency.complete(this.lease, response, this.gate.now() + options.idempotencyTtlMs);
    } catch (err) {
      options.onError?.('the response could not be stored for Idempotency-Key replays', err);
    }
  }

  /**
   * For work charged when it ends (a crawl job): holds the quote under `key` (the work's id) instead of charging it,
   * then `create` records the work with the hold and makes the answer. A failure of `create` gives the hold back in
   * full; the answer is kept for Idempotency-Key replays like a charged call's.
   */
  async hold(key: string, create: (held: HeldPayment) => Promise<StoredResponse>): Promise<StoredResponse> {
    if (this.done) throw new Error('a paid call runs once');
    this.done = true;
    const { request } = this.admission;
    const options = this.gate.options;
    const mode = options.modes.find((m) => m.name === this.payer.mode);
    const hold = this.authorization.hold?.bind(this.authorization);
    if (!hold || !mode?.settleHold) {
      await this.release('the mode cannot hold a payment');
      throw new NotaryError('deferred_payment_unsupported', `${this.payer.mode} cannot hold a payment to settle when the work ends`, { mode: this.payer.mode });
    }
    let held: HeldPayment;
    try {
      held = await hold({ requestId: request.requestId, key });
    } catch (err) {
      await this.abandon();
      if (err instanceof NotaryError && err.status === 402) throw await this.gate.withChallenges(err);
      throw err;
    }
    let response: StoredResponse;
    try {
      response = await create(held);
    } catch (err) {
      try {
        await mode.settleHold(held, { key, credits: 0, reason: `${this.price.description}: not started`, requestId: request.requestId });
      } catch (releaseErr) {
        options.onError?.(`giving back the ${this.payer.mode} hold of ${key} failed`, releaseErr);
      }
      await this.abandon();
      throw err;
    }
    await this.keepForReplays(response);
    return response;
  }

  /**
   * The price of what the work delivered: the quote, or for a call quoted per unit (a batch) the units that
   * succeeded. A count outside 1..quoted is a defect of the route: the call fails and nothing is charged.
   */
  private chargeFor(units: number): Price {
    if (units === this.price.units) return this.price;
    if (!Number.isSafeInteger(units) || units < 1 || units > this.price.units) throw new Error(`a call quoted for ${this.price.units} units delivered ${units}`);
    return this.admission.pricing.partOf(this.price, units);
  }

  private get test(): boolean {
    return this.authorization.test === true;
  }

  /** The quote, or for a test call the same quote at zero. */
  private get chargedPrice(): Price {
    if (!this.test) return this.charge;
    return { ...this.charge, credits: 0, amount: { ...this.charge.amount, atomic: 0n, decimal: '0' } };
  }

  private async recordUsage(credits: number): Promise<void> {
    const usage = this.gate.options.usage;
    if (!usage) return;
    try {
      await usage.record(this.usageRecord(credits));
    } catch (err) {
      this.gate.options.onError?.('the call could not be recorded for usage', err);
    }
  }

  /** The usage row of this call, charged `credits`. */
  private usageRecord(credits: number): UsageRecord {
    const { request: priced, amount } = this.charge;
    return {
      at: new Date(this.gate.now()).toISOString(),
      tenantId: this.payer.tenantId ?? null,
      keyId: this.payer.keyId ?? null,
      payer: this.payer.payerId,
      mode: this.payer.mode,
      environment: this.test ? 'test' : 'live',
      operation: priced.operation,
      depth: priced.operation === 'search' ? priced.depth : null,
      render: priced.operation === 'extract' ? priced.render : null,
      credits,
      amount: this.test ? '0' : amount.atomic.toString(),
      asset: amount.asset,
      requestId: this.admission.request.requestId,
    };
  }

  private async release(reason: string): Promise<void> {
    try {
      await this.authorization.release(reason);
    } catch (err) {
      this.gate.options.onError?.(`releasing the ${this.payer.mode} payment failed`, err);
    }
    await this.abandon();
  }

  private async abandon(): Promise<void> {
    if (!this.lease) return;
    try {
      await this.gate.options.idempotency.abandon(this.lease);
    } catch (err) {
      this.gate.options.onError?.('freeing the Idempotency-Key failed', err);
    }
  }
}
