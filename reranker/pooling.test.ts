import { describe, expect, it } from 'vitest';
import { clampUnit, cosineToUnit, dot, l2Normalize, meanPoolNormalize, sigmoid } from './pooling.js';

describe('mean pooling and normalisation', () => {
  it('averages only the tokens under the attention mask, then normalises', () => {
    // [seq=3, dim=2]; the third token is padding and must not count.
    const hidden = [1, 2, 3, 6, 100, 100];
    const pooled = meanPoolNormalize(hidden, [1, 1, 0], 3, 2);
    // mean = (2, 4); |(2,4)| = sqrt(20)
    expect(pooled[0]).toBeCloseTo(2 / Math.sqrt(20), 12);
    expect(pooled[1]).toBeCloseTo(4 / Math.sqrt(20), 12);
  });

  it('reads one row of a [batch, seq, dim] block with bigint masks', () => {
    const hidden = [9, 9, 9, 9, /* row 1: */ 0, 3, 4, 0];
    const mask = [1n, 1n, 1n, 0n];
    const pooled = meanPoolNormalize(hidden, mask, 2, 2, 4, 2);
    // row 1, only its first token: (0, 3) -> (0, 1)
    expect(Array.from(pooled)).toEqual([0, 1]);
  });

  it('keeps an all-masked or zero vector at zero instead of NaN', () => {
    expect(Array.from(meanPoolNormalize([1, 2], [0], 1, 2))).toEqual([0, 0]);
    expect(Array.from(l2Normalize([0, 0, 0]))).toEqual([0, 0, 0]);
    expect(Array.from(l2Normalize([Number.NaN, 1]))).toEqual([0, 0]);
  });

  it('maps cosine of unit vectors onto [0, 1]', () => {
    const a = l2Normalize([1, 0]);
    const b = l2Normalize([0, 5]);
    expect(cosineToUnit(dot(a, a))).toBeCloseTo(1, 12);
    expect(cosineToUnit(dot(a, b))).toBeCloseTo(0.5, 12);
    expect(cosineToUnit(dot(a, l2Normalize([-2, 0])))).toBeCloseTo(0, 12);
    expect(cosineToUnit(1.0000001)).toBe(1);
  });

  it('sigmoid and clamp never let NaN or out-of-range values out', () => {
    expect(sigmoid(0)).toBe(0.5);
    expect(sigmoid(Number.NaN)).toBe(0);
    expect(sigmoid(1e9)).toBe(1);
    expect(sigmoid(-1e9)).toBe(0);
    expect(clampUnit(Number.NaN)).toBe(0);
    expect(clampUnit(-0.1)).toBe(0);
    expect(clampUnit(Number.POSITIVE_INFINITY)).toBe(1);
  });
});
