import { describe, expect, it } from 'vitest';
import { prunedCandidates, PRUNE_FROM_ROWS } from './pruned-scan.js';
import { exactSearch, selectHits, VectorCache } from './vector-cache.js';
import type { VectorHit } from './vector-index.js';

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31 - 0.5;
  };
}

const d = 384;

function normalised(values: Float32Array): Float32Array {
  let norm = 0;
  for (const v of values) norm += v * v;
  return values.map((v) => v / Math.sqrt(norm));
}

/** Rows around a few topics (so scores spread as real passages' do), pages of 1 to 8 passages, some duplicates. */
function filled(rows: number, random: () => number): VectorCache {
  const cache = new VectorCache(d, 16);
  const topics = Array.from({ length: 20 }, () => normalised(Float32Array.from({ length: d }, random)));
  let page = 1;
  for (let id = 1; id <= rows; id++) {
    if (random() > 0.3) page++;
    const row = cache.put(id, page, 1, `h${page % 7}.test`);
    const duplicate = id > 10 && random() > 0.97;
    const topic = topics[Math.floor((random() + 0.5) * topics.length) % topics.length]!;
    const vector = duplicate ? cache.matrix.slice((row - 1) * d, row * d) : normalised(topic.map((t) => t + random() * 0.8));
    cache.matrix.set(vector, row * d);
  }
  return cache;
}

/** exactSearch's answer from every row's float score (the search as it was before pruning). */
function unpruned(cache: VectorCache, query: Float32Array, limit: number, perPage: number, allow?: (row: number) => boolean): VectorHit[] {
  const scores = Float32Array.from(cache.store.scores(query, cache.size));
  if (!allow) return selectHits(cache, scores, limit, perPage);
  for (let row = 0; row < cache.size; row++) if (!allow(row)) scores[row] = Number.NEGATIVE_INFINITY;
  return selectHits(cache, scores, limit, perPage).filter((hit) => hit.score !== Number.NEGATIVE_INFINITY);
}

describe('exact search pruned by the int8 first pass', () => {
  it('gives the answer (ids, pages, float scores, order) of every row scored in float, and scores few rows in float', () => {
    const random = seeded(7);
    const cache = filled(6_000, random);
    expect(cache.store.approximates).toBe(true);
    const queries = [
      ...Array.from({ length: 12 }, () => normalised(Float32Array.from({ length: d }, random))),
      cache.matrix.slice(100 * d, 101 * d), // a stored row itself (and its duplicates)
      new Float32Array(d), // all zeros: every score ties
      Float32Array.from({ length: d }, (_, j) => (j === 3 ? 1 : 0)),
    ];
    const onlyEvenPages = (row: number) => cache.pageIds[row]! % 2 === 0;
    let pruning = 0;
    for (const query of queries) {
      for (const [limit, perPage] of [
        [60, 3],
        [30, 30],
        [10, 1],
      ] as const) {
        for (const allow of [undefined, onlyEvenPages]) {
          expect(exactSearch(cache, query, limit, perPage, undefined, allow)).toEqual(unpruned(cache, query, limit, perPage, allow));
          const candidates = prunedCandidates(cache, query, limit, perPage, allow);
          if (candidates && candidates.length < cache.size / 4) pruning++;
        }
      }
    }
    // Most searches score under a quarter of the rows in float.
    expect(pruning).toBeGreaterThan(queries.length * 3);
  });

  it('stays exact as rows are rewritten, removed and added, and as the cache grows', () => {
    const random = seeded(11);
    const cache = filled(3_000, random);
    const query = normalised(Float32Array.from({ length: d }, random));
    expect(exactSearch(cache, query, 60, 3)).toEqual(unpruned(cache, query, 60, 3));
    const best = exactSearch(cache, query, 5, 5);
    // The best row now points away from the query; another row becomes the query itself.
    const first = cache.put(best[0]!.id, best[0]!.pageId, 2);
    cache.matrix.set(query.map((v) => -v), first * d);
    const other = cache.put(2_500, 9_999, 2);
    cache.matrix.set(query, other * d);
    for (const hit of best.slice(1, 3)) cache.remove(hit.id);
    const rewritten = exactSearch(cache, query, 60, 3);
    expect(rewritten).toEqual(unpruned(cache, query, 60, 3));
    expect(rewritten[0]?.id).toBe(2_500);
    // Grown past its capacity: the copies are made again.
    const capacity = cache.ids.length;
    for (let id = 10_001; id <= 10_000 + capacity; id++) {
      const row = cache.put(id, 20_000 + id, 3);
      cache.matrix.set(normalised(Float32Array.from({ length: d }, random)), row * d);
    }
    for (const [limit, perPage] of [
      [60, 3],
      [20, 20],
    ] as const) {
      const got = exactSearch(cache, query, limit, perPage);
      expect(got).toEqual(unpruned(cache, query, limit, perPage));
      expect(got[0]?.id).toBe(2_500);
      expect(got.map((hit) => hit.id)).not.toContain(best[0]!.id);
    }
  });

  it('leaves small caches and non-finite rows to the float scan of every row', () => {
    const random = seeded(3);
    const small = filled(PRUNE_FROM_ROWS - 1, random);
    const query = normalised(Float32Array.from({ length: d }, random));
    expect(prunedCandidates(small, query, 60, 3, undefined)).toBeNull();
    const big = filled(PRUNE_FROM_ROWS + 10, random);
    expect(prunedCandidates(big, query, 60, 3, undefined)).not.toBeNull();
    big.matrix[5 * d + 7] = Number.NaN;
    big.store.changed(5);
    expect(prunedCandidates(big, query, 60, 3, undefined)).toBeNull();
  });
});
