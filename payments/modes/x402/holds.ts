import type { PaymentAuthorization, PaymentRequest } from '../../mode.js';
import { inUse, pending, settlementOf, type X402Context } from './context.js';
import type { NewX402Payment } from './repository.js';
import { reconcileRow } from './settle.js';
import type { X402PaymentRow } from './tables.js';
import type { SettleResponse } from '@x402/core/types';
import { NotaryError } from '../../../core/index.js';

/*
 * The hold state machine of x402_payments: a payment is held (reserved) for the call it pays for, taken over from a
 * call that died, handed back when the call fails, or served once more when reconciliation settled it.
 */

/**
 * Takes the payment for this call: inserts its row, or explains why it cannot be taken. A retry of a payment whose
 * settlement was never heard reconciles it first; a payment settled by reconciliation serves its one response.
 */
export async function hold(ctx: X402Context, row: NewX402Payment, request: PaymentRequest): Promise<{ kind: 'held'; id: string; retried: boolean } | { kind: 'served'; authorization: PaymentAuthorization }> {
  for (let round = 0; round < 3; round++) {
    const outcome = await ctx.options.payments.reserve(row);
    if (outcome.reserved) return { kind: 'held', id: row.id, retried: false };
    const existing = outcome.existing;
    if (!existing) continue; // released in between
    if (existing.payment_key !== row.payment_key) {
      throw new NotaryError('x402_challenge_used', 'This challenge was already answered by another payment; ask for a fresh one');
    }
    const nowIso = new Date(ctx.now()).toISOString();
    const takeover = { leaseUntil: ctx.leaseEnd(), requestId: request.requestId };
    if (existing.state === 'reserved') {
      if (existing.lease_until > nowIso) throw inUse('reserved');
      // The call holding it died before any settle of its own: take it over.
      if (await ctx.options.payments.transition(existing.id, ['reserved'], 'reserved', { ...takeover, leaseBefore: nowIso })) {
        return { kind: 'held', id: existing.id, retried: existing.attempts > 0 };
      }
      continue;
    }
    if (existing.state === 'settling' && existing.lease_until > nowIso) throw inUse('settling');
    if (existing.state === 'settling' || existing.state === 'unknown') {
      const decided = await reconcileRow(ctx, existing);
      if (decided === 'released') continue;
      if (decided === 'void') throw inUse('void');
      if (decided === 'pending') {
        // Undecided on chain and still valid: settling it again cannot charge twice (the authorization's nonce is
        // single-use on chain), so the retry runs the call and settles the same authorization again.
        if (existing.flow === 'signature' && (await ctx.options.payments.transition(existing.id, ['unknown', 'settling'], 'reserved', takeover))) {
          return { kind: 'held', id: existing.id, retried: true };
        }
        throw pending();
      }
      const fresh = await ctx.options.payments.get(existing.id);
      if (!fresh) continue;
      return serveSettled(ctx, fresh, row.fingerprint);
    }
    if (existing.state === 'settled') return serveSettled(ctx, existing, row.fingerprint);
    throw inUse(existing.state);
  }
  throw inUse('reserved');
}

/** A settled payment that never served its response (settled by reconciliation) serves it now, to the same request. */
export function serveSettled(ctx: X402Context, row: X402PaymentRow, fingerprint: string): { kind: 'served'; authorization: PaymentAuthorization } {
  if (row.state !== 'settled' || row.served === 1 || row.fingerprint !== fingerprint || !row.transaction_hash) throw inUse(row.state);
  const transaction = row.transaction_hash;
  return {
    kind: 'served',
    authorization: {
      facts: true,
      settle: async () => {
        if (!(await ctx.options.payments.markServed(row.id))) throw inUse('settled');
        return settlementOf(row.credits, { success: true, transaction, network: ctx.network as SettleResponse['network'], payer: row.payer, amount: row.amount });
      },
      release: async () => {},
    },
  };
}

/**
 * Gives a held payment back after its call failed. A payment none of whose settles was ever attempted is deleted
 * (its challenge and authorization are free again); one with an earlier settle of unknown outcome goes back to
 * unknown, because that transaction may still land.
 */
export async function releaseHeld(ctx: X402Context, id: string): Promise<void> {
  const row = await ctx.options.payments.get(id);
  if (!row || row.state !== 'reserved') return;
  if (row.attempts > 0) await ctx.options.payments.transition(id, ['reserved'], 'unknown');
  else await ctx.options.payments.release(id, ['reserved']);
}
