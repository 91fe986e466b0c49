import type { Reranker } from '../../reranker/reranker.js';

export interface RerankerThroughput {
  pairs_per_s: number;
  /** Median wall time of one score() call of `batchSize` pairs. */
  ms_per_batch_p50: number;
}

export interface BenchPair {
  query: string;
  passage: string;
}

/**
 * Scores `pairs` in score() calls of up to `batchSize` consecutive pairs sharing a query (a call is what one
 * search makes), after one warm-up call. Throughput counts every pair over the total wall time.
 */
export async function measureRerankerThroughput(
  reranker: Reranker,
  pairs: readonly BenchPair[],
  batchSize: number,
): Promise<RerankerThroughput> {
  if (pairs.length === 0) return { pairs_per_s: 0, ms_per_batch_p50: 0 };
  const size = Math.max(1, Math.floor(batchSize));
  const calls: Array<{ query: string; passages: string[] }> = [];
  for (const pair of pairs) {
    const last = calls[calls.length - 1];
    if (last && last.query === pair.query && last.passages.length < size) last.passages.push(pair.passage);
    else calls.push({ query: pair.query, passages: [pair.passage] });
  }
  const warmUp = calls[0];
  if (warmUp) await reranker.score(warmUp.query, warmUp.passages);
  const durations: number[] = [];
  const started = performance.now();
  for (const call of calls) {
    const t0 = performance.now();
    await reranker.score(call.query, call.passages);
    durations.push(performance.now() - t0);
  }
  const totalMs = performance.now() - started;
  durations.sort((a, b) => a - b);
  const median = durations[Math.floor((durations.length - 1) / 2)] ?? 0;
  return { pairs_per_s: (pairs.length / totalMs) * 1000, ms_per_batch_p50: median };
}
