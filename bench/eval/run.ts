import { performance } from 'node:perf_hooks';
import type { SearchIndex } from '../../indexer/search-index.js';
import type { SearchPipeline } from '../../search/pipeline.js';
import { meanMetrics, percentile, queryMetrics, type Judgments, type QueryMetrics } from './metrics.js';

export interface EvalQuery {
  id: string;
  text: string;
  /** Document key (see keyOf in evaluateRanker) -> gain. */
  judgments: Judgments;
}

/** One query in, ranked result URLs out (best first, one per document). */
export type Ranker = (query: string) => Promise<string[]>;

export interface LatencySummary {
  p50: number;
  p95: number;
  mean: number;
}

export interface RowResult {
  queries: number;
  metrics: QueryMetrics;
  latency_ms: LatencySummary;
  /** Mean length of the result lists (a pipeline returns fewer than Recall@100 looks at). */
  mean_results: number;
}

/** A row with its per-query metrics (for paired comparisons; not written to the report). */
export interface RankedRow extends RowResult {
  perQuery: readonly QueryMetrics[];
}

/** Results a BM25 row and a pipeline row may return: enough for Recall@100. */
export const EVAL_RESULT_DEPTH = 100;

/** Deepest row measured, whatever search.max_depth the server would allow (the pipeline clamps to it). */
export const EVAL_MAX_DEPTH = 3;

/** The search settings the eval runs with: the configured ones, with the result list and depth cap raised. */
export function evalSearchConfig<T extends { max_results: number; max_depth: number }>(search: T): T {
  return { ...search, max_results: Math.max(search.max_results, EVAL_RESULT_DEPTH), max_depth: Math.max(search.max_depth, EVAL_MAX_DEPTH) };
}

/** BM25 alone: the index's order, best passage per document. */
export function bm25Ranker(index: SearchIndex, depth = EVAL_RESULT_DEPTH): Ranker {
  return async (query) => (await index.search(query, { limit: depth, perPageLimit: 1 })).map((hit) => hit.url);
}

/** The search pipeline at a depth (retrieve -> rerank -> one result per URL). */
export function pipelineRanker(pipeline: SearchPipeline, depth: number): Ranker {
  return async (query) => (await pipeline.search({ query, depth })).results.map((r) => r.url);
}

function summarise(perQuery: readonly QueryMetrics[], latencies: readonly number[], results: number): RowResult {
  const n = Math.max(1, perQuery.length);
  return {
    queries: perQuery.length,
    metrics: meanMetrics(perQuery),
    latency_ms: {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      mean: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
    },
    mean_results: results / n,
  };
}

export interface RankerRunOptions {
  /** Unmeasured queries run first through every ranker (JIT, model session, page cache). Default 3. */
  warmup?: number;
  onProgress?: (done: number, total: number) => void;
}

/**
 * Runs every query through every ranker once and averages the metrics per ranker, with result URLs mapped to judgment
 * keys by `keyOf`. Rankers take turns query by query (the first one rotating), so a burst of load on a shared
 * machine lands on all of them alike and their latencies stay comparable. Latency is the wall time of each call.
 */
export async function evaluateRankers<Name extends string>(
  queries: readonly EvalQuery[],
  rankers: ReadonlyArray<{ name: Name; ranker: Ranker }>,
  keyOf: (url: string) => string,
  options: RankerRunOptions = {},
): Promise<Map<Name, RankedRow>> {
  for (const q of queries.slice(0, options.warmup ?? 3)) {
    for (const { ranker } of rankers) await ranker(q.text);
  }
  const state = rankers.map(() => ({ perQuery: [] as QueryMetrics[], latencies: [] as number[], results: 0 }));
  for (const [i, q] of queries.entries()) {
    for (let turn = 0; turn < rankers.length; turn++) {
      const r = (i + turn) % rankers.length;
      const { ranker } = rankers[r] as { ranker: Ranker };
      const row = state[r] as (typeof state)[number];
      const started = performance.now();
      const urls = await ranker(q.text);
      row.latencies.push(performance.now() - started);
      row.results += urls.length;
      row.perQuery.push(queryMetrics(urls.map(keyOf), q.judgments));
    }
    options.onProgress?.(i + 1, queries.length);
  }
  return new Map(rankers.map(({ name }, r) => {
    const row = state[r] as (typeof state)[number];
    return [name, { ...summarise(row.perQuery, row.latencies, row.results), perQuery: row.perQuery }];
  }));
}

/** evaluateRankers for one ranker. */
export async function evaluateRanker(
  queries: readonly EvalQuery[],
  ranker: Ranker,
  keyOf: (url: string) => string,
  options: RankerRunOptions = {},
): Promise<RankedRow> {
  const results = await evaluateRankers(queries, [{ name: 'row', ranker }], keyOf, options);
  return results.get('row') as RankedRow;
}
