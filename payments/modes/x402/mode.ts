import { randomUUID } from 'node:crypto';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { declarePaymentIdentifierExtension, extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { NotaryError } from '../../../core/index.js';
import {
  singleHeader,
  type AuthenticatedPayer,
  type PaymentChallenge,
  type PaymentCredential,
  type PaymentMode,
  type PaymentRequest,
  type ReconcileSummary,
} from '../../mode.js';
import type { Price } from '../../pricing.js';
import type { X402Settings } from './config.js';
import { lower, X402_MODE, X402Context, type X402ModeOptions } from './context.js';
import { parsePaymentSignature, type SignedPayment } from './payload.js';
import { decodeReceipt, verifyReceiptSignature, type SettlementReceipt } from './receipt.js';
import { authorizeReceipt } from './receipt-flow.js';
import { reconcileRow } from './settle.js';
import { authorizeSignature, signer } from './signature-flow.js';
import './errors.js'; // registers the x402_* error codes this file throws

export { CHALLENGE_EXTRA, X402_MODE, type FacilitatorApi, type X402ModeOptions } from './context.js';

export type X402Config = X402Settings;

/** The OpenAPI security scheme of x402 payments. */
export const X402_SECURITY_SCHEME = {
  key: 'x402',
  scheme: {
    type: 'apiKey',
    in: 'header',
    name: 'PAYMENT-SIGNATURE',
    description:
      'Pay per call on an EVM chain: the x402 v2 standard (`PAYMENT-SIGNATURE`, base64 JSON of the signed payment; the 402 carries ' +
      '`PAYMENT-REQUIRED`) or the interface\'s flow (`X-402-Receipt`: a facilitator\'s signed settlement receipt for the challenge in ' +
      '`WWW-Authenticate: x402 ...`).',
  },
} as const;

type Credential =
  | { flow: 'signature'; signed: SignedPayment }
  | { flow: 'receipt'; receipt: SettlementReceipt };

/**
 * x402 pay-per-call on an EVM chain, in both wire formats on the same endpoints:
 *
 * - the open x402 v2 standard: PAYMENT-REQUIRED (the challenge) and PAYMENT-SIGNATURE (an `exact` EIP-3009
 *   authorization), verified through the facilitator before the work, settled only after the work succeeded,
 *   answered with PAYMENT-RESPONSE;
 * - the interface's own: `WWW-Authenticate: x402 amount=… chain=… receiver=…`, the caller settles first through a
 *   facilitator and repeats the request with `X-402-Receipt`, a settlement receipt signed by a facilitator key the
 *   operator trusts, checked offline.
 *
 * Money safety lives in x402_payments: one row per payment and per challenge (unique columns), held while the work
 * runs, deleted if it fails (nothing was charged, the payment can be retried), settled with its ledger row in one
 * transaction, or recorded as outcome-unknown when a settle is not answered, to be decided from the chain.
 */
export class X402Mode implements PaymentMode {
  readonly name = X402_MODE;
  readonly securityScheme = X402_SECURITY_SCHEME;
  private readonly ctx: X402Context;

  constructor(options: X402ModeOptions) {
    this.ctx = new X402Context(options);
  }

  identify(request: PaymentRequest): PaymentCredential | null {
    const signature = singleHeader(request, 'payment-signature');
    const receipt = singleHeader(request, 'x-402-receipt');
    if (singleHeader(request, 'x-payment') !== undefined) {
      throw new NotaryError('x402_unsupported', 'X-PAYMENT (x402 v1) is not accepted; this server speaks x402 v2: send PAYMENT-SIGNATURE');
    }
    if (signature === undefined && receipt === undefined) return null;
    if (signature !== undefined && receipt !== undefined) {
      throw new NotaryError('ambiguous_credentials', 'Both PAYMENT-SIGNATURE and X-402-Receipt were sent; pay with one', { modes: [X402_MODE] });
    }
    const credential: Credential =
      signature !== undefined ? { flow: 'signature', signed: parsePaymentSignature(signature) } : { flow: 'receipt', receipt: decodeReceipt(receipt ?? '') };
    return { mode: X402_MODE, authenticate: () => this.authenticate(request, credential) };
  }

  async challenge({ request, price, rawBody, error }: { request: PaymentRequest; price?: Price; rawBody?: Uint8Array; error?: NotaryError }): Promise<PaymentChallenge | null> {
    if (!price || !rawBody) return null;
    const issuer = await this.ctx.challenges();
    const { nonce, expires } = issuer.issue(this.ctx.binding(request, rawBody, price), this.ctx.now());
    const requirements = this.ctx.requirements(price, nonce);
    const paymentRequired: PaymentRequired = {
      x402Version: 2,
      error: error?.message ?? 'Payment required: send PAYMENT-SIGNATURE (x402 v2) or X-402-Receipt',
      resource: { url: request.url, description: `notary ${price.description}`, mimeType: 'application/json' },
      accepts: [requirements],
      extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) },
    };
    const chain = `"${this.ctx.network}"`;
    return {
      status: 402,
      wwwAuthenticate: `x402 amount=${price.amount.decimal}, chain=${chain}, receiver=${this.ctx.payTo}, asset=${this.ctx.asset}, nonce=${nonce}, expires=${expires}`,
      // A challenge is single-use: no cache may keep it.
      headers: { 'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired), 'Cache-Control': 'no-store' },
      body: {
        amount: price.amount.decimal,
        amount_atomic: price.amount.atomic.toString(),
        currency: price.amount.asset,
        chain: this.ctx.network,
        receiver: this.ctx.payTo,
        asset: this.ctx.asset,
        nonce,
        expires,
        facilitator: this.ctx.options.config.facilitator_url ?? null,
        payment_required: paymentRequired,
      },
    };
  }

  /** Decides the payments whose settlement outcome is unknown (and settles whose process died) from the chain. */
  async reconcile(): Promise<ReconcileSummary> {
    const summary: ReconcileSummary = { checked: 0, settled: 0, released: 0, pending: 0 };
    const rows = await this.ctx.options.payments.undecided(new Date(this.ctx.now()).toISOString(), 100);
    for (const row of rows) {
      summary.checked++;
      let unreadable: string | undefined;
      const outcome = await reconcileRow(this.ctx, row, (why) => (unreadable = why));
      if (outcome === 'settled') summary.settled++;
      else if (outcome === 'released') summary.released++;
      else if (outcome === 'pending') summary.pending++;
      // A chain that does not answer one question will not answer the next: the rest waits for the next round.
      if (unreadable !== undefined) {
        summary.unreachable = [`x402: ${unreadable}; ${rows.length - summary.checked} more undecided payments not checked`];
        break;
      }
    }
    return summary;
  }

  private payer(address: string): Pick<AuthenticatedPayer, 'mode' | 'payerId' | 'rateLimits'> {
    return { mode: X402_MODE, payerId: `x402:${this.ctx.network}:${lower(address)}`, rateLimits: [{ key: `x402:${lower(address)}`, tier: this.ctx.options.tier }] };
  }

  /** A payer whose identity could not be established: no shared idempotency scope, limited by client address. */
  private unverified(request: PaymentRequest): Pick<AuthenticatedPayer, 'mode' | 'payerId' | 'rateLimits'> {
    return {
      mode: X402_MODE,
      payerId: `x402-unverified:${randomUUID()}`,
      rateLimits: [{ key: `x402-unverified:${request.clientAddress}`, tier: this.ctx.options.tier }],
    };
  }

  private async authenticate(request: PaymentRequest, credential: Credential): Promise<AuthenticatedPayer> {
    const payer = await this.authenticatePayer(request, credential);
    // x402 payers have no account to hold limits: they read the collections the operator made public.
    const collections = await this.ctx.options.publicCollections?.();
    return collections ? { ...payer, collections } : payer;
  }

  private async authenticatePayer(request: PaymentRequest, credential: Credential): Promise<AuthenticatedPayer> {
    if (credential.flow === 'receipt') {
      const { receipt } = credential;
      const trusted = verifyReceiptSignature(receipt, this.ctx.keyring);
      if (!trusted) {
        const error = new NotaryError('x402_untrusted_receipt', `The receipt's signature does not verify under a trusted facilitator key (kid ${receipt.kid})`);
        return { ...this.unverified(request), authorize: () => Promise.reject(error) };
      }
      return { ...this.payer(receipt.payer), authorize: ({ rawBody, price }) => authorizeReceipt(this.ctx, request, rawBody, price, receipt) };
    }
    const { signed } = credential;
    const identity = (await signer(this.ctx, signed)) ? this.payer(signed.eip3009.authorization.from) : this.unverified(request);
    const verified = !identity.payerId.startsWith('x402-unverified:');
    const { id: paymentId, validation } = extractAndValidatePaymentIdentifier(signed.payload);
    if (!validation.valid) {
      throw new NotaryError('x402_malformed_payment', `payment-identifier: ${(validation.errors ?? []).join('; ')}`);
    }
    return {
      ...identity,
      ...(verified && paymentId ? { idempotencyKey: `payment-identifier:${paymentId}` } : {}),
      authorize: ({ rawBody, price }) => authorizeSignature(this.ctx, request, rawBody, price, signed),
    };
  }
}
