import { createHash } from 'node:crypto';
import { encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { getAddress, type Address } from 'viem';
import { NotaryError, type ErrorCode } from '../../../core/index.js';
import type { PaymentRequest, Settlement } from '../../mode.js';
import type { Price } from '../../pricing.js';
import type { SettlementChain } from './chain.js';
import { ChallengeIssuer, type ChallengeBinding } from './challenge.js';
import type { X402Settings } from './config.js';
import type { NewX402Payment, X402PaymentsRepository } from './repository.js';
import { trustedKeyring } from './receipt.js';
import type { X402PaymentState } from './tables.js';
import './errors.js'; // registers the x402_* error codes this file throws

/** The standard facilitator API as the mode uses it (HTTPFacilitatorClient from @x402/core implements it). */
export interface FacilitatorApi {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

export interface X402ModeOptions {
  config: X402Settings;
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
  /** The ids of the collections x402 payers may read (the operator's public ones); absent: every collection. */
  publicCollections?: () => Promise<readonly string[]>;
  now?: () => number;
}

export const X402_MODE = 'x402';
/** The PAYMENT-REQUIRED `extra` member carrying the challenge nonce (the client echoes it in `accepted`). */
export const CHALLENGE_EXTRA = 'challenge';
const RETRY_PENDING_S = 5;

export const lower = (value: string) => value.toLowerCase();
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

export function refusal(reason: string | undefined, message: string | undefined): NotaryError {
  const code = (reason && INVALID_REASONS[reason]) || 'x402_payment_invalid';
  return new NotaryError(code, `The facilitator refused the payment: ${reason ?? 'no reason given'}${message ? ` (${message.slice(0, 300)})` : ''}`, {
    facilitator_reason: reason ?? null,
  });
}

/**
 * What the x402 mode's parts share: the settings, the deployment's network, asset and receiver, the clock, the
 * challenge issuer, and the requirements a price asks for. The credential flows (signature-flow.ts, receipt-flow.ts),
 * the hold state machine (holds.ts) and settlement (settle.ts) take it.
 */
export class X402Context {
  readonly keyring: Map<string, Uint8Array>;
  readonly network: string;
  readonly asset: Address;
  readonly payTo: Address;
  readonly chainId: number;
  readonly now: () => number;
  private issuer: Promise<ChallengeIssuer> | undefined;

  constructor(readonly options: X402ModeOptions) {
    const { config } = options;
    if (!config.pay_to) throw new NotaryError('invalid_config', 'payments.modes.x402.pay_to is required');
    this.network = config.network;
    this.asset = getAddress(config.asset);
    this.payTo = getAddress(config.pay_to);
    this.chainId = Number(config.network.slice('eip155:'.length));
    this.keyring = trustedKeyring(config.receipt_keys);
    this.now = options.now ?? (() => Date.now());
  }

  challenges(): Promise<ChallengeIssuer> {
    this.issuer ??= this.options.secret().then((secret) => new ChallengeIssuer(secret, this.options.config.challenge_ttl_s));
    return this.issuer;
  }

  binding(request: PaymentRequest, rawBody: Uint8Array, price: Price): ChallengeBinding {
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

  requirements(price: Price, challenge: string): PaymentRequirements {
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

  checkChallenge(nonce: unknown, binding: ChallengeBinding, issuer: ChallengeIssuer): number {
    if (typeof nonce !== 'string' || nonce.length === 0) {
      throw new NotaryError('x402_challenge_missing', `The payment must answer a challenge: accepted.extra.${CHALLENGE_EXTRA} carries the nonce of a fresh 402`);
    }
    const checked = issuer.check(nonce, binding);
    if (!checked.valid) {
      throw new NotaryError('x402_challenge_invalid', 'The challenge was not issued by this server for this request (method, path, body) and price; ask for a fresh one');
    }
    return checked.expires;
  }

  leaseEnd(): string {
    return new Date(this.now() + this.options.leaseMs).toISOString();
  }
}

export function inUse(state: X402PaymentState): NotaryError {
  const detail =
    state === 'reserved' || state === 'settling'
      ? 'This payment is being used by another call right now'
      : state === 'settled'
        ? 'This payment was already used for a call; sign a new one'
        : 'This payment cannot be used any more; sign a new one';
  return new NotaryError('x402_payment_used', detail, { payment_state: state === 'reserved' || state === 'settling' ? 'in_progress' : state });
}

export function pending(): NotaryError {
  return new NotaryError(
    'x402_settlement_pending',
    `The settlement of this payment has not been confirmed yet. Do not pay again: retry this request with the same payment in ${RETRY_PENDING_S} s`,
    { payment_state: 'unknown', retry_after_s: RETRY_PENDING_S },
    { 'Retry-After': String(RETRY_PENDING_S) },
  );
}

export function settlementOf(credits: number, response: SettleResponse): Settlement {
  return { creditsUsed: credits, headers: { 'PAYMENT-RESPONSE': encodePaymentResponseHeader(response) } };
}

export function ledgerEntry(row: Pick<NewX402Payment, 'id' | 'payer' | 'amount' | 'asset' | 'network' | 'pay_to' | 'credits'>, transaction: string, requestId: string) {
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
