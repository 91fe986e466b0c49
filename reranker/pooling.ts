/** Numeric helpers shared by the ONNX scorers; pure so they can be tested on handmade arrays. */

/** sigmoid(logit) within [0, 1]; NaN maps to 0. */
export function sigmoid(logit: number): number {
  if (Number.isNaN(logit)) return 0;
  return clampUnit(1 / (1 + Math.exp(-logit)));
}

/** Clamps to [0, 1]; NaN maps to 0. */
export function clampUnit(value: number): number {
  if (!(value > 0)) return 0;
  return value < 1 ? value : 1;
}

/**
 * Mean of the token vectors of one sequence where attention mask is 1, then L2-normalised.
 * `hidden` is a row-major [seq, dim] block starting at `offset` (so a whole [batch, seq, dim] output can be passed).
 * A zero vector (empty mask or all-zero states) stays zero rather than becoming NaN.
 */
export function meanPoolNormalize(
  hidden: ArrayLike<number>,
  mask: ArrayLike<number | bigint>,
  seqLength: number,
  dim: number,
  offset = 0,
  maskOffset = 0,
): Float64Array {
  const pooled = new Float64Array(dim);
  let count = 0;
  for (let t = 0; t < seqLength; t++) {
    if (Number(mask[maskOffset + t]) === 0) continue;
    count++;
    const base = offset + t * dim;
    for (let d = 0; d < dim; d++) pooled[d] = (pooled[d] ?? 0) + (hidden[base + d] ?? 0);
  }
  if (count > 0) for (let d = 0; d < dim; d++) pooled[d] = (pooled[d] ?? 0) / count;
  return l2Normalize(pooled);
}

/** Scales to unit length; a zero (or non-finite) vector becomes all zeros. */
export function l2Normalize(vector: ArrayLike<number>): Float64Array {
  let squares = 0;
  for (let i = 0; i < vector.length; i++) squares += (vector[i] ?? 0) ** 2;
  const norm = Math.sqrt(squares);
  const out = new Float64Array(vector.length);
  if (!(norm > 0) || !Number.isFinite(norm)) return out;
  for (let i = 0; i < vector.length; i++) out[i] = (vector[i] ?? 0) / norm;
  return out;
}

/** Dot product, which is the cosine for unit vectors. */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

/** Cosine similarity of two unit vectors mapped from [-1, 1] onto [0, 1]. */
export function cosineToUnit(cosine: number): number {
  return clampUnit((cosine + 1) / 2);
}
