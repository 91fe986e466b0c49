/**
 * Ranking metrics over one query's ranked list of document keys and its judgments (key -> gain, gain > 0 means
 * relevant). Pure functions; a key repeated in the ranking counts at its first position only.
 */

/** Document key -> graded gain. Keys with gain <= 0 are judged but not relevant. */
export type Judgments = ReadonlyMap<string, number>;

function firstOccurrences(ranked: readonly string[], k: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const key of ranked) {
    if (out.length >= k) break;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(key);
  }
  return out;
}

function relevantCount(judgments: Judgments): number {
  let n = 0;
  for (const gain of judgments.values()) if (gain > 0) n++;
  return n;
}

function gainOf(judgments: Judgments, key: string): number {
  return Math.max(0, judgments.get(key) ?? 0);
}

/** Discounted cumulative gain with linear gains (trec_eval's ndcg_cut): sum of gain_i / log2(i + 1), i from 1. */
export function dcg(gains: readonly number[], k: number): number {
  let total = 0;
  const n = Math.min(k, gains.length);
  for (let i = 0; i < n; i++) total += Math.max(0, gains[i] ?? 0) / Math.log2(i + 2);
  return total;
}

/** nDCG@k: DCG of the ranking over DCG of the ideal ordering of every judged gain. 0 when nothing is relevant. */
export function ndcgAt(ranked: readonly string[], judgments: Judgments, k: number): number {
  const ideal = dcg(
    [...judgments.values()].filter((g) => g > 0).sort((a, b) => b - a),
    k,
  );
  if (ideal === 0) return 0;
  return dcg(firstOccurrences(ranked, k).map((key) => gainOf(judgments, key)), k) / ideal;
}

/** 1 / rank of the first relevant key within the top k, else 0. */
export function reciprocalRankAt(ranked: readonly string[], judgments: Judgments, k: number): number {
  const top = firstOccurrences(ranked, k);
  const index = top.findIndex((key) => gainOf(judgments, key) > 0);
  return index < 0 ? 0 : 1 / (index + 1);
}

/** Share of the relevant keys found within the top k; 0 when nothing is relevant. */
export function recallAt(ranked: readonly string[], judgments: Judgments, k: number): number {
  const relevant = relevantCount(judgments);
  if (relevant === 0) return 0;
  const found = firstOccurrences(ranked, k).filter((key) => gainOf(judgments, key) > 0).length;
  return found / relevant;
}

/** 1 when a relevant key is within the top k, else 0. */
export function successAt(ranked: readonly string[], judgments: Judgments, k: number): number {
  return reciprocalRankAt(ranked, judgments, k) > 0 ? 1 : 0;
}

export interface QueryMetrics {
  ndcg_10: number;
  mrr_10: number;
  recall_100: number;
  success_1: number;
  success_10: number;
}

export function queryMetrics(ranked: readonly string[], judgments: Judgments): QueryMetrics {
  return {
    ndcg_10: ndcgAt(ranked, judgments, 10),
    mrr_10: reciprocalRankAt(ranked, judgments, 10),
    recall_100: recallAt(ranked, judgments, 100),
    success_1: successAt(ranked, judgments, 1),
    success_10: successAt(ranked, judgments, 10),
  };
}

/** Mean of each metric over the queries (all zero for no queries). */
export function meanMetrics(perQuery: readonly QueryMetrics[]): QueryMetrics {
  const sum: QueryMetrics = { ndcg_10: 0, mrr_10: 0, recall_100: 0, success_1: 0, success_10: 0 };
  for (const m of perQuery) {
    sum.ndcg_10 += m.ndcg_10;
    sum.mrr_10 += m.mrr_10;
    sum.recall_100 += m.recall_100;
    sum.success_1 += m.success_1;
    sum.success_10 += m.success_10;
  }
  const n = Math.max(1, perQuery.length);
  return {
    ndcg_10: sum.ndcg_10 / n,
    mrr_10: sum.mrr_10 / n,
    recall_100: sum.recall_100 / n,
    success_1: sum.success_1 / n,
    success_10: sum.success_10 / n,
  };
}

/** Nearest-rank percentile (p in 0..100) of the values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((Math.min(100, Math.max(0, p)) / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)] as number;
}

/**
 * Cranfield grade -> gain: 1 (complete answer) .. 4 (minimal interest) become 4 .. 1 (gain = 5 - grade). Grade 5
 * ("of no interest") and -1 ("no relevant document known", present in some copies) are not relevant: gain 0.
 */
export function cranfieldGain(grade: number): number {
  return Number.isInteger(grade) && grade >= 1 && grade <= 4 ? 5 - grade : 0;
}
