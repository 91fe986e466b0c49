import { SettleError, type PaymentRequirements, type SettleResponse } from '@x402/core/types';
import { getAddress, type Hex } from 'viem';
import { NotaryError } from '../../../core/index.js';
import type { Settlement } from '../../mode.js';
import { inUse, ledgerEntry, lower, pending, refusal, settlementOf, type X402Context } from './context.js';
import type { SignedPayment } from './payload.js';
import type { NewX402Payment } from './repository.js';
import type { X402PaymentRow, X402PaymentState } from './tables.js';

/* Settlement after the work (the standard flow) and reconciliation of unknown outcomes from the chain. */

export async function settleSignature(ctx: X402Context, row: NewX402Payment, signed: SignedPayment, requirements: PaymentRequirements, requestId: string): Promise<Settlement> {
  const { payments } = ctx.options;
  if (!(await payments.transition(row.id, ['reserved'], 'settling', { requestId, countAttempt: true, leaseUntil: ctx.leaseEnd() }))) {
    throw new NotaryError('x402_payment_used', 'This payment was taken over by another call');
  }
  let response: SettleResponse | undefined;
  let failure: unknown;
  try {
    response = await ctx.options.settler.settle(signed.payload, requirements);
  } catch (err) {
    failure = err;
  }
  if (response?.success && response.transaction) {
    const transaction = lower(response.transaction);
    if (!(await payments.settle(row.id, ['settling'], transaction, true, ledgerEntry(row, transaction, requestId)))) {
      ctx.options.log('warn', `x402 payment ${row.id} settled in ${transaction} but its row was no longer settling`);
    }
    return settlementOf(row.credits, { ...response, transaction });
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
  const decided = current ? await reconcileRow(ctx, current) : 'released';
  if (decided === 'settled') {
    const settled = await payments.get(row.id);
    if (settled?.transaction_hash && (await payments.markServed(row.id))) {
      return settlementOf(row.credits, { success: true, transaction: settled.transaction_hash, network: ctx.network as SettleResponse['network'], payer: row.payer, amount: row.amount });
    }
    throw inUse('settled');
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
  ctx.options.log('warn', `x402 payment ${row.id}: settlement outcome unknown (${why}); it will be reconciled on chain`);
  throw pending();
}

/**
 * Decides one undecided payment from the chain: settled (ledger row written now, once), released (never charged,
 * no longer chargeable: the row is deleted), void (consumed without the transfer), or still pending.
 */
export async function reconcileRow(
  ctx: X402Context,
  row: X402PaymentRow,
  unreadable?: (why: string) => void,
): Promise<'settled' | 'released' | 'void' | 'pending'> {
  const { payments } = ctx.options;
  if (row.flow !== 'signature' || !row.auth_nonce) return 'pending';
  const from: X402PaymentState[] = ['unknown', 'settling'];
  let outcome;
  try {
    outcome = await ctx.options.chain.authorizationOutcome({
      asset: getAddress(row.asset),
      payer: getAddress(row.payer),
      nonce: row.auth_nonce as Hex,
      payTo: getAddress(row.pay_to),
      amount: BigInt(row.amount),
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    ctx.options.log('warn', `x402 reconciliation of ${row.id} could not read the chain: ${why}`);
    unreadable?.(why);
    return 'pending';
  }
  if (outcome.used) {
    if (outcome.transfer) {
      const ok = await payments.settle(row.id, from, outcome.transfer.transaction, false, ledgerEntry(row, outcome.transfer.transaction, row.request_id));
      if (ok) ctx.options.log('info', `x402 payment ${row.id} reconciled: settled in ${outcome.transfer.transaction}`);
      return ok || (await payments.get(row.id))?.state === 'settled' ? 'settled' : 'pending';
    }
    if (outcome.transaction === null) return 'pending'; // used, but its transaction is beyond the log window
    await payments.transition(row.id, from, 'void', { lastError: `authorization consumed by ${outcome.transaction} without the expected transfer` });
    return 'void';
  }
  if (row.valid_before !== null && outcome.chainTime >= BigInt(row.valid_before)) {
    if (await payments.release(row.id, from)) ctx.options.log('info', `x402 payment ${row.id} reconciled: expired unused, nothing charged`);
    return 'released';
  }
  return 'pending';
}
