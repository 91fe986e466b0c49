import { describe, expect, it } from 'vitest';
import { percentile, perSecond, summarise } from './stats.js';

describe('percentile', () => {
  it('uses the nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 95)).toBe(95);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile(values, 0)).toBe(1);
  });

  it('handles small and empty series', () => {
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([1, 2, 3], 50)).toBe(2);
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
});

describe('summarise', () => {
  it('sorts before ranking and reports mean and max', () => {
    const s = summarise([30, 10, 20, 40]);
    expect(s).toEqual({ n: 4, p50: 20, p95: 40, p99: 40, mean: 25, max: 40 });
  });
});

describe('perSecond', () => {
  it('converts a count over milliseconds', () => {
    expect(perSecond(1169, 2000)).toBe(584.5);
    expect(perSecond(5, 0)).toBe(0);
  });
});
