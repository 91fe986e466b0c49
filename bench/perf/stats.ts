/** Latency summary of one series, in milliseconds rounded to 0.01. */
export interface LatencySummary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile (p in 0..100) of an ascending array; NaN when empty. */
export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const rank = Math.max(1, Math.ceil((p / 100) * sortedAscending.length));
  return sortedAscending[rank - 1] as number;
}

export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

export function summarise(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((acc, v) => acc + v, 0);
  return {
    n: sorted.length,
    p50: round2(percentile(sorted, 50)),
    p95: round2(percentile(sorted, 95)),
    p99: round2(percentile(sorted, 99)),
    mean: round2(sorted.length ? sum / sorted.length : Number.NaN),
    max: round2(sorted.at(-1) ?? Number.NaN),
  };
}

/** Items per second, 0 when no time passed. */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? Math.round((count / ms) * 1000 * 10) / 10 : 0;
}
