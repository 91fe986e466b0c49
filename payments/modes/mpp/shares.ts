/** A party's share as the envelope writes it: a decimal string with at most 6 decimals (field-notes §5). */
export const SHARE_PATTERN = /^(0|[1-9]\d*)(\.\d{1,6})?$/;

/** Shares are counted in millionths: "1" is 1,000,000 and "0.000001" is 1. */
export const SHARE_SCALE = 1_000_000n;

/** The share in millionths, exactly (never through a float), or null when it is not a share string. */
export function parseShare(value: string): bigint | null {
  if (!SHARE_PATTERN.test(value)) return null;
  const [whole = '0', fraction = ''] = value.split('.');
  return BigInt(whole) * SHARE_SCALE + BigInt(fraction.padEnd(6, '0'));
}

/** Writes millionths as the shortest share string: 333_333n is "0.333333", 500_000n is "0.5", 1_000_000n is "1". */
export function formatShare(millionths: bigint): string {
  if (millionths < 0n) throw new RangeError('a share is never negative');
  const whole = millionths / SHARE_SCALE;
  const fraction = (millionths % SHARE_SCALE).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

/**
 * Splits `total` whole credits by shares (in millionths, summing to exactly 1,000,000) with the largest-remainder
 * rule: each party gets floor(total x share); the credits left over go one each to the largest fractional parts, ties
 * to the party listed first. The parts always add up to `total`, and no party gets more than one credit above its
 * exact share or less than its floor.
 */
export function splitCredits(total: number, shares: readonly bigint[]): number[] {
  if (!Number.isSafeInteger(total) || total < 0) throw new RangeError(`total must be a non-negative integer, got ${total}`);
  if (shares.length === 0) throw new RangeError('at least one share is needed');
  if (shares.some((share) => share < 0n)) throw new RangeError('a share is never negative');
  if (shares.reduce((sum, share) => sum + share, 0n) !== SHARE_SCALE) throw new RangeError('shares must sum to exactly 1');
  const exact = shares.map((share) => BigInt(total) * share);
  const parts = exact.map((value) => value / SHARE_SCALE);
  const leftover = BigInt(total) - parts.reduce((sum, part) => sum + part, 0n);
  // Largest remainder first; Array.prototype.sort is stable, so equal remainders keep the envelope order.
  const order = exact.map((value, index) => ({ index, remainder: value % SHARE_SCALE })).sort((a, b) => (a.remainder === b.remainder ? 0 : a.remainder > b.remainder ? -1 : 1));
  for (let i = 0n; i < leftover; i++) {
    const next = order[Number(i)];
    if (!next) throw new Error('more leftover credits than parties');
    parts[next.index] = (parts[next.index] ?? 0n) + 1n;
  }
  return parts.map((part) => Number(part));
}

/**
 * Equal shares for `count` parties that sum to exactly 1: 1/count in millionths, the leftover millionths one each to
 * the first parties (3 parties: "0.333334", "0.333333", "0.333333").
 */
export function equalShares(count: number): string[] {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
  const base = SHARE_SCALE / BigInt(count);
  const extra = Number(SHARE_SCALE - base * BigInt(count));
  return Array.from({ length: count }, (_, i) => formatShare(base + (i < extra ? 1n : 0n)));
}
