import { describe, expect, it } from 'vitest';
import { checkTargets, formatTable, type SearchSeries } from './report.js';
import { summarise } from './stats.js';

function series(topN: number, outside: number[]): SearchSeries {
  return {
    rerank_top_n: topN,
    queries: outside.length,
    reranked_mean: topN,
    total_ms: summarise(outside.map((x) => x + topN)),
    outside_reranker_ms: summarise(outside),
    retrieve_ms: summarise(outside),
    rerank_ms: summarise(outside.map(() => topN)),
    known_item_hit_at_10: 0.5,
    reranker_in_search_pairs_per_s: null,
    reranker_isolated: null,
  };
}

describe('checkTargets', () => {
  it('marks each target met or missed at its boundary', () => {
    const checks = checkTargets({
      crawlPagesPerS: 100,
      indexPassagesPerS: 499.9,
      search: [series(0, [5, 6, 7]), series(50, [19, 21, 30])],
    });
    expect(checks.map((c) => [c.name, c.met])).toEqual([
      ['crawl_pages_per_s', true],
      ['index_passages_per_s', false],
      ['search_outside_reranker_p50_ms@rerank_top_n=0', true],
      ['search_outside_reranker_p50_ms@rerank_top_n=50', false],
    ]);
    expect(checks[3]?.actual).toBe(21);
  });
});

describe('formatTable', () => {
  it('aligns columns', () => {
    const table = formatTable(['name', 'n'], [['a', '1'], ['longer', '100']]);
    expect(table.split('\n')).toEqual(['name      n', '------  ---', 'a         1', 'longer  100']);
  });
});
