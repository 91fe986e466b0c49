import type BetterSqlite3 from 'better-sqlite3';
import { seededRandom } from './seeded-random.js';
export { seededRandom };


function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function normalise(v: Float32Array, offset: number, d: number): void {
  let norm = 0;
  for (let j = 0; j < d; j++) norm += v[offset + j]! * v[offset + j]!;
  norm = Math.sqrt(norm) || 1;
  for (let j = 0; j < d; j++) v[offset + j] = v[offset + j]! / norm;
}

export interface ClusteredCorpusOptions {
  dimensions: number;
  /** Topic centres; passages pick one with a skew (a few large topics, many small ones). */
  clusters: number;
  /** Length of a passage's own noise against its unit centre (≈ 1.33: cosine to the centre about 0.6). */
  spread: number;
  /** Length of a query's noise against the passage it is drawn near. */
  querySpread: number;
  seed: number;
  /**
   * Dimensions of each topic's own subspace (0 = none): a passage is its centre plus Gaussian noise in that
   * subspace of length `subspaceSpread`, plus the isotropic `spread`. Real sentence embeddings vary along few
   * directions per topic (local intrinsic dimension about 15 for MiniLM here), isotropic noise along all 384.
   */
  subspace?: number;
  subspaceSpread?: number;
  /**
   * near-passage (default): a query is a passage plus isotropic noise of length querySpread; held-out: a query is a
   * passage of the same distribution that is not in the corpus, as the real vectors' recall is measured.
   */
  queries?: 'near-passage' | 'held-out';
}

export const DEFAULT_CORPUS: ClusteredCorpusOptions = { dimensions: 384, clusters: 2000, spread: 1.33, querySpread: 0.75, seed: 20 };

/**
 * Topics whose passages vary mostly along 24 directions of their own: chosen so that, at the size of the real
 * evaluation set (19,417 all-MiniLM-L6-v2 passage vectors), its neighbourhoods measure like the real ones
 * (`neighbourhoodStats`, 2026-11-24: local intrinsic dimension 14.1 against 14.6 real, relative contrast 1.73 against
 * 1.58, cosine to the nearest 0.75 / 0.79 and to the 10th 0.66 / 0.64). DEFAULT_CORPUS measures 26.1, 1.18, 0.42,
 * 0.27: its topic members are nearly equidistant, far harder for a graph than real embeddings. Queries are held-out
 * passages, as on the real vectors (a query with isotropic noise sits off the topics' subspaces, where its neighbours
 * are nearly equidistant again: recall@10 0.614 at a million that way).
 */
export const CALIBRATED_CORPUS: ClusteredCorpusOptions = {
  dimensions: 384,
  clusters: 400,
  spread: 0.3,
  querySpread: 0,
  seed: 20,
  subspace: 24,
  subspaceSpread: 0.8,
  queries: 'held-out',
};

/**
 * Unit vectors in topic clusters, as sentence embeddings are (not uniform on the sphere, where every neighbour is as
 * far as every other): passage i is its topic's centre plus Gaussian noise, drawn from a generator seeded by i, so
 * any passage — and any query, drawn near a passage — can be produced again without keeping the corpus.
 */
export class ClusteredCorpus {
  private readonly centres: Float32Array;
  /** Per topic, `subspace` unit directions of its own (empty without a subspace). */
  private readonly bases: Float32Array;

  constructor(readonly options: ClusteredCorpusOptions = DEFAULT_CORPUS) {
    const { dimensions: d, clusters } = options;
    const random = seededRandom(options.seed);
    this.centres = new Float32Array(clusters * d);
    for (let i = 0; i < clusters * d; i++) this.centres[i] = gaussian(random);
    for (let c = 0; c < clusters; c++) normalise(this.centres, c * d, d);
    const r = options.subspace ?? 0;
    this.bases = new Float32Array(clusters * r * d);
    for (let i = 0; i < this.bases.length; i++) this.bases[i] = gaussian(random);
    for (let b = 0; b < clusters * r; b++) normalise(this.bases, b * d, d);
  }

  /** Writes passage `i` into `target` at row `row`. */
  passage(i: number, target: Float32Array, row = 0): void {
    const { dimensions: d, clusters, spread } = this.options;
    const random = seededRandom(Math.imul(i + 1, 0x9e3779b1) ^ this.options.seed);
    const u = random();
    const cluster = Math.min(clusters - 1, Math.floor(clusters * u * u));
    const sigma = spread / Math.sqrt(d);
    const base = row * d;
    for (let j = 0; j < d; j++) target[base + j] = this.centres[cluster * d + j]! + sigma * gaussian(random);
    const r = this.options.subspace ?? 0;
    const along = (this.options.subspaceSpread ?? 0) / Math.sqrt(Math.max(1, r));
    for (let k = 0; k < r; k++) {
      const c = along * gaussian(random);
      const dir = (cluster * r + k) * d;
      for (let j = 0; j < d; j++) target[base + j] = target[base + j]! + c * this.bases[dir + j]!;
    }
    normalise(target, base, d);
  }

  /** Query `q`: a unit vector near passage `near(q)` of the first `passages`. */
  query(q: number, passages: number): Float32Array {
    const d = this.options.dimensions;
    if (this.options.queries === 'held-out') {
      const v = new Float32Array(d);
      this.passage(passages + q, v);
      return v;
    }
    const random = seededRandom(Math.imul(q + 1, 0x85ebca6b) ^ ~this.options.seed);
    const v = new Float32Array(d);
    this.passage(Math.floor(random() * passages), v);
    const sigma = this.options.querySpread / Math.sqrt(d);
    for (let j = 0; j < d; j++) v[j] = v[j]! + sigma * gaussian(random);
    normalise(v, 0, d);
    return v;
  }
}

/** Pages and passages rows (ids 1..n, `perPage` passages a page) so that passage_vectors' foreign keys hold. */
export function seedPassageRows(raw: BetterSqlite3.Database, n: number, perPage: number, text: (i: number) => string = () => ''): void {
  raw.transaction(() => {
    const page = raw.prepare(
      `insert into pages (id, url, final_url, host, http_status, crawl_depth, state, fetched_at, checked_at)
       values (?, ?, ?, 'bench.test', 200, 0, 'indexed', '2026-01-01', '2026-01-01')`,
    );
    const passage = raw.prepare(
      `insert into passages (id, page_id, ordinal, url, title, heading_path, text, word_count) values (?, ?, ?, '', '', '', ?, 0)`,
    );
    for (let p = 0; p * perPage < n; p++) page.run(p + 1, `http://bench.test/${p}`, `http://bench.test/${p}`);
    for (let i = 0; i < n; i++) passage.run(i + 1, Math.floor(i / perPage) + 1, i % perPage, text(i));
  })();
}

/** Share of the exact top-k ids that the approximate top-k also holds, averaged over queries. */
export function recallAtK(exact: readonly (readonly number[])[], approximate: readonly (readonly number[])[], k: number): number {
  if (exact.length === 0) return Number.NaN;
  let sum = 0;
  exact.forEach((truth, q) => {
    const want = truth.slice(0, k);
    if (want.length === 0) {
      sum += 1;
      return;
    }
    const got = new Set((approximate[q] ?? []).slice(0, k));
    sum += want.filter((id) => got.has(id)).length / want.length;
  });
  return sum / exact.length;
}

export interface NeighbourhoodStats {
  vectors: number;
  samples: number;
  /** Maximum-likelihood local intrinsic dimension from the 20 nearest neighbours (Levina and Bickel). */
  lid_k20: number;
  /** Mean distance to all vectors over distance to the 10th nearest: how distinct near neighbours are. */
  relative_contrast_10: number;
  cosine_nearest: number;
  cosine_10th: number;
}

/** Neighbourhood statistics of unit vectors, over `samples` of them (seeded), each against all others. */
export function neighbourhoodStats(vectors: readonly Float32Array[], samples = 200, k = 20): NeighbourhoodStats {
  const n = vectors.length;
  const random = seededRandom(3);
  let lid = 0;
  let contrast = 0;
  let nearest = 0;
  let tenth = 0;
  for (let s = 0; s < samples; s++) {
    const self = Math.floor(random() * n);
    const q = vectors[self]!;
    const distances: number[] = [];
    let sum = 0;
    for (let i = 0; i < n; i++) {
      if (i === self) continue;
      const v = vectors[i]!;
      let dot = 0;
      for (let j = 0; j < q.length; j++) dot += q[j]! * v[j]!;
      const distance = Math.sqrt(Math.max(0, 2 - 2 * dot));
      distances.push(distance);
      sum += distance;
    }
    distances.sort((a, b) => a - b);
    const rk = distances[k - 1]!;
    let logs = 0;
    for (let i = 0; i < k; i++) logs += Math.log(Math.max(distances[i]!, 1e-9) / rk);
    lid += -k / logs;
    contrast += sum / (n - 1) / distances[9]!;
    nearest += 1 - distances[0]! ** 2 / 2;
    tenth += 1 - distances[9]! ** 2 / 2;
  }
  const r = (x: number) => Math.round((x / samples) * 1000) / 1000;
  return { vectors: n, samples, lid_k20: r(lid), relative_contrast_10: r(contrast), cosine_nearest: r(nearest), cosine_10th: r(tenth) };
}
