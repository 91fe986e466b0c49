import { AnnGraph, type AnnGraphOptions, type AnnGraphState } from './ann-graph.js';
import type { VectorHit } from './vector-index.js';

/** What SqlVectorIndex keeps in memory (its VectorCache): row i is matrix[i*d..), with its id, page and write seq. */
export interface CachedVectors {
  readonly dimensions: number;
  readonly size: number;
  readonly matrix: Float32Array;
  readonly ids: Float64Array;
  readonly pageIds: Float64Array;
  readonly seqs: Float64Array;
  readonly position: ReadonlyMap<number, number>;
}

export interface ApproximateSearchOptions {
  dimensions: number;
  /** Use the graph from this many vectors on; 0 = never (exact search only). */
  above: number;
  /**
   * Whether a search waits for a graph that is being built (tests, benchmarks) instead of scanning exactly
   * meanwhile (the service: a build takes minutes at a million vectors).
   */
  waitForBuild?: boolean;
  graph?: Omit<AnnGraphOptions, 'dimensions'>;
  /** Candidates asked of the graph at least (it searches with at least this breadth); default 100. */
  minCandidates?: number;
}

/** Candidates asked of the graph at least, and the most before giving up on it for an exact scan. */
const MIN_CANDIDATES = 100;
const MAX_CANDIDATES = 20_000;


function dot(matrix: Float32Array, row: number, query: Float32Array): number {
  const d = query.length;
  const base = row * d;
  let s = 0;
  for (let j = 0; j < d; j++) s += matrix[base + j]! * query[j]!;
  return s;
}

/**
 * The approximate path of SqlVectorIndex: an HNSW graph mirroring its cache once the cache holds `above` vectors.
 * The cache's owner reports every change — rows written in place (`upserted`, `removed`) and reloads (`reloaded`,
 * which diffs the old and new cache by write seq, so writes by other processes reach the graph too). Searches ask
 * the graph for candidates and rescore them with the exact float32 vectors, so scores are exact and only recall is
 * approximate; a page filter, or a per-page cap the candidates cannot fill, falls back to the exact scan.
 */
export class ApproximateSearch {
  private graph: AnnGraph | null = null;
  private building: Promise<void> | null = null;
  /** The cache object the graph mirrors (changes to any other cache cannot be applied as a diff). */
  private mirrors: CachedVectors | null = null;
  /** Searches the graph answered (the rest fell back to the exact scan). */
  answered = 0;
  /** Candidates asked of the graph at least: more costs time, finds more of the exact top hits (benchmarks tune it). */
  minCandidates: number;

  constructor(readonly options: ApproximateSearchOptions) {
    this.minCandidates = options.minCandidates ?? MIN_CANDIDATES;
  }

  get state(): AnnGraphState | 'off' {
    return this.graph ? this.graph.state : 'off';
  }

  private enabledFor(cache: CachedVectors): boolean {
    return this.options.above > 0 && cache.size >= this.options.above;
  }

  private startBuild(cache: CachedVectors): void {
    this.graph ??= new AnnGraph({ dimensions: this.options.dimensions, ...this.options.graph });
    this.mirrors = cache;
    const building = this.graph.build(cache.ids, cache.matrix, cache.size);
    this.building = building;
    building.then(
      () => {
        if (this.building === building) this.building = null;
      },
      () => undefined, // the graph is 'failed' now: searches scan exactly
    );
  }

  private async dropGraph(): Promise<void> {
    const graph = this.graph;
    this.graph = null;
    this.mirrors = null;
    this.building = null;
    await graph?.close();
  }

  /** `next` replaced `previous` as the cache (a reload after writes this process did not make, or the first load). */
  async reloaded(previous: CachedVectors | null, next: CachedVectors): Promise<void> {
    if (!this.enabledFor(next)) {
      if (this.graph) await this.dropGraph();
      return;
    }
    const graph = this.graph;
    if (!graph || graph.state === 'failed' || previous === null || previous !== this.mirrors) {
      if (graph?.state === 'failed') await this.dropGraph();
      this.startBuild(next);
      return;
    }
    const changed: number[] = [];
    for (let row = 0; row < next.size; row++) {
      const id = next.ids[row]!;
      const before = previous.position.get(id);
      if (before === undefined || previous.seqs[before] !== next.seqs[row]) changed.push(row);
    }
    const removed: number[] = [];
    for (let row = 0; row < previous.size; row++) {
      const id = previous.ids[row]!;
      if (!next.position.has(id)) removed.push(id);
    }
    if (graph.worthRebuilding || changed.length + removed.length > 0.25 * next.size) {
      this.startBuild(next);
      return;
    }
    this.mirrors = next;
    const d = this.options.dimensions;
    const vectors = new Float32Array(changed.length * d);
    changed.forEach((row, i) => vectors.set(next.matrix.subarray(row * d, row * d + d), i * d));
    // Not awaited: requests are applied in order before any later search; a failure leaves the graph 'failed'.
    graph.remove(removed).catch(() => undefined);
    graph.upsert(changed.map((row) => next.ids[row]!), vectors).catch(() => undefined);
  }

  /** These ids were written into `cache` in place (it is the cache the graph mirrors when a graph exists). */
  upserted(cache: CachedVectors, ids: readonly number[]): void {
    if (!this.graph) {
      if (this.enabledFor(cache)) this.startBuild(cache);
      return;
    }
    if (cache !== this.mirrors) return;
    const d = this.options.dimensions;
    const vectors = new Float32Array(ids.length * d);
    ids.forEach((id, i) => {
      const row = cache.position.get(id);
      if (row !== undefined) vectors.set(cache.matrix.subarray(row * d, row * d + d), i * d);
    });
    this.graph.upsert(ids, vectors).catch(() => undefined);
    if (this.graph.worthRebuilding) this.startBuild(cache);
  }

  /** These ids were removed from the cache in place. */
  removed(cache: CachedVectors, ids: readonly number[]): void {
    if (!this.graph || cache !== this.mirrors) return;
    this.graph.remove(ids).catch(() => undefined);
    if (this.graph.worthRebuilding) this.startBuild(cache);
  }

  /**
   * The best `limit` hits (at most `perPage` per page) from the graph's candidates rescored exactly, best first and
   * ties by lower id; null when the exact scan should answer instead (no graph, still building, failed, fewer
   * candidates than asked from a collection that holds them, or a per-page cap that even MAX_CANDIDATES cannot fill).
   */
  async search(cache: CachedVectors, query: Float32Array, limit: number, perPage: number): Promise<VectorHit[] | null> {
    const graph = this.graph;
    if (!graph || !this.enabledFor(cache) || cache !== this.mirrors) return null;
    if (this.building) {
      if (!this.options.waitForBuild) return null;
      await this.building.catch(() => undefined);
    }
    if (graph.state !== 'ready') return null;
    let k = Math.min(cache.size, Math.max(this.minCandidates, limit * (Number.isFinite(perPage) ? 8 : 4)));
    for (;;) {
      let found: number[];
      try {
        found = await graph.search(query, k);
      } catch {
        return null;
      }
      const rows: number[] = [];
      for (const id of found) {
        const row = cache.position.get(id);
        if (row !== undefined) rows.push(row);
      }
      const scores = new Map<number, number>();
      for (const row of rows) scores.set(row, dot(cache.matrix, row, query));
      rows.sort((a, b) => scores.get(b)! - scores.get(a)! || cache.ids[a]! - cache.ids[b]!);
      const used = new Map<number, number>();
      const out: VectorHit[] = [];
      for (const row of rows) {
        const pageId = cache.pageIds[row]!;
        const n = used.get(pageId) ?? 0;
        if (n >= perPage) continue;
        used.set(pageId, n + 1);
        out.push({ id: cache.ids[row]!, pageId, score: scores.get(row)! });
        if (out.length === limit) break;
      }
      // Fewer than k from a collection holding at least k: the graph did not reach them all (HNSW gives no such
      // guarantee), so what it left out could belong in the answer: the exact scan answers instead.
      if (found.length < k) return null;
      if (out.length === limit || k >= cache.size) {
        this.answered++;
        return out;
      }
      if (k >= MAX_CANDIDATES) return null;
      k = Math.min(cache.size, k * 4, MAX_CANDIDATES);
    }
  }

  /** The graph's own size in bytes (serialised), or null without a ready graph. For benchmarks: writes a temp file. */
  async graphBytes(): Promise<number | null> {
    if (this.building) await this.building.catch(() => undefined);
    return this.graph?.state === 'ready' ? this.graph.bytes() : null;
  }

  /** Milliseconds the last full build took, once one finished. */
  get lastBuildMs(): number | null {
    return this.graph?.state === 'ready' ? this.graph.lastBuildMs : null;
  }

  /** Resolves when no build is running (tests and benchmarks). */
  async settled(): Promise<void> {
    while (this.building) await this.building.catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.dropGraph();
  }
}
