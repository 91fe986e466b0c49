import type { SettleResponse } from '@x402/core/types';
import { NotaryError, newId } from '../../../core/index.js';
import type { PaymentAuthorization, PaymentRequest } from '../../mode.js';
import { requestFingerprint } from '../../paid-call.js';
import type { Price } from '../../pricing.js';
import { ledgerEntry, lower, settlementOf, type X402Context } from './context.js';
import { hold } from './holds.js';
import type { SettlementReceipt } from './receipt.js';
import type { NewX402Payment } from './repository.js';

/* The interface's flow: the caller settled first and sends X-402-Receipt, a facilitator's signed receipt. */

/** Clock skew allowed between a facilitator's settled_at and the challenge expiry. */
const RECEIPT_SKEW_S = 60;

export async function authorizeReceipt(ctx: X402Context, request: PaymentRequest, rawBody: Uint8Array, price: Price, receipt: SettlementReceipt): Promise<PaymentAuthorization> {
  if (receipt.network !== ctx.network) throw new NotaryError('x402_wrong_network', `This server takes payments on ${ctx.network}, not ${receipt.network}`, { network: ctx.network });
  if (receipt.asset !== lower(ctx.asset)) throw new NotaryError('x402_wrong_asset', `This server takes ${ctx.asset}, not ${receipt.asset}`, { asset: ctx.asset });
  if (receipt.pay_to !== lower(ctx.payTo)) throw new NotaryError('x402_wrong_pay_to', `Payments go to ${ctx.payTo}`, { pay_to: ctx.payTo });
  if (BigInt(receipt.amount) < price.amount.atomic) {
    throw new NotaryError('x402_amount_too_low', `This call costs ${price.amount.atomic} (${price.amount.decimal} ${price.amount.asset}); the receipt is for ${receipt.amount}`, {
      required_atomic: price.amount.atomic.toString(),
    });
  }
  const issuer = await ctx.challenges();
  const expires = ctx.checkChallenge(receipt.challenge, ctx.binding(request, rawBody, price), issuer);
  const settledAt = Math.floor(Date.parse(receipt.settled_at) / 1000);
  if (settledAt > expires + RECEIPT_SKEW_S) throw new NotaryError('x402_challenge_expired', 'The payment was settled after its challenge expired');
  if (Math.floor(ctx.now() / 1000) > settledAt + ctx.options.config.receipt_ttl_s) {
    throw new NotaryError('x402_receipt_expired', `Receipts can be redeemed for ${ctx.options.config.receipt_ttl_s} s after their settlement`);
  }
  const row: NewX402Payment = {
    id: newId('pay'),
    flow: 'receipt',
    challenge: receipt.challenge,
    payment_key: `tx:${ctx.network}:${receipt.transaction}`,
    payer: receipt.payer,
    network: ctx.network,
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
    lease_until: ctx.leaseEnd(),
  };
  const held = await hold(ctx, row, request);
  if (held.kind === 'served') return held.authorization;
  const paymentId = held.id;
  const settlement: SettleResponse = { success: true, transaction: receipt.transaction, network: ctx.network as SettleResponse['network'], payer: receipt.payer, amount: receipt.amount };
  return {
    facts: true,
    settle: async ({ requestId }) => {
      // Paid before the call: taking it is recording it, once (the row's state guards a concurrent taker).
      const taken = await ctx.options.payments.settle(paymentId, ['reserved'], receipt.transaction, true, ledgerEntry({ ...row, id: paymentId }, receipt.transaction, requestId));
      if (!taken) throw new NotaryError('x402_payment_used', 'This receipt was redeemed by another call meanwhile');
      return settlementOf(price.credits, settlement);
    },
    release: async () => {
      await ctx.options.payments.release(paymentId, ['reserved']);
    },
  };
}
