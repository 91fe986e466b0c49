import { VerifyError, type VerifyResponse } from '@x402/core/types';
import { getAddress, recoverTypedDataAddress, type Hex } from 'viem';
import { NotaryError, newId } from '../../../core/index.js';
import type { PaymentAuthorization, PaymentRequest } from '../../mode.js';
import { requestFingerprint } from '../../paid-call.js';
import type { Price } from '../../pricing.js';
import { CHALLENGE_EXTRA, lower, refusal, type X402Context } from './context.js';
import { hold, releaseHeld } from './holds.js';
import type { SignedPayment } from './payload.js';
import type { NewX402Payment } from './repository.js';
import { settleSignature } from './settle.js';

/* The standard x402 v2 flow: PAYMENT-SIGNATURE (an `exact` EIP-3009 authorization), verified before the work. */

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

/**
 * Whether the EIP-3009 signature recovers to its `from` under this deployment's token domain. Only an identity check
 * (it decides who the payer is for idempotency and limits); validity is the facilitator's verify, which also
 * accepts smart-wallet signatures this local check cannot.
 */
export async function signer(ctx: X402Context, signed: SignedPayment): Promise<boolean> {
  const { accepted } = signed.payload;
  if (accepted.network !== ctx.network || lower(accepted.asset) !== lower(ctx.asset)) return false;
  const a = signed.eip3009.authorization;
  if (signed.eip3009.signature.length !== 132) return false;
  try {
    const recovered = await recoverTypedDataAddress({
      domain: { name: ctx.options.config.asset_name, version: ctx.options.config.asset_version, chainId: ctx.chainId, verifyingContract: ctx.asset },
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

export async function authorizeSignature(ctx: X402Context, request: PaymentRequest, rawBody: Uint8Array, price: Price, signed: SignedPayment): Promise<PaymentAuthorization> {
  const { accepted } = signed.payload;
  const auth = signed.eip3009.authorization;
  if (accepted.network !== ctx.network) throw new NotaryError('x402_wrong_network', `This server takes payments on ${ctx.network}, not ${accepted.network}`, { network: ctx.network });
  if (lower(accepted.asset) !== lower(ctx.asset)) throw new NotaryError('x402_wrong_asset', `This server takes ${ctx.asset}, not ${accepted.asset}`, { asset: ctx.asset });
  if (lower(accepted.payTo) !== lower(ctx.payTo) || lower(auth.to) !== lower(ctx.payTo)) {
    throw new NotaryError('x402_wrong_pay_to', `Payments go to ${ctx.payTo}`, { pay_to: ctx.payTo });
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
  const issuer = await ctx.challenges();
  const binding = ctx.binding(request, rawBody, price);
  const expires = ctx.checkChallenge(accepted.extra?.[CHALLENGE_EXTRA], binding, issuer);
  const nowS = Math.floor(ctx.now() / 1000);
  if (expires < nowS) throw new NotaryError('x402_challenge_expired', 'The challenge has expired; ask for a fresh one');
  if (BigInt(auth.validBefore) < BigInt(nowS + VALIDITY_MARGIN_S) || BigInt(auth.validAfter) > BigInt(nowS)) {
    throw new NotaryError('x402_authorization_expired', `The authorization is valid from ${auth.validAfter} to ${auth.validBefore} (unix seconds); it is ${nowS}`);
  }
  const challenge = String(accepted.extra?.[CHALLENGE_EXTRA]);
  const requirements = ctx.requirements(price, challenge);
  const row: NewX402Payment = {
    id: newId('pay'),
    flow: 'signature',
    challenge,
    payment_key: `auth:${ctx.network}:${lower(ctx.asset)}:${lower(auth.from)}:${lower(auth.nonce)}`,
    payer: lower(auth.from),
    network: ctx.network,
    asset: lower(ctx.asset),
    pay_to: lower(ctx.payTo),
    amount: price.amount.atomic.toString(),
    credits: price.credits,
    auth_nonce: lower(auth.nonce),
    valid_before: auth.validBefore,
    fingerprint: requestFingerprint(request, rawBody),
    state: 'reserved',
    transaction_hash: null,
    request_id: request.requestId,
    lease_until: ctx.leaseEnd(),
  };
  const held = await hold(ctx, row, request);
  if (held.kind === 'served') return held.authorization;
  const payment = { ...row, id: held.id };
  // A payment retried after a settle whose outcome was never heard was verified before; it is settled again as is.
  if (!held.retried) {
    let verdict: VerifyResponse;
    try {
      verdict = await ctx.options.verifier.verify(signed.payload, requirements);
    } catch (err) {
      await releaseHeld(ctx, payment.id);
      if (err instanceof VerifyError) throw refusal(err.invalidReason, err.invalidMessage);
      throw new NotaryError('x402_facilitator_unavailable', `The facilitator did not verify the payment: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!verdict.isValid) {
      await releaseHeld(ctx, payment.id);
      throw refusal(verdict.invalidReason, verdict.invalidMessage);
    }
  }
  return {
    facts: true,
    settle: ({ requestId }) => settleSignature(ctx, payment, signed, requirements, requestId),
    release: () => releaseHeld(ctx, payment.id),
  };
}
