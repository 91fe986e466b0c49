import type BetterSqlite3 from 'better-sqlite3';
import { seededRandom } from '../../test/support/seeded-random.js';
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
}

export const DEFAULT_CORPUS: ClusteredCorpusOptions = { dimensions: 384, clusters: 2000, spread: 1.33, querySpread: 0.75, seed: 20 };

/**
 * Unit vectors in topic clusters, as sentence embeddings are (not uniform on the sphere, where every neighbour is as
 * far as every other): passage i is its topic's centre plus Gaussian noise, drawn from a generator seeded by i, so
 * any passage — and any query, drawn near a passage — can be produced again without keeping the corpus.
 */
export class ClusteredCorpus {
  private readonly centres: Float32Array;

  constructor(readonly options: ClusteredCorpusOptions = DEFAULT_CORPUS) {
    const { dimensions: d, clusters } = options;
    const random = seededRandom(options.seed);
    this.centres = new Float32Array(clusters * d);
    for (let i = 0; i < clusters * d; i++) this.centres[i] = gaussian(random);
    for (let c = 0; c < clusters; c++) normalise(this.centres, c * d, d);
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
    normalise(target, base, d);
  }

  /** Query `q`: a unit vector near passage `near(q)` of the first `passages`. */
  query(q: number, passages: number): Float32Array {
    const d = this.options.dimensions;
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
