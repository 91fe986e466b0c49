import { describe, expect, it } from 'vitest';
import {
  cranfieldGain,
  dcg,
  meanMetrics,
  ndcgAt,
  percentile,
  queryMetrics,
  recallAt,
  reciprocalRankAt,
  successAt,
} from '../bench/eval/metrics.js';
import { evalSearchConfig, evaluateRankers, type EvalQuery } from '../bench/eval/run.js';
import { formatComparisons, parseRows, parseSets } from '../bench/eval/harness.js';
import { pairedComparison } from '../bench/eval/compare.js';
import { isRandomWeightsModel, RANDOM_WEIGHTS_ONNX_SHA256 } from '../bench/eval/reranker-info.js';
import { pgDocsKey } from '../bench/eval/pgdocs.js';
import { NotaryError } from '../core/errors.js';

// a is judged not relevant (gain 0), b gain 3, d gain 1, x gain 2 (never retrieved); c is unjudged.
const judgments = new Map([
  ['a', 0],
  ['b', 3],
  ['d', 1],
  ['x', 2],
]);
const ranked = ['a', 'b', 'c', 'd'];

describe('dcg', () => {
  it('sums linear gains over log2(rank + 1)', () => {
    // 3/log2(2) + 0/log2(3) + 1/log2(4) = 3 + 0 + 0.5
    expect(dcg([3, 0, 1], 10)).toBeCloseTo(3.5, 12);
    expect(dcg([3, 0, 1], 1)).toBe(3);
    expect(dcg([], 10)).toBe(0);
  });
});

describe('ndcgAt', () => {
  it('divides by the DCG of the ideal order of every judged gain, retrieved or not', () => {
    // DCG = 3/log2(3) + 1/log2(5) = 1.89279 + 0.43068 = 2.32347; ideal [3,2,1] = 3 + 2/log2(3) + 1/2 = 4.76186
    expect(ndcgAt(ranked, judgments, 10)).toBeCloseTo(0.48793246, 7);
  });

  it('cuts both the ranking and the ideal list at k', () => {
    // DCG@2 = 3/log2(3) = 1.89279; ideal@2 = 3 + 2/log2(3) = 4.26186
    expect(ndcgAt(ranked, judgments, 2)).toBeCloseTo(0.44412287, 7);
  });

  it('is 1 for the ideal ranking and 0 when nothing is relevant', () => {
    expect(ndcgAt(['b', 'x', 'd'], judgments, 10)).toBeCloseTo(1, 12);
    expect(ndcgAt(['a', 'b'], new Map([['a', 0]]), 10)).toBe(0);
    expect(ndcgAt([], judgments, 10)).toBe(0);
  });

  it('counts a repeated key once, at its first position', () => {
    // ranks b@1, d@2: DCG = 3 + 1/log2(3) = 3.63093; ideal 4.76186
    expect(ndcgAt(['b', 'b', 'd'], judgments, 10)).toBeCloseTo(0.76250249, 7);
  });

  it('treats a negative judged gain as 0', () => {
    expect(ndcgAt(['n', 'b'], new Map([['n', -1], ['b', 1]]), 10)).toBeCloseTo(1 / Math.log2(3), 12);
  });
});

describe('reciprocal rank, recall, success', () => {
  it('MRR@10 is 1 / rank of the first relevant result', () => {
    expect(reciprocalRankAt(ranked, judgments, 10)).toBe(0.5);
    expect(reciprocalRankAt(['c', 'a', 'c', 'd'], judgments, 10)).toBeCloseTo(1 / 3, 12);
    expect(reciprocalRankAt(ranked, judgments, 1)).toBe(0);
    expect(reciprocalRankAt([], judgments, 10)).toBe(0);
  });

  it('Recall@k is the share of relevant keys found in the top k', () => {
    expect(recallAt(ranked, judgments, 100)).toBeCloseTo(2 / 3, 12);
    expect(recallAt(ranked, judgments, 2)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(['b', 'b'], judgments, 100)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(ranked, new Map(), 100)).toBe(0);
  });

  it('Success@k is whether any relevant key is in the top k', () => {
    expect(successAt(ranked, judgments, 1)).toBe(0);
    expect(successAt(ranked, judgments, 2)).toBe(1);
    expect(successAt(['a', 'c'], judgments, 10)).toBe(0);
  });

  it('queryMetrics and meanMetrics put them together', () => {
    const first = queryMetrics(ranked, judgments);
    expect(first).toEqual({
      ndcg_10: expect.closeTo(0.48793246, 7),
      mrr_10: 0.5,
      recall_100: expect.closeTo(2 / 3, 12),
      success_1: 0,
      success_10: 1,
    });
    const second = queryMetrics(['b'], new Map([['b', 2]]));
    expect(second).toEqual({ ndcg_10: 1, mrr_10: 1, recall_100: 1, success_1: 1, success_10: 1 });
    const mean = meanMetrics([first, second]);
    expect(mean.mrr_10).toBe(0.75);
    expect(mean.success_1).toBe(0.5);
    expect(mean.recall_100).toBeCloseTo(5 / 6, 12);
    expect(mean.ndcg_10).toBeCloseTo((0.48793246 + 1) / 2, 7);
    expect(meanMetrics([])).toEqual({ ndcg_10: 0, mrr_10: 0, recall_100: 0, success_1: 0, success_10: 0 });
  });
});

describe('percentile', () => {
  it('uses the nearest rank', () => {
    const values = [5, 1, 3, 2, 4];
    expect(percentile(values, 50)).toBe(3);
    expect(percentile(values, 95)).toBe(5);
    expect(percentile(values, 20)).toBe(1);
    expect(percentile(values, 21)).toBe(2);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('cranfieldGain', () => {
  it('maps grades 1..4 to gains 4..1 and anything else to 0', () => {
    expect([1, 2, 3, 4].map(cranfieldGain)).toEqual([4, 3, 2, 1]);
    expect(cranfieldGain(-1)).toBe(0);
    expect(cranfieldGain(5)).toBe(0);
    expect(cranfieldGain(0)).toBe(0);
    expect(cranfieldGain(2.5)).toBe(0);
  });
});

describe('evaluateRankers', () => {
  it('runs every query through every ranker in rotating turns and averages per ranker', async () => {
    const queries: EvalQuery[] = [
      { id: '1', text: 'one', judgments: new Map([['u:a', 1]]) },
      { id: '2', text: 'two', judgments: new Map([['u:b', 1]]) },
    ];
    const calls: string[] = [];
    const fixed = (name: string, answers: Record<string, string[]>) => async (query: string) => {
      calls.push(`${name}:${query}`);
      return answers[query] ?? [];
    };
    const results = await evaluateRankers(
      queries,
      [
        { name: 'first', ranker: fixed('first', { one: ['https://x/a'], two: ['https://x/c', 'https://x/b'] }) },
        { name: 'second', ranker: fixed('second', { one: [], two: ['https://x/b'] }) },
      ],
      (url) => `u:${url.slice('https://x/'.length)}`,
      { warmup: 1 },
    );
    expect(calls).toEqual(['first:one', 'second:one', 'first:one', 'second:one', 'second:two', 'first:two']);
    const first = results.get('first');
    const second = results.get('second');
    expect(first?.metrics.mrr_10).toBe(0.75);
    expect(first?.metrics.success_1).toBe(0.5);
    expect(first?.mean_results).toBe(1.5);
    expect(second?.metrics.mrr_10).toBe(0.5);
    expect(second?.queries).toBe(2);
    expect(second?.latency_ms.p50).toBeGreaterThanOrEqual(0);
    expect(first?.perQuery.map((m) => m.mrr_10)).toEqual([1, 0.5]);
    expect(second?.perQuery.map((m) => m.mrr_10)).toEqual([0, 1]);
  });
});

describe('harness helpers', () => {
  it('parses --sets and --rows, rejecting unknown names with a NotaryError', () => {
    expect(parseSets(undefined)).toEqual(['cranfield', 'pgdocs', 'pydocs']);
    expect(parseSets('pgdocs, pgdocs')).toEqual(['pgdocs']);
    expect(parseRows('bm25,depth2')).toEqual(['bm25', 'depth2']);
    expect(() => parseRows('bm25,depth9')).toThrow(NotaryError);
    expect(() => parseSets(',')).toThrow(/--sets/);
  });

  it('recognises the random-weight ONNX model by hash or by name', () => {
    expect(isRandomWeightsModel('/m/onnx/model.onnx', RANDOM_WEIGHTS_ONNX_SHA256)).toBe(true);
    expect(isRandomWeightsModel('/m/onnx/model_random_weights_int8.onnx', 'ab')).toBe(true);
    expect(isRandomWeightsModel('/m/onnx/model_quantized.onnx', 'ab')).toBe(false);
  });

  it('prints each set\'s headline comparison: difference, interval, wins and p', () => {
    const scores = { depth1: [0.5, 1, 0, 0.25], depth2: [1, 1, 0.5, 0.25] };
    const comparisons = (['ndcg_10', 'mrr_10'] as const).map((metric) =>
      pairedComparison(metric, { name: 'depth1', scores: scores.depth1 }, { name: 'depth2', scores: scores.depth2 }),
    );
    const set = { queries: 4, documents: 4, passages: 4, index_ms: 1, judged_by: 'test', rows: {}, comparisons };
    const text = formatComparisons({ sets: { pgdocs: set } });
    expect(text.split('\n')).toHaveLength(1);
    expect(text).toMatch(/^pgdocs +mrr_10 +depth1 -> depth2 +\+0\.250 \(95% CI -0\.\d+ \.\. \+0\.\d+\), 2 better \/ 0 worse \/ 2 same, p = 0\.\d+$/);
  });

  it('measures depth 3 and 100 results whatever the serving caps are', () => {
    expect(evalSearchConfig({ max_results: 10, max_depth: 2, rerank_top_n: 30 })).toEqual({ max_results: 100, max_depth: 3, rerank_top_n: 30 });
    expect(evalSearchConfig({ max_results: 500, max_depth: 5 })).toEqual({ max_results: 500, max_depth: 5 });
  });

  it('keys a PostgreSQL docs result by its file name', () => {
    expect(pgDocsKey('http://127.0.0.1:4000/sql-vacuum.html')).toBe('sql-vacuum.html');
    expect(pgDocsKey('http://127.0.0.1:4000/a/b/functions-math.html?x=1')).toBe('functions-math.html');
    expect(pgDocsKey('not a url')).toBe('not a url');
  });
});
