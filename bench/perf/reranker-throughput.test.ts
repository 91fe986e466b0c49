import { describe, expect, it } from 'vitest';
import { measureRerankerThroughput } from './reranker-throughput.js';
import type { Reranker } from '../../reranker/reranker.js';

describe('measureRerankerThroughput', () => {
  it('scores every pair in calls of up to batchSize passages sharing a query', async () => {
    const calls: Array<[string, number]> = [];
    const counting: Reranker = {
      info: { kind: 'lexical', model: 'counting', source: 'test' },
      score: async (query, passages) => {
        calls.push([query, passages.length]);
        await new Promise((resolve) => setTimeout(resolve, 2));
        return passages.map(() => 0.5);
      },
      close: async () => undefined,
    };
    const pairs = [
      ...Array.from({ length: 5 }, (_, i) => ({ query: 'a', passage: `p${i}` })),
      ...Array.from({ length: 2 }, (_, i) => ({ query: 'b', passage: `q${i}` })),
    ];
    const result = await measureRerankerThroughput(counting, pairs, 2);
    // One warm-up call, then 2 + 2 + 1 passages for query a and 2 for query b.
    expect(calls).toEqual([['a', 2], ['a', 2], ['a', 2], ['a', 1], ['b', 2]]);
    expect(result.pairs_per_s).toBeGreaterThan(0);
    expect(Number.isFinite(result.pairs_per_s)).toBe(true);
    expect(result.ms_per_batch_p50).toBeGreaterThan(0);
    expect(await measureRerankerThroughput(counting, [], 4)).toEqual({ pairs_per_s: 0, ms_per_batch_p50: 0 });
  });
});
