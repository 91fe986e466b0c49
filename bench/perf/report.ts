import type { LatencySummary } from './stats.js';

/** The "Must show" benchmark targets. */
export const TARGETS = {
  crawl_pages_per_s_min: 100,
  index_passages_per_s_min: 500,
  search_outside_reranker_p50_ms_max: 20,
} as const;

export interface TargetCheck {
  name: string;
  target: string;
  actual: number;
  met: boolean;
}

export interface SearchSeries {
  rerank_top_n: number;
  queries: number;
  /** Mean passages the reranker scored per query. */
  reranked_mean: number;
  total_ms: LatencySummary;
  /** total_ms - rerank_ms: retrieval, grouping, snippets, everything but the reranker. */
  outside_reranker_ms: LatencySummary;
  retrieve_ms: LatencySummary;
  rerank_ms: LatencySummary;
  /** Share of queries whose target page is in the top 10 (meaningless with random-weight reranking). */
  known_item_hit_at_10: number;
  /** Pairs per second inside the searches: pairs scored / time in reranker.score. */
  reranker_in_search_pairs_per_s: number | null;
  /** The same candidate lists scored again in isolation (measureRerankerThroughput). */
  reranker_isolated: { queries: number; pairs: number; pairs_per_s: number; ms_per_batch_p50: number } | null;
}

export function checkTargets(input: {
  crawlPagesPerS: number;
  indexPassagesPerS: number;
  search: readonly SearchSeries[];
}): TargetCheck[] {
  const checks: TargetCheck[] = [
    {
      name: 'crawl_pages_per_s',
      target: `>= ${TARGETS.crawl_pages_per_s_min}`,
      actual: input.crawlPagesPerS,
      met: input.crawlPagesPerS >= TARGETS.crawl_pages_per_s_min,
    },
    {
      name: 'index_passages_per_s',
      target: `>= ${TARGETS.index_passages_per_s_min}`,
      actual: input.indexPassagesPerS,
      met: input.indexPassagesPerS >= TARGETS.index_passages_per_s_min,
    },
  ];
  for (const series of input.search) {
    checks.push({
      name: `search_outside_reranker_p50_ms@rerank_top_n=${series.rerank_top_n}`,
      target: `<= ${TARGETS.search_outside_reranker_p50_ms_max}`,
      actual: series.outside_reranker_ms.p50,
      met: series.outside_reranker_ms.p50 <= TARGETS.search_outside_reranker_p50_ms_max,
    });
  }
  return checks;
}

function pad(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
}

/** Plain-text table: first column left-aligned, the rest right-aligned. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [pad(header, widths), rule, ...rows.map((r) => pad(r, widths))].join('\n');
}

export function formatSearchTable(series: readonly SearchSeries[]): string {
  const fmt = (x: number) => x.toFixed(1);
  return formatTable(
    ['rerank_top_n', 'total p50/p95/p99 ms', 'outside reranker p50/p95/p99 ms', 'rerank p50 ms', 'pairs/s in search', 'pairs/s isolated'],
    series.map((s) => [
      String(s.rerank_top_n),
      `${fmt(s.total_ms.p50)} / ${fmt(s.total_ms.p95)} / ${fmt(s.total_ms.p99)}`,
      `${fmt(s.outside_reranker_ms.p50)} / ${fmt(s.outside_reranker_ms.p95)} / ${fmt(s.outside_reranker_ms.p99)}`,
      fmt(s.rerank_ms.p50),
      s.reranker_in_search_pairs_per_s === null ? '-' : fmt(s.reranker_in_search_pairs_per_s),
      s.reranker_isolated === null ? '-' : fmt(s.reranker_isolated.pairs_per_s),
    ]),
  );
}

export function formatTargets(checks: readonly TargetCheck[]): string {
  return formatTable(
    ['target', 'wanted', 'actual', 'met'],
    checks.map((c) => [c.name, c.target, String(c.actual), c.met ? 'yes' : 'NO']),
  );
}
