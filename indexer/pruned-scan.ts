import { selectPerPage } from './page-cap.js';
import type { VectorHit } from './vector-index.js';
import type { VectorCache } from './vector-cache.js';

/** Rows from which the exact search prunes with the int8 first pass (below, scanning every row in float is as cheap). */
export const PRUNE_FROM_ROWS = 2_048;

/**
 * exactSearch's answer (without page ids) from the float scores of the rows that can be in it, found by an int8 first
 * pass over every row; null where pruning does not apply (no int8 pass here, too few rows, a row with a non-finite
 * value, fewer than `limit` rows allowed). The answer is the same as from every row's float score.
 *
 * The scan of every row's float32s is bound by memory bandwidth (a search read 11 MB at 7,442 vectors of 384
 * dimensions, about 1 ms); the int8 copies are a quarter of that. For each row, the int8 dot product a and a bound B
 * such that the float scan's score x is within [a - B, a + B]: with the row v = s·c + e (|e_j| ≤ s/2) and the query
 * q = t·k + f (|f_j| ≤ t/2), |q·v - s·t·(c·k)| ≤ s·t·((|k|₁ + |c|₁)/2 + d/4), and the float sum is within
 * γ·max|q|·Σ|v_j| ≤ γ·max|q|·s·(|c|₁ + d/2) of q·v (γ = (d + 4)·2⁻²⁴, more than the error of any order of summation
 * of d products); a margin covers the float64 arithmetic of the bounds.
 * The best `limit` lower bounds, at most `perPage` a page, give T: those rows score at least T, so a row whose upper
 * bound is below T is beaten by `limit` rows that the per-page cap cannot all skip, and is never taken.
 */
export function prunedSearch(
  cache: VectorCache,
  query: Float32Array,
  limit: number,
  perPage: number,
  allow: ((row: number) => boolean) | undefined,
): VectorHit[] | null {
  const candidates = prunedCandidates(cache, query, limit, perPage, allow);
  if (!candidates) return null;
  // The float scores of the candidates, then exactSearch's order (higher score, then lower id) and per-page cap.
  if (scoresScratch.length < cache.size) scoresScratch = new Float32Array(cache.ids.length);
  const scores = scoresScratch;
  cache.store.scoreRows(query, candidates, scores);
  const ids = cache.ids;
  candidates.sort((a, b) => scores[b]! - scores[a]! || ids[a]! - ids[b]!);
  return selectPerPage(candidates, limit, perPage, (row) => cache.pageIds[row]!).map((row) => ({ id: ids[row]!, pageId: cache.pageIds[row]!, score: scores[row]! }));
}

/** Scratch bounds and scores of the rows (one search runs at a time on this thread: reused, grown as caches grow). */
let lowerScratch = new Float64Array(0);
let upperScratch = new Float64Array(0);
let scoresScratch = new Float32Array(0);
/** Each row's histogram bucket in cappedThreshold (-1: a row left out). */
let bucketScratch = new Int16Array(0);

/** The rows that may be among the answer (every other row is beaten for sure); null where pruning does not apply. */
export function prunedCandidates(cache: VectorCache, query: Float32Array, limit: number, perPage: number, allow: ((row: number) => boolean) | undefined): number[] | null {
  const n = cache.size;
  if (n < PRUNE_FROM_ROWS || limit <= 0) return null;
  const first = cache.store.approximate(query, n);
  if (!first) return null;
  const d = cache.dimensions;
  const { dots, scale, scaledL1, queryScale, queryL1, queryMax } = first;
  const gamma = (d + 4) * 2 ** -24 * 1.01;
  // B = s·t·((|k|₁ + |c|₁)/2 + d/4) + γ·max|q|·s·(|c|₁ + d/2) = s·alpha + s·|c|₁·beta.
  const alpha = queryScale * (queryL1 / 2 + d / 4) + gamma * queryMax * (d / 2);
  const beta = queryScale / 2 + gamma * queryMax;
  const margin = 1 + 1e-9;
  if (lowerScratch.length < n) {
    lowerScratch = new Float64Array(cache.ids.length);
    upperScratch = new Float64Array(cache.ids.length);
  }
  const lower = lowerScratch;
  const upper = upperScratch;
  let max = Number.NEGATIVE_INFINITY;
  let min = Number.POSITIVE_INFINITY;
  for (let row = 0; row < n; row++) {
    const s = scale[row]!;
    if (s !== s) return null; // NaN: a row with a non-finite value
    if (allow !== undefined && !allow(row)) {
      lower[row] = Number.NEGATIVE_INFINITY;
      upper[row] = Number.NEGATIVE_INFINITY;
      continue;
    }
    const a = s * queryScale * dots[row]!;
    let b = (s * alpha + scaledL1[row]! * beta) * margin;
    b += 2 ** -40 * (Math.abs(a) + b) + 1e-30;
    const low = a - b;
    lower[row] = low;
    upper[row] = a + b;
    if (low > max) max = low;
    if (low < min) min = low;
  }
  if (!(max > Number.NEGATIVE_INFINITY)) return null;
  const threshold = cappedThreshold(lower, cache.pageIds, n, limit, perPage, min, max);
  if (!(threshold > Number.NEGATIVE_INFINITY)) return null;
  const candidates: number[] = [];
  for (let row = 0; row < n; row++) if (upper[row]! >= threshold) candidates.push(row);
  return candidates;
}

/** Buckets of the lower bounds' range that threshold search counts rows in. */
const BUCKETS = 1_024;
const counts = new Uint32Array(BUCKETS);

/**
 * A T such that `limit` rows, at most `perPage` of a page, have lower bounds of at least T (as high as a cheap search
 * finds: the rows of the top buckets of a histogram of [min, max], sorted, taken page-capped); -Infinity when there
 * are no such rows.
 */
function cappedThreshold(lower: Float64Array, pageIds: Float64Array, n: number, limit: number, perPage: number, min: number, max: number): number {
  const scaleTo = max > min ? BUCKETS / (max - min) : 0;
  if (bucketScratch.length < n) bucketScratch = new Int16Array(lower.length);
  const bucket = bucketScratch;
  counts.fill(0);
  for (let row = 0; row < n; row++) {
    const v = lower[row]!;
    if (v === Number.NEGATIVE_INFINITY) {
      bucket[row] = -1;
      continue;
    }
    const b = Math.min(BUCKETS - 1, Math.floor((v - min) * scaleTo));
    bucket[row] = b;
    counts[b]!++;
  }
  // Starting from twice the limit where the page cap binds: the page cap most often leaves fewer than `limit` of the
  // first `limit` rows (one pass fewer; the threshold is the same, the rows of fewer buckets being a prefix of these).
  for (let want = perPage < limit ? limit * 2 : limit; ; want *= 2) {
    let from = BUCKETS - 1;
    for (let seen = 0; from > 0; from--) {
      seen += counts[from]!;
      if (seen >= want) break;
    }
    const rows: number[] = [];
    for (let row = 0; row < n; row++) if (bucket[row]! >= from) rows.push(row);
    rows.sort((a, b) => lower[b]! - lower[a]!);
    const taken = selectPerPage(rows, limit, perPage, (row) => pageIds[row]!);
    if (taken.length >= limit) return lower[taken[limit - 1]!]!;
    if (from === 0) return Number.NEGATIVE_INFINITY;
  }
}
