import { afterEach, describe, expect, it } from 'vitest';
import { ClusteredCorpus, recallAtK } from '../bench/perf/synthetic-vectors.js';
import { AnnGraph } from './ann-graph.js';
import { ApproximateSearch, type CachedVectors } from './ann-search.js';

const D = 32;

/** A cache as SqlVectorIndex keeps it: rows of `d` floats with ids, pages and write seqs. */
function cacheOf(rows: ReadonlyArray<{ id: number; pageId: number; seq: number; vector: Float32Array }>): CachedVectors {
  const matrix = new Float32Array(rows.length * D);
  const ids = new Float64Array(rows.length);
  const pageIds = new Float64Array(rows.length);
  const seqs = new Float64Array(rows.length);
  const position = new Map<number, number>();
  rows.forEach((r, i) => {
    matrix.set(r.vector, i * D);
    ids[i] = r.id;
    pageIds[i] = r.pageId;
    seqs[i] = r.seq;
    position.set(r.id, i);
  });
  return { dimensions: D, size: rows.length, matrix, ids, pageIds, seqs, position };
}

function exactTop(cache: CachedVectors, query: Float32Array, k: number): number[] {
  const scored: Array<[number, number]> = [];
  for (let row = 0; row < cache.size; row++) {
    let s = 0;
    for (let j = 0; j < D; j++) s += cache.matrix[row * D + j]! * query[j]!;
    scored.push([cache.ids[row]!, s]);
  }
  scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return scored.slice(0, k).map(([id]) => id);
}

const corpus = new ClusteredCorpus({ dimensions: D, clusters: 40, spread: 1.0, querySpread: 0.6, seed: 3 });
function rowsFor(n: number, seq = 1, offset = 0) {
  return Array.from({ length: n }, (_, i) => {
    const vector = new Float32Array(D);
    corpus.passage(i + offset, vector);
    return { id: i + offset + 1, pageId: Math.floor((i + offset) / 5) + 1, seq, vector };
  });
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

describe('ApproximateSearch', () => {
  it('finds at least 95% of the exact top 10 on clustered vectors, with exact scores', async () => {
    const cache = cacheOf(rowsFor(4000));
    const ann = new ApproximateSearch({ dimensions: D, above: 1000, waitForBuild: true });
    open.push(ann);
    await ann.reloaded(null, cache);
    const truth: number[][] = [];
    const got: number[][] = [];
    for (let q = 0; q < 50; q++) {
      const query = corpus.query(q, 4000);
      const hits = await ann.search(cache, query, 10, Infinity);
      expect(hits).not.toBeNull();
      for (const hit of hits!) {
        const row = cache.position.get(hit.id)!;
        let s = 0;
        for (let j = 0; j < D; j++) s += cache.matrix[row * D + j]! * query[j]!;
        expect(hit.score).toBeCloseTo(s, 6);
      }
      truth.push(exactTop(cache, query, 10));
      got.push(hits!.map((h) => h.id));
    }
    expect(recallAtK(truth, got, 10)).toBeGreaterThanOrEqual(0.95);
    expect(ann.answered).toBe(50);
  });

  it('follows a reload: rows replaced, added and removed elsewhere reach the graph as a diff', async () => {
    const before = rowsFor(2000);
    const first = cacheOf(before);
    const ann = new ApproximateSearch({ dimensions: D, above: 100, waitForBuild: true });
    open.push(ann);
    await ann.reloaded(null, first);
    await ann.settled();
    // Another process: moves passage 7 onto a far-away direction, deletes passage 9, adds 50 new passages.
    const far = new Float32Array(D);
    far[0] = -1;
    const after = before
      .filter((r) => r.id !== 9)
      .map((r) => (r.id === 7 ? { ...r, seq: 2, vector: far } : r))
      .concat(rowsFor(50, 2, 2000));
    const second = cacheOf(after);
    await ann.reloaded(first, second);
    expect(ann.state).toBe('ready'); // applied as a diff, not rebuilt
    const top = await ann.search(second, far, 1, Infinity);
    expect(top?.[0]).toMatchObject({ id: 7, score: expect.closeTo(1, 6) });
    const nine = new Float32Array(before[8]!.vector);
    const hits = await ann.search(second, nine, 10, Infinity);
    expect(hits?.map((h) => h.id)).not.toContain(9);
    const added = new Float32Array(after.at(-1)!.vector);
    expect((await ann.search(second, added, 1, Infinity))?.[0]?.id).toBe(after.at(-1)!.id);
  });

  it('answers null (exact scan) below the threshold, while building unless told to wait, and for unknown caches', async () => {
    const cache = cacheOf(rowsFor(1500));
    const small = new ApproximateSearch({ dimensions: D, above: 5000 });
    open.push(small);
    await small.reloaded(null, cache);
    expect(small.state).toBe('off');
    expect(await small.search(cache, corpus.query(1, 1500), 10, Infinity)).toBeNull();

    const ann = new ApproximateSearch({ dimensions: D, above: 1000 });
    open.push(ann);
    await ann.reloaded(null, cache);
    expect(ann.state).toBe('building');
    expect(await ann.search(cache, corpus.query(1, 1500), 10, Infinity)).toBeNull();
    await ann.settled();
    expect(ann.state).toBe('ready');
    expect(await ann.search(cache, corpus.query(1, 1500), 10, Infinity)).toHaveLength(10);
    expect(await ann.search(cacheOf(rowsFor(1500)), corpus.query(1, 1500), 10, Infinity)).toBeNull();
    // Shrinking below the threshold drops the graph.
    await ann.reloaded(cache, cacheOf(rowsFor(500)));
    expect(ann.state).toBe('off');
  });

  it('keeps at most perPage hits of one page, widening the candidate list when the cap needs it', async () => {
    // Every passage of page 1 lies on top of the query: the cap must reach past them.
    const rows = rowsFor(3000).map((r) => ({ ...r, pageId: r.id <= 400 ? 1 : r.pageId + 1000 }));
    const query = new Float32Array(D);
    query[1] = 1;
    for (const r of rows.slice(0, 400)) {
      r.vector = new Float32Array(D);
      r.vector[1] = 1;
      r.vector[2] = 0.001 * r.id;
      const n = Math.hypot(...r.vector);
      for (let j = 0; j < D; j++) r.vector[j] = r.vector[j]! / n;
    }
    const cache = cacheOf(rows);
    const ann = new ApproximateSearch({ dimensions: D, above: 100, waitForBuild: true });
    open.push(ann);
    await ann.reloaded(null, cache);
    const hits = (await ann.search(cache, query, 10, 2))!;
    expect(hits).toHaveLength(10);
    expect(hits.filter((h) => h.pageId === 1)).toHaveLength(2);
    expect(hits.slice(0, 2).map((h) => h.id)).toEqual([1, 2]);
    expect(new Set(hits.map((h) => h.pageId)).size).toBe(9);
  });
});

describe('AnnGraph', () => {
  it('replaces a key on upsert, forgets removed keys, and refuses work once closed', async () => {
    const graph = new AnnGraph({ dimensions: 4 });
    open.push(graph);
    expect(graph.state).toBe('empty');
    const rows = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]);
    await graph.build([10, 20, 30], rows, 3);
    expect(graph.state).toBe('ready');
    expect(await graph.search(new Float32Array([0, 1, 0, 0]), 1)).toEqual([20]);
    await graph.upsert([20], new Float32Array([0, 0, 0, 1]));
    expect(await graph.search(new Float32Array([0, 0, 0, 1]), 1)).toEqual([20]);
    await graph.remove([20]);
    expect((await graph.search(new Float32Array([0, 0, 0, 1]), 3)).sort()).toEqual([10, 30]);
    expect(await graph.bytes()).toBeGreaterThan(0);
    await graph.close();
    expect(graph.state).toBe('failed');
    await expect(graph.search(new Float32Array([1, 0, 0, 0]), 1)).rejects.toMatchObject({ code: 'internal_error' });
  });
});
