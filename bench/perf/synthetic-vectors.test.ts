import { describe, expect, it } from 'vitest';
import { vocabulary, zipfSampler } from './fts-scale.js';
import { ClusteredCorpus, neighbourhoodStats, recallAtK, seededRandom } from '../../testkit/synthetic-vectors.js';

describe('ClusteredCorpus', () => {
  const corpus = new ClusteredCorpus({ dimensions: 64, clusters: 20, spread: 1.33, querySpread: 0.75, seed: 1 });
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

  it('draws the same unit vector for the same index, into any row', () => {
    const a = new Float32Array(64);
    const b = new Float32Array(3 * 64);
    corpus.passage(41, a);
    corpus.passage(41, b, 2);
    expect(Array.from(b.subarray(128))).toEqual(Array.from(a));
    expect(dot(a, a)).toBeCloseTo(1, 5);
  });

  it('is clustered: passages of one topic are far closer than random pairs, and queries sit near a passage', () => {
    const vectors = Array.from({ length: 400 }, (_, i) => {
      const v = new Float32Array(64);
      corpus.passage(i, v);
      return v;
    });
    let best = 0;
    let mean = 0;
    for (let i = 1; i < vectors.length; i++) {
      const s = dot(vectors[0]!, vectors[i]!);
      best = Math.max(best, s);
      mean += s / (vectors.length - 1);
    }
    expect(best).toBeGreaterThan(0.25);
    expect(best - mean).toBeGreaterThan(0.2);
    const query = corpus.query(3, 400);
    expect(Math.max(...vectors.map((v) => dot(v, query)))).toBeGreaterThan(0.7);
  });
});

describe('held-out queries', () => {
  it('are passages of the same distribution beyond the corpus', () => {
    const corpus = new ClusteredCorpus({ dimensions: 32, clusters: 5, spread: 0.3, querySpread: 0, seed: 2, subspace: 3, subspaceSpread: 0.8, queries: 'held-out' });
    const passage = new Float32Array(32);
    corpus.passage(107, passage);
    expect(Array.from(corpus.query(7, 100))).toEqual(Array.from(passage));
  });
});

describe('neighbourhoodStats', () => {
  const unit = (parts: number[], d = 32) => {
    const v = new Float32Array(d);
    const norm = Math.hypot(...parts);
    parts.forEach((x, i) => (v[i] = x / norm));
    return v;
  };

  it('measures the intrinsic dimension: about 1 on a circle, about 2 on a sphere, whatever the ambient dimension', () => {
    const random = seededRandom(5);
    const circle = Array.from({ length: 2000 }, () => {
      const a = random() * 2 * Math.PI;
      return unit([Math.cos(a), Math.sin(a)]);
    });
    const sphere = Array.from({ length: 3000 }, () => unit([random() - 0.5, random() - 0.5, random() - 0.5]));
    expect(neighbourhoodStats(circle, 50).lid_k20).toBeGreaterThan(0.8);
    expect(neighbourhoodStats(circle, 50).lid_k20).toBeLessThan(1.3);
    expect(neighbourhoodStats(sphere, 50).lid_k20).toBeGreaterThan(1.6);
    expect(neighbourhoodStats(sphere, 50).lid_k20).toBeLessThan(2.6);
  });

  it('a topic subspace lowers the intrinsic dimension and sets nearest neighbours apart', () => {
    const draw = (c: ClusteredCorpus) =>
      Array.from({ length: 3000 }, (_, i) => {
        const v = new Float32Array(64);
        c.passage(i, v);
        return v;
      });
    const isotropic = neighbourhoodStats(draw(new ClusteredCorpus({ dimensions: 64, clusters: 20, spread: 1.33, querySpread: 0.75, seed: 1 })), 50);
    const subspace = neighbourhoodStats(draw(new ClusteredCorpus({ dimensions: 64, clusters: 20, spread: 0.3, querySpread: 0.75, seed: 1, subspace: 4, subspaceSpread: 0.8 })), 50);
    expect(subspace.lid_k20).toBeLessThan(isotropic.lid_k20 / 2);
    expect(subspace.relative_contrast_10).toBeGreaterThan(isotropic.relative_contrast_10);
    expect(subspace.cosine_10th).toBeGreaterThan(isotropic.cosine_10th);
  });
});

describe('recallAtK', () => {
  it('averages the share of exact ids found per query', () => {
    expect(recallAtK([[1, 2, 3, 4], [5, 6]], [[4, 3, 9, 8], [5, 6]], 4)).toBeCloseTo((0.5 + 1) / 2);
    expect(recallAtK([[1, 2, 3]], [[1, 2, 3, 4]], 2)).toBe(1);
    expect(recallAtK([[]], [[1]], 10)).toBe(1);
    expect(recallAtK([], [], 10)).toBeNaN();
  });
});

describe('full-text corpus helpers', () => {
  it('makes distinct words and draws low ranks far more often than high ones (Zipf)', () => {
    const words = vocabulary(1000);
    expect(new Set(words).size).toBe(1000);
    const draw = zipfSampler(1000, seededRandom(4));
    const counts = new Array<number>(1000).fill(0);
    for (let i = 0; i < 20000; i++) counts[draw()]!++;
    expect(counts[0]!).toBeGreaterThan(counts[9]! * 4);
    expect(counts.findLastIndex((c) => c > 0)).toBeGreaterThan(500);
  });
});
