import type { Accounts } from '../../accounts.js';
import type { HeldPayment, HoldSettlement } from '../../mode.js';

/** What an MPP hold records: each party's tenant and the credits held from it (its share of the quote). */
export interface MppHoldRecord {
  env_id: string;
  parties: Array<{ tenant_id: string; held: number }>;
}

/** The ledger keys of a hold and of its settlement: spaces keep them apart from any Idempotency-Key a client sends. */
export const mppHoldKey = (key: string) => `hold ${key}`;
const settleKey = (key: string) => `settle ${key}`;

/**
 * Splits a charge of `credits` over the parties in proportion to what was held from each (largest remainder, ties to
 * the party listed first): no party is charged more than was held from it.
 */
export function chargeShares(held: readonly number[], credits: number): number[] {
  const total = held.reduce((sum, h) => sum + h, 0);
  if (credits > total) throw new RangeError(`a charge of ${credits} is more than the ${total} credits held`);
  if (total === 0) return held.map(() => 0);
  const parts = held.map((h) => Math.floor((credits * h) / total));
  let leftover = credits - parts.reduce((sum, p) => sum + p, 0);
  const order = held.map((h, index) => ({ index, remainder: (credits * h) % total })).sort((a, b) => b.remainder - a.remainder);
  for (const { index, remainder } of order) {
    if (leftover === 0 || remainder === 0) break;
    parts[index] = (parts[index] ?? 0) + 1;
    leftover--;
  }
  return parts;
}

/** Settles an MPP hold once: every party gets back what it was not charged, in one transaction keyed by the work's id. */
export async function settleMppHold(accounts: Accounts, held: HeldPayment, settlement: { key: string; credits: number; reason: string; requestId: string | null }): Promise<HoldSettlement> {
  const record = held.record as unknown as MppHoldRecord;
  if (!Array.isArray(record.parties) || record.parties.length === 0) throw new Error(`mpp hold ${settlement.key} names no party`);
  if (!Number.isSafeInteger(settlement.credits) || settlement.credits < 0 || settlement.credits > held.credits) {
    throw new Error(`mpp hold ${settlement.key} of ${held.credits} credits cannot settle ${settlement.credits}`);
  }
  const charged = chargeShares(
    record.parties.map((p) => p.held),
    settlement.credits,
  );
  const outcome = await accounts.creditOnce({
    credits: record.parties.map((p, i) => ({
      tenantId: p.tenant_id,
      credits: p.held - (charged[i] ?? 0),
      reason: `${settlement.reason} (MPP ${record.env_id}): ${p.held - (charged[i] ?? 0)} of ${p.held} held credits given back`,
    })),
    key: settleKey(settlement.key),
    requestId: settlement.requestId,
  });
  const givenBack = [...outcome.deltas.values()].reduce((sum, d) => sum + d, 0);
  return { creditsUsed: held.credits - givenBack, already: outcome.already };
}
