import { describe, expect, it } from 'vitest';
import { equalShares, formatShare, parseShare, SHARE_PATTERN, splitCredits } from './shares.js';

/**
 * The largest-remainder rule written the slow, obvious way, for comparison: hand out the credits one at a time, each
 * to the party whose exact entitlement minus what it holds is largest (ties to the first), using exact rationals.
 * It agrees with the rule because no party can be owed more than one credit past its floor.
 */
function referenceSplit(total: number, shares: readonly string[]): number[] {
  const exact = shares.map((s) => BigInt(total) * (parseShare(s) ?? 0n));
  const held = shares.map(() => 0n);
  // Floors first.
  for (let i = 0; i < shares.length; i++) held[i] = (exact[i] ?? 0n) / 1_000_000n;
  let left = BigInt(total) - held.reduce((a, b) => a + b, 0n);
  while (left > 0n) {
    let best = -1;
    let bestOwed = -1n;
    for (let i = 0; i < shares.length; i++) {
      const owed = (exact[i] ?? 0n) - (held[i] ?? 0n) * 1_000_000n;
      if (owed > bestOwed) {
        best = i;
        bestOwed = owed;
      }
    }
    held[best] = (held[best] ?? 0n) + 1n;
    left--;
  }
  return held.map(Number);
}

describe('share strings', () => {
  it('parses exactly, in millionths, and refuses anything that is not the wire pattern', () => {
    expect(parseShare('1')).toBe(1_000_000n);
    expect(parseShare('0.5')).toBe(500_000n);
    expect(parseShare('0.000001')).toBe(1n);
    expect(parseShare('0.333333')).toBe(333_333n);
    expect(parseShare('0')).toBe(0n);
    expect(parseShare('1.000000')).toBe(1_000_000n);
    // 0.1 + 0.2 is exactly 0.3 here.
    expect((parseShare('0.1') ?? 0n) + (parseShare('0.2') ?? 0n)).toBe(parseShare('0.3'));
    for (const bad of ['', '.5', '0.', '00.5', '01', '0.1234567', '-0.5', '+0.5', '1e-6', '0,5', ' 0.5', '0.5 ', 'NaN', 'Infinity', '0x1', '１']) {
      expect(parseShare(bad), bad).toBeNull();
      expect(SHARE_PATTERN.test(bad), bad).toBe(false);
    }
  });

  it('formats millionths as the shortest share string', () => {
    expect(formatShare(333_333n)).toBe('0.333333');
    expect(formatShare(500_000n)).toBe('0.5');
    expect(formatShare(1_000_000n)).toBe('1');
    expect(formatShare(1n)).toBe('0.000001');
    expect(formatShare(0n)).toBe('0');
  });

  it('makes equal shares that sum to exactly 1', () => {
    expect(equalShares(1)).toEqual(['1']);
    expect(equalShares(3)).toEqual(['0.333334', '0.333333', '0.333333']);
    expect(equalShares(7)).toEqual(['0.142858', '0.142857', '0.142857', '0.142857', '0.142857', '0.142857', '0.142857']);
    for (let n = 1; n <= 64; n++) {
      expect(equalShares(n).reduce((sum, s) => sum + (parseShare(s) ?? 0n), 0n)).toBe(1_000_000n);
    }
  });
});

describe('largest-remainder split', () => {
  const split = (total: number, shares: string[]) => splitCredits(total, shares.map((s) => parseShare(s) ?? -1n));

  it('splits the cases the wire format names', () => {
    expect(split(1, ['0.333333', '0.333333', '0.333334'])).toEqual([0, 0, 1]);
    expect(split(1, ['0.333334', '0.333333', '0.333333'])).toEqual([1, 0, 0]);
    // Two leftover credits: the largest remainder, then the tie between the others goes to the one listed first.
    expect(split(2, ['0.333334', '0.333333', '0.333333'])).toEqual([1, 1, 0]);
    expect(split(3, ['0.333333', '0.333333', '0.333334'])).toEqual([1, 1, 1]);
    expect(split(10, equalShares(7))).toEqual([2, 2, 2, 1, 1, 1, 1]);
    expect(split(1, ['0.000001', '0.999999'])).toEqual([0, 1]);
    expect(split(1_000_000, ['0.000001', '0.999999'])).toEqual([1, 999_999]);
    expect(split(1, ['0.5', '0.25', '0.25'])).toEqual([1, 0, 0]);
    expect(split(1, ['0.25', '0.25', '0.5'])).toEqual([0, 0, 1]);
    // Ties in envelope order.
    expect(split(1, ['0.5', '0.5'])).toEqual([1, 0]);
    expect(split(2, ['0.25', '0.25', '0.25', '0.25'])).toEqual([1, 1, 0, 0]);
    expect(split(3, ['0.25', '0.5', '0.25'])).toEqual([1, 1, 1]);
    expect(split(0, ['0.5', '0.5'])).toEqual([0, 0]);
    expect(split(5, ['0', '1'])).toEqual([0, 5]);
  });

  it('is exact at the largest safe total', () => {
    const total = Number.MAX_SAFE_INTEGER;
    const parts = split(total, ['0.333333', '0.333333', '0.333334']);
    expect(parts.reduce((a, b) => a + b, 0)).toBe(total);
    expect(parts).toEqual(referenceSplit(total, ['0.333333', '0.333333', '0.333334']));
  });

  it('agrees with the reference on 2,000 random splits, always adds up, and never strays a credit from the exact share', () => {
    let seed = 20261123;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let run = 0; run < 2_000; run++) {
      const parties = 1 + Math.floor(random() * 16);
      // Random cut points of 1,000,000 millionths, some of them coinciding (zero shares) and some tiny.
      const cuts = Array.from({ length: parties - 1 }, () => (random() < 0.1 ? 1 : Math.floor(random() * 1_000_001))).sort((a, b) => a - b);
      const bounds = [0, ...cuts, 1_000_000];
      const shares = Array.from({ length: parties }, (_, i) => formatShare(BigInt((bounds[i + 1] ?? 0) - (bounds[i] ?? 0))));
      const total = random() < 0.3 ? Math.floor(random() * 5) : Math.floor(random() * 100_000);
      const parts = split(total, shares);
      expect(parts, `${total} by ${shares.join(',')}`).toEqual(referenceSplit(total, shares));
      expect(parts.reduce((a, b) => a + b, 0)).toBe(total);
      for (const [i, part] of parts.entries()) {
        const exact = (total * Number(parseShare(shares[i] ?? '0'))) / 1_000_000;
        expect(part).toBeGreaterThanOrEqual(Math.floor(exact + 1e-9) - 0);
        expect(part).toBeLessThanOrEqual(Math.floor(exact + 1e-9) + 1);
      }
    }
  });

  it('refuses shares that do not sum to 1, negative shares and bad totals', () => {
    expect(() => split(1, ['0.5', '0.4'])).toThrow(/sum to exactly 1/);
    expect(() => splitCredits(1, [1_500_000n, -500_000n])).toThrow(/negative/);
    expect(() => splitCredits(-1, [1_000_000n])).toThrow(/non-negative/);
    expect(() => splitCredits(1.5, [1_000_000n])).toThrow(/non-negative integer/);
    expect(() => splitCredits(1, [])).toThrow(/at least one/);
  });
});
