import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileDotWat } from '../../scripts/build-dot-wasm.js';
import { DOT_WASM_BASE64 } from './dot-wasm.js';
import { VectorMatrix } from './dot-scanner.js';

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31 - 0.5;
  };
}

function exact(matrix: Float32Array, query: Float32Array, rows: number, d: number): number[] {
  return Array.from({ length: rows }, (_, r) => {
    let s = 0;
    for (let j = 0; j < d; j++) s += matrix[r * d + j]! * query[j]!;
    return s;
  });
}

describe('VectorMatrix', () => {
  it('holds the bytes compiled from dot.wat (regenerate with scripts/build-dot-wasm.ts)', async () => {
    expect(readFileSync(new URL('./dot.wat', import.meta.url), 'utf8')).toContain('f32x4.mul');
    expect(Buffer.from(await compileDotWat()).toString('base64')).toBe(DOT_WASM_BASE64);
  });

  it.each([
    ['SIMD', 384, true],
    ['JavaScript', 384, false],
    ['JavaScript for dimensions not a multiple of 8', 6, true],
  ] as const)('scores every row like a float64 dot product (%s), across growth', (_name, d, simd) => {
    const random = seeded(d + (simd ? 1 : 0));
    const store = new VectorMatrix(d, 3, { simd });
    expect(store.simd).toBe(simd && d % 8 === 0);
    const rows = 1000;
    for (let r = 0; r < rows; r++) {
      store.reserve(r + 1);
      for (let j = 0; j < d; j++) store.matrix[r * d + j] = random();
    }
    expect(store.capacity).toBeGreaterThanOrEqual(rows);
    const query = Float32Array.from({ length: d }, random);
    const want = exact(store.matrix, query, rows, d);
    const got = store.scores(query, rows);
    expect(got).toHaveLength(rows);
    for (let r = 0; r < rows; r++) expect(Math.abs(got[r]! - want[r]!)).toBeLessThan(1e-4);
    // A scan of fewer rows reads only those.
    expect(Array.from(store.scores(query, 2))).toEqual(Array.from(got.slice(0, 2)));
  });
});
