import { createHash, randomUUID } from 'node:crypto';
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { SettleError, VerifyError, type PaymentPayload, type PaymentRequired, type PaymentRequirements, type SettleResponse, type VerifyResponse } from '@x402/core/types';
import { declarePaymentIdentifierExtension, extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { getAddress, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import type { NotaryConfig } from '../../../core/config.js';
import { NotaryError, type ErrorCode } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import type { NewX402Payment, X402PaymentsRepository } from '../../../storage/x402.js';
import type { X402PaymentRow, X402PaymentState } from '../../../storage/schema.js';
import {
  singleHeader,
  type AuthenticatedPayer,
  type PaymentAuthorization,
  type PaymentChallenge,
  type PaymentCredential,
  type PaymentMode,
  type PaymentRequest,
  type ReconcileSummary,
  type Settlement,
} from '../../mode.js';
import { requestFingerprint } from '../../paid-call.js';
import type { Price } from '../../pricing.js';
import type { SettlementChain } from './chain.js';
import { ChallengeIssuer, type ChallengeBinding } from './challenge.js';
import { parsePaymentSignature, type SignedPayment } from './payload.js';
import { decodeReceipt, trustedKeyring, verifyReceiptSignature, type SettlementReceipt } from './receipt.js';

export type X402Config = NotaryConfig['payments']['modes']['x402'];

/** The standard facilitator API as the mode uses it (HTTPFacilitatorClient from @x402/core implements it). */
export interface FacilitatorApi {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

export interface X402ModeOptions {
  config: X402Config;
  /** Rate-limit tier of x402 payers. */
  tier: string;
  payments: X402PaymentsRepository;
  /** Verifies (bounded by verify_timeout_ms). */
  verifier: FacilitatorApi;
  /** Settles (bounded by settle_timeout_ms: a timeout is an unknown outcome, never a refusal). */
  settler: FacilitatorApi;
  chain: SettlementChain;
  /** The HMAC secret of challenges. */
  secret: () => Promise<Uint8Array>;
  /** How long a verified payment is held for its call before a retry may take it over (a dead process). */
  leaseMs: number;
  log: (level: 'info' | 'warn', message: string) => void;
  now?: () => number;
}

export const X402_MODE = 'x402';
/** The PAYMENT-REQUIRED `extra` member carrying the challenge nonce (the client echoes it in `accepted`). */
export const CHALLENGE_EXTRA = 'challenge';
const EIP3009_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;
/** Block-time margin: an authorization this close to validBefore may not make it on chain in time. */
const VALIDITY_MARGIN_S = 6;
/** Clock skew allowed between a facilitator's settled_at and the challenge expiry. */
const RECEIPT_SKEW_S = 60;
const RETRY_PENDING_S = 5;

const lower = (value: string) => value.toLowerCase();
const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Facilitator reasons (the x402 EVM error strings) and the codes they become here. */
const INVALID_REASONS: Record<string, ErrorCode> = {
  invalid_exact_evm_signature: 'x402_invalid_signature',
  invalid_exact_evm_failed_to_parse_signature: 'x402_invalid_signature',
  invalid_exact_evm_payload_authorization_valid_before: 'x402_authorization_expired',
  invalid_exact_evm_payload_authorization_valid_after: 'x402_authorization_expired',
  invalid_exact_evm_insufficient_balance: 'x402_insufficient_funds',
  invalid_exact_evm_nonce_already_used: 'x402_payment_used',
  invalid_exact_evm_recipient_mismatch: 'x402_wrong_pay_to',
  invalid_exact_evm_network_mismatch: 'x402_wrong_network',
  invalid_exact_evm_authorization_value_mismatch: 'x402_amount_mismatch',
};

function refusal(reason: string | undefined, message: string | undefined): NotaryError {
  const code = (reason && INVALID_REASONS[reason]) || 'x402_payment_invalid';
  return new NotaryError(code, `The facilitator refused the payment: ${reason ?? 'no reason given'}${message ? ` (${message.slice(0, 300)})` : ''}`, {
    facilitator_reason: reason ?? null,
  });
}

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
  private issuer: Promise<ChallengeIssuer> | undefined;
  private readonly keyring: Map<string, Uint8Array>;
  private readonly network: string;
  private readonly asset: Address;
  private readonly payTo: Address;
  private readonly chainId: number;
  private readonly now: () => number;

  constructor(private readonly options: X402ModeOptions) {
    const { config } = options;
    if (!config.pay_to) throw new NotaryError('invalid_config', 'payments.modes.x402.pay_to is required');
    this.network = config.network;
    this.asset = getAddress(config.asset);
    this.payTo = getAddress(config.pay_to);
    this.chainId = Number(config.network.slice('eip155:'.length));
    this.keyring = trustedKeyring(config.receipt_keys);
    this.now = options.now ?? (() => Date.now());
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
    const issuer = await this.challenges();
    const { nonce, expires } = issuer.issue(this.binding(request, rawBody, price), this.now());
    const requirements = this.requirements(price, nonce);
    const paymentRequired: PaymentRequired = {
      x402Version: 2,
      error: error?.message ?? 'Payment required: send PAYMENT-SIGNATURE (x402 v2) or X-402-Receipt',
      resource: { url: request.url, description: `notary ${price.description}`, mimeType: 'application/json' },
      accepts: [requirements],
      extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) },
    };
    const chain = `"${this.network}"`;
    return {
      status: 402,
      wwwAuthenticate: `x402 amount=${price.amount.decimal}, chain=${chain}, receiver=${this.payTo}, asset=${this.asset}, nonce=${nonce}, expires=${expires}`,
      // A challenge is single-use: no cache may keep it.
      headers: { 'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired), 'Cache-Control': 'no-store' },
      body: {
        amount: price.amount.decimal,
        amount_atomic: price.amount.atomic.toString(),
        currency: price.amount.asset,
        chain: this.network,
        receiver: this.payTo,
        asset: this.asset,
        nonce,
        expires,
        facilitator: this.options.config.facilitator_url ?? null,
        payment_required: paymentRequired,
      },
    };
  }

  /** Decides the payments whose settlement outcome is unknown (and settles whose process died) from the chain. */
  async reconcile(): Promise<ReconcileSummary> {
    const summary: ReconcileSummary = { checked: 0, settled: 0, released: 0, pending: 0 };
    const rows = await this.options.payments.undecided(new Date(this.now()).toISOString(), 100);
    for (const row of rows) {
      summary.checked++;
      let unreadable: string | undefined;
      const outcome = await this.reconcileRow(row, (why) => (unreadable = why));
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

  // ---------------------------------------------------------------------------------------------------------------

  private challenges(): Promise<ChallengeIssuer> {
    this.issuer ??= this.options.secret().then((secret) => new ChallengeIssuer(secret, this.options.config.challenge_ttl_s));
    return this.issuer;
  }

  private binding(request: PaymentRequest, rawBody: Uint8Array, price: Price): ChallengeBinding {
    return {
      method: request.method,
      path: request.path,
      bodyDigest: sha256Hex(rawBody),
      amount: price.amount.atomic.toString(),
      network: this.network,
      asset: this.asset,
      payTo: this.payTo,
    };
  }

  private requirements(price: Price, challenge: string): PaymentRequirements {
    const { config } = this.options;
    return {
      scheme: 'exact',
      network: this.network as PaymentRequirements['network'],
      amount: price.amount.atomic.toString(),
      asset: this.asset,
      payTo: this.payTo,
      maxTimeoutSeconds: config.max_timeout_s,
      extra: { name: config.asset_name, version: config.asset_version, [CHALLENGE_EXTRA]: challenge },
    };
  }

  private payer(address: string): Pick<AuthenticatedPayer, 'mode' | 'payerId' | 'rateLimits'> {
    return { mode: X402_MODE, payerId: `x402:${this.network}:${lower(address)}`, rateLimits: [{ key: `x402:${lower(address)}`, tier: this.options.tier }] };
  }

  /** A payer whose identity could not be established: no shared idempotency scope, limited by client address. */
  private unverified(request: PaymentRequest): Pick<AuthenticatedPayer, 'mode' | 'payerId' | 'rateLimits'> {
    return {
      mode: X402_MODE,
      payerId: `x402-unverified:${randomUUID()}`,
      rateLimits: [{ key: `x402-unverified:${request.clientAddress}`, tier: this.options.tier }],
    };
  }

  private async authenticate(request: PaymentRequest, credential: Credential): Promise<AuthenticatedPayer> {
    if (credential.flow === 'receipt') {
      const { receipt } = credential;
      const trusted = verifyReceiptSignature(receipt, this.keyring);
      if (!trusted) {
        const error = new NotaryError('x402_untrusted_receipt', `The receipt's signature does not verify under a trusted facilitator key (kid ${receipt.kid})`);
        return { ...this.unverified(request), authorize: () => Promise.reject(error) };
      }
      return { ...this.payer(receipt.payer), authorize: ({ rawBody, price }) => this.authorizeReceipt(request, rawBody, price, receipt) };
    }
    const { signed } = credential;
    const identity = (await this.signer(signed)) ? this.payer(signed.eip3009.authorization.from) : this.unverified(request);
    const verified = !identity.payerId.startsWith('x402-unverified:');
    const { id: paymentId, validation } = extractAndValidatePaymentIdentifier(signed.payload);
    if (!validation.valid) {
      throw new NotaryError('x402_malformed_payment', `payment-identifier: ${(validation.errors ?? []).join('; ')}`);
    }
    return {
      ...identity,
      ...(verified && paymentId ? { idempotencyKey: `payment-identifier:${paymentId}` } : {}),
      authorize: ({ rawBody, price }) => this.authorizeSignature(request, rawBody, price, signed),
    };
  }

  /**
   * Whether the EIP-3009 signature recovers to its `from` under this deployment's token domain. Only an identity check
   * (it decides who the payer is for idempotency and limits); validity is the facilitator's verify, which also
   * accepts smart-wallet signatures this local check cannot.
   */
  private async signer(signed: SignedPayment): Promise<boolean> {
    const { accepted } = signed.payload;
    if (accepted.network !== this.network || lower(accepted.asset) !== lower(this.asset)) return false;
    const a = signed.eip3009.authorization;
    if (signed.eip3009.signature.length !== 132) return false;
    try {
      const recovered = await recoverTypedDataAddress({
        domain: { name: this.options.config.asset_name, version: this.options.config.asset_version, chainId: this.chainId, verifyingContract: this.asset },
        types: EIP3009_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: {
          from: getAddress(a.from),
          to: getAddress(a.to),
          value: BigInt(a.value),
          validAfter: BigInt(a.validAfter),
          validBefore: BigInt(a.validBefore),
          nonce: a.nonce as Hex,
        },
        signature: signed.eip3009.signature as Hex,
      });
      return lower(recovered) === lower(a.from);
    } catch {
      return false;
    }
  }

  private checkChallenge(nonce: unknown, binding: ChallengeBinding, issuer: ChallengeIssuer): number {
    if (typeof nonce !== 'string' || nonce.length === 0) {
      throw new NotaryError('x402_challenge_missing', `The payment must answer a challenge: accepted.extra.${CHALLENGE_EXTRA} carries the nonce of a fresh 402`);
    }
    const checked = issuer.check(nonce, binding);
    if (!checked.valid) {
      throw new NotaryError('x402_challenge_invalid', 'The challenge was not issued by this server for this request (method, path, body) and price; ask for a fresh one');
    }
    return checked.expires;
  }

  private async authorizeSignature(request: PaymentRequest, rawBody: Uint8Array, price: Price, signed: SignedPayment): Promise<PaymentAuthorization> {
    const { accepted } = signed.payload;
    const auth = signed.eip3009.authorization;
    if (accepted.network !== this.network) throw new NotaryError('x402_wrong_network', `This server takes payments on ${this.network}, not ${accepted.network}`, { network: this.network });
    if (lower(accepted.asset) !== lower(this.asset)) throw new NotaryError('x402_wrong_asset', `This server takes ${this.asset}, not ${accepted.asset}`, { asset: this.asset });
    if (lower(accepted.payTo) !== lower(this.payTo) || lower(auth.to) !== lower(this.payTo)) {
      throw new NotaryError('x402_wrong_pay_to', `Payments go to ${this.payTo}`, { pay_to: this.payTo });
    }
    const value = BigInt(auth.value);
    if (value < price.amount.atomic) {
      throw new NotaryError('x402_amount_too_low', `This call costs ${price.amount.atomic} (${price.amount.decimal} ${price.amount.asset}); the authorization is for ${value}`, {
        required_atomic: price.amount.atomic.toString(),
      });
    }
    if (value !== price.amount.atomic) {
      throw new NotaryError('x402_amount_mismatch', `The exact scheme pays exactly ${price.amount.atomic}; the authorization is for ${value}`, {
        required_atomic: price.amount.atomic.toString(),
      });
    }
    const issuer = await this.challenges();
    const binding = this.binding(request, rawBody, price);
    const expires = this.checkChallenge(accepted.extra?.[CHALLENGE_EXTRA], binding, issuer);
    const nowS = Math.floor(this.now() / 1000);
    if (expires < nowS) throw new NotaryError('x402_challenge_expired', 'The challenge has expired; ask for a fresh one');
    if (BigInt(auth.validBefore) < BigInt(nowS + VALIDITY_MARGIN_S) || BigInt(auth.validAfter) > BigInt(nowS)) {
      throw new NotaryError('x402_authorization_expired', `The authorization is valid from ${auth.validAfter} to ${auth.validBefore} (unix seconds); it is ${nowS}`);
    }
    const challenge = String(accepted.extra?.[CHALLENGE_EXTRA]);
    const requirements = this.requirements(price, challenge);
    const row: NewX402Payment = {
      id: newId('pay'),
      flow: 'signature',
      challenge,
      payment_key: `auth:${this.network}:${lower(this.asset)}:${lower(auth.from)}:${lower(auth.nonce)}`,
      payer: lower(auth.from),
      network: this.network,
      asset: lower(this.asset),
      pay_to: lower(this.payTo),
      amount: price.amount.atomic.toString(),
      credits: price.credits,
      auth_nonce: lower(auth.nonce),
      valid_before: auth.validBefore,
      fingerprint: requestFingerprint(request, rawBody),
      state: 'reserved',
      transaction_hash: null,
      request_id: request.requestId,
      lease_until: this.leaseEnd(),
    };
    const held = await this.hold(row, request);
    if (held.kind === 'served') return held.authorization;
    const payment = { ...row, id: held.id };
    // A payment retried after a settle whose outcome was never heard was verified before; it is settled again as is.
    if (!held.retried) {
      let verdict: VerifyResponse;
      try {
        verdict = await this.options.verifier.verify(signed.payload, requirements);
      } catch (err) {
        await this.releaseHeld(payment.id);
        if (err instanceof VerifyError) throw refusal(err.invalidReason, err.invalidMessage);
        throw new NotaryError('x402_facilitator_unavailable', `The facilitator did not verify the payment: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (!verdict.isValid) {
        await this.releaseHeld(payment.id);
        throw refusal(verdict.invalidReason, verdict.invalidMessage);
      }
    }
    return {
      facts: true,
      settle: ({ requestId }) => this.settleSignature(payment, signed, requirements, requestId),
      release: () => this.releaseHeld(payment.id),
    };
  }

  /**
   * Gives a held payment back after its call failed. A payment none of whose settles was ever attempted is deleted
   * (its challenge and authorization are free again); one with an earlier settle of unknown outcome goes back to
   * unknown, because that transaction may still land.
   */
  private async releaseHeld(id: string): Promise<void> {
    const row = await this.options.payments.get(id);
    if (!row || row.state !== 'reserved') return;
    if (row.attempts > 0) await this.options.payments.transition(id, ['reserved'], 'unknown');
    else await this.options.payments.release(id, ['reserved']);
  }

  private async authorizeReceipt(request: PaymentRequest, rawBody: Uint8Array, price: Price, receipt: SettlementReceipt): Promise<PaymentAuthorization> {
    if (receipt.network !== this.network) throw new NotaryError('x402_wrong_network', `This server takes payments on ${this.network}, not ${receipt.network}`, { network: this.network });
    if (receipt.asset !== lower(this.asset)) throw new NotaryError('x402_wrong_asset', `This server takes ${this.asset}, not ${receipt.asset}`, { asset: this.asset });
    if (receipt.pay_to !== lower(this.payTo)) throw new NotaryError('x402_wrong_pay_to', `Payments go to ${this.payTo}`, { pay_to: this.payTo });
    if (BigInt(receipt.amount) < price.amount.atomic) {
      throw new NotaryError('x402_amount_too_low', `This call costs ${price.amount.atomic} (${price.amount.decimal} ${price.amount.asset}); the receipt is for ${receipt.amount}`, {
        required_atomic: price.amount.atomic.toString(),
      });
    }
    const issuer = await this.challenges();
    const expires = this.checkChallenge(receipt.challenge, this.binding(request, rawBody, price), issuer);
    const settledAt = Math.floor(Date.parse(receipt.settled_at) / 1000);
    if (settledAt > expires + RECEIPT_SKEW_S) throw new NotaryError('x402_challenge_expired', 'The payment was settled after its challenge expired');
    if (Math.floor(this.now() / 1000) > settledAt + this.options.config.receipt_ttl_s) {
      throw new NotaryError('x402_receipt_expired', `Receipts can be redeemed for ${this.options.config.receipt_ttl_s} s after their settlement`);
    }
    const row: NewX402Payment = {
      id: newId('pay'),
      flow: 'receipt',
      challenge: receipt.challenge,
      payment_key: `tx:${this.network}:${receipt.transaction}`,
      payer: receipt.payer,
      network: this.network,
      asset: receipt.asset,
      pay_to: receipt.pay_to,
      amount: receipt.amount,
      credits: price.credits,
      auth_nonce: null,
      valid_before: null,
      fingerprint: requestFingerprint(request, rawBody),
      state: 'reserved',
      transaction_hash: receipt.transaction,
      request_id: request.requestId,
      lease_until: this.leaseEnd(),
    };
    const held = await this.hold(row, request);
    if (held.kind === 'served') return held.authorization;
    const paymentId = held.id;
    const settlement: SettleResponse = { success: true, transaction: receipt.transaction, network: this.network as SettleResponse['network'], payer: receipt.payer, amount: receipt.amount };
    return {
      facts: true,
      settle: async ({ requestId }) => {
        // Paid before the call: taking it is recording it, once (the row's state guards a concurrent taker).
        const taken = await this.options.payments.settle(paymentId, ['reserved'], receipt.transaction, true, this.ledgerEntry({ ...row, id: paymentId }, receipt.transaction, requestId));
        if (!taken) throw new NotaryError('x402_payment_used', 'This receipt was redeemed by another call meanwhile');
        return this.settlement(price.credits, settlement);
      },
      release: async () => {
        await this.options.payments.release(paymentId, ['reserved']);
      },
    };
  }

  private leaseEnd(): string {
    return new Date(this.now() + this.options.leaseMs).toISOString();
  }

  /**
   * Takes the payment for this call: inserts its row, or explains why it cannot be taken. A retry of a payment whose
   * settlement was never heard reconciles it first; a payment settled by reconciliation serves its one response.
   */
  private async hold(row: NewX402Payment, request: PaymentRequest): Promise<{ kind: 'held'; id: string; retried: boolean } | { kind: 'served'; authorization: PaymentAuthorization }> {
    for (let round = 0; round < 3; round++) {
      const outcome = await this.options.payments.reserve(row);
      if (outcome.reserved) return { kind: 'held', id: row.id, retried: false };
      const existing = outcome.existing;
      if (!existing) continue; // released in between
      if (existing.payment_key !== row.payment_key) {
        throw new NotaryError('x402_challenge_used', 'This challenge was already answered by another payment; ask for a fresh one');
      }
      const nowIso = new Date(this.now()).toISOString();
      const takeover = { leaseUntil: this.leaseEnd(), requestId: request.requestId };
      if (existing.state === 'reserved') {
        if (existing.lease_until > nowIso) throw this.inUse('reserved');
        // The call holding it died before any settle of its own: take it over.
        if (await this.options.payments.transition(existing.id, ['reserved'], 'reserved', { ...takeover, leaseBefore: nowIso })) {
          return { kind: 'held', id: existing.id, retried: existing.attempts > 0 };
        }
        continue;
      }
      if (existing.state === 'settling' && existing.lease_until > nowIso) throw this.inUse('settling');
      if (existing.state === 'settling' || existing.state === 'unknown') {
        const decided = await this.reconcileRow(existing);
        if (decided === 'released') continue;
        if (decided === 'void') throw this.inUse('void');
        if (decided === 'pending') {
          // Undecided on chain and still valid: settling it again cannot charge twice (the authorization's nonce is
          // single-use on chain), so the retry runs the call and settles the same authorization again.
          if (existing.flow === 'signature' && (await this.options.payments.transition(existing.id, ['unknown', 'settling'], 'reserved', takeover))) {
            return { kind: 'held', id: existing.id, retried: true };
          }
          throw this.pending();
        }
        const fresh = await this.options.payments.get(existing.id);
        if (!fresh) continue;
        return this.serveSettled(fresh, row.fingerprint);
      }
      if (existing.state === 'settled') return this.serveSettled(existing, row.fingerprint);
      throw this.inUse(existing.state);
    }
    throw this.inUse('reserved');
  }

  /** A settled payment that never served its response (settled by reconciliation) serves it now, to the same request. */
  private serveSettled(row: X402PaymentRow, fingerprint: string): { kind: 'served'; authorization: PaymentAuthorization } {
    if (row.state !== 'settled' || row.served === 1 || row.fingerprint !== fingerprint || !row.transaction_hash) throw this.inUse(row.state);
    const transaction = row.transaction_hash;
    return {
      kind: 'served',
      authorization: {
        facts: true,
        settle: async () => {
          if (!(await this.options.payments.markServed(row.id))) throw this.inUse('settled');
          return this.settlement(row.credits, { success: true, transaction, network: this.network as SettleResponse['network'], payer: row.payer, amount: row.amount });
        },
        release: async () => {},
      },
    };
  }

  private inUse(state: X402PaymentState): NotaryError {
    const detail =
      state === 'reserved' || state === 'settling'
        ? 'This payment is being used by another call right now'
        : state === 'settled'
          ? 'This payment was already used for a call; sign a new one'
          : 'This payment cannot be used any more; sign a new one';
    return new NotaryError('x402_payment_used', detail, { payment_state: state === 'reserved' || state === 'settling' ? 'in_progress' : state });
  }

  private pending(): NotaryError {
    return new NotaryError(
      'x402_settlement_pending',
      `The settlement of this payment has not been confirmed yet. Do not pay again: retry this request with the same payment in ${RETRY_PENDING_S} s`,
      { payment_state: 'unknown', retry_after_s: RETRY_PENDING_S },
      { 'Retry-After': String(RETRY_PENDING_S) },
    );
  }

  private settlement(credits: number, response: SettleResponse): Settlement {
    return { creditsUsed: credits, headers: { 'PAYMENT-RESPONSE': encodePaymentResponseHeader(response) } };
  }

  private ledgerEntry(row: Pick<NewX402Payment, 'id' | 'payer' | 'amount' | 'asset' | 'network' | 'pay_to' | 'credits'>, transaction: string, requestId: string) {
    return {
      mode: X402_MODE,
      payer: row.payer,
      amount: row.amount,
      asset: row.asset,
      network: row.network,
      pay_to: row.pay_to,
      transaction_hash: lower(transaction),
      credits: row.credits,
      request_id: requestId,
      reference: row.id,
    };
  }

  private async settleSignature(row: NewX402Payment, signed: SignedPayment, requirements: PaymentRequirements, requestId: string): Promise<Settlement> {
    const { payments } = this.options;
    if (!(await payments.transition(row.id, ['reserved'], 'settling', { requestId, countAttempt: true, leaseUntil: this.leaseEnd() }))) {
      throw new NotaryError('x402_payment_used', 'This payment was taken over by another call');
    }
    let response: SettleResponse | undefined;
    let failure: unknown;
    try {
      response = await this.options.settler.settle(signed.payload, requirements);
    } catch (err) {
      failure = err;
    }
    if (response?.success && response.transaction) {
      const transaction = lower(response.transaction);
      if (!(await payments.settle(row.id, ['settling'], transaction, true, this.ledgerEntry(row, transaction, requestId)))) {
        this.options.log('warn', `x402 payment ${row.id} settled in ${transaction} but its row was no longer settling`);
      }
      return this.settlement(row.credits, { ...response, transaction });
    }
    const refused =
      response ?? (failure instanceof SettleError ? { success: false, errorReason: failure.errorReason, errorMessage: failure.errorMessage, transaction: failure.transaction } : undefined);
    const why = refused
      ? `${refused.errorReason ?? 'refused'}${refused.errorMessage ? `: ${refused.errorMessage.slice(0, 300)}` : ''}`
      : failure instanceof Error
        ? failure.message
        : String(failure);
    // Whatever the facilitator answered, the chain decides: this or an earlier attempt may have moved the money.
    await payments.transition(row.id, ['settling'], 'unknown', { lastError: why });
    const current = await payments.get(row.id);
    const decided = current ? await this.reconcileRow(current) : 'released';
    if (decided === 'settled') {
      const settled = await payments.get(row.id);
      if (settled?.transaction_hash && (await payments.markServed(row.id))) {
        return this.settlement(row.credits, { success: true, transaction: settled.transaction_hash, network: this.network as SettleResponse['network'], payer: row.payer, amount: row.amount });
      }
      throw this.inUse('settled');
    }
    if (decided === 'released' || decided === 'void') {
      throw new NotaryError('x402_settlement_failed', `The payment could not be settled (${why}); nothing was charged`, { facilitator_reason: refused?.errorReason ?? null });
    }
    // A definite refusal of the only attempt, with nothing on chain: nothing was charged and nothing can land later.
    const definite = refused !== undefined && refused.errorReason !== 'settlement_pending' && !refused.transaction;
    if (definite && current?.attempts === 1 && (await payments.release(row.id, ['unknown']))) {
      const mapped = refusal(refused.errorReason, refused.errorMessage);
      throw new NotaryError(mapped.code === 'x402_payment_invalid' ? 'x402_settlement_failed' : mapped.code, `The payment could not be settled (${why}); nothing was charged`, {
        facilitator_reason: refused.errorReason ?? null,
      });
    }
    this.options.log('warn', `x402 payment ${row.id}: settlement outcome unknown (${why}); it will be reconciled on chain`);
    throw this.pending();
  }

  /**
   * Decides one undecided payment from the chain: settled (ledger row written now, once), released (never charged,
   * no longer chargeable: the row is deleted), void (consumed without the transfer), or still pending.
   */
  private async reconcileRow(row: X402PaymentRow, unreadable?: (why: string) => void): Promise<'settled' | 'released' | 'void' | 'pending'> {
    const { payments } = this.options;
    if (row.flow !== 'signature' || !row.auth_nonce) return 'pending';
    const from: X402PaymentState[] = ['unknown', 'settling'];
    let outcome;
    try {
      outcome = await this.options.chain.authorizationOutcome({
        asset: getAddress(row.asset),
        payer: getAddress(row.payer),
        nonce: row.auth_nonce as Hex,
        payTo: getAddress(row.pay_to),
        amount: BigInt(row.amount),
      });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      this.options.log('warn', `x402 reconciliation of ${row.id} could not read the chain: ${why}`);
      unreadable?.(why);
      return 'pending';
    }
    if (outcome.used) {
      if (outcome.transfer) {
        const ok = await payments.settle(row.id, from, outcome.transfer.transaction, false, this.ledgerEntry(row, outcome.transfer.transaction, row.request_id));
        if (ok) this.options.log('info', `x402 payment ${row.id} reconciled: settled in ${outcome.transfer.transaction}`);
        return ok || (await payments.get(row.id))?.state === 'settled' ? 'settled' : 'pending';
      }
      if (outcome.transaction === null) return 'pending'; // used, but its transaction is beyond the log window
      await payments.transition(row.id, from, 'void', { lastError: `authorization consumed by ${outcome.transaction} without the expected transfer` });
      return 'void';
    }
    if (row.valid_before !== null && outcome.chainTime >= BigInt(row.valid_before)) {
      if (await payments.release(row.id, from)) this.options.log('info', `x402 payment ${row.id} reconciled: expired unused, nothing charged`);
      return 'released';
    }
    return 'pending';
  }
}
