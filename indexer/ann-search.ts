import { AnnGraph, graphShape, type AnnGraphOptions, type AnnGraphState, type AnnGraphWear } from './ann-graph.js';
import { changesSince, REBUILD_ABOVE_CHANGED_SHARE, sampleOf, unfit } from './ann-graph-fit.js';
import { AnnGraphStore, type VersionedIds } from './ann-store.js';
import { selectPerPage } from './page-cap.js';
import type { CachedVectors } from './vector-cache.js';
import type { VectorHit } from './vector-index.js';

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
  /**
   * Keep the graph in `directory` between runs (indexer/ann-store.ts): the first graph is loaded from there when
   * its manifest matches `model`, the dimensions and the graph options, and saved after each build and after
   * enough changes. Absent: the graph lives in memory only.
   */
  persist?: { directory: string; model: string };
  /** Told whether the saved graph was loaded or why it was built instead, and of saves that failed. */
  log?: (message: string) => void;
}

/** Candidates asked of the graph at least, and the most before giving up on it for an exact scan. */
const MIN_CANDIDATES = 100;
const MAX_CANDIDATES = 20_000;
/** Share of the graph changed since its last save after which it is saved again (a restart applies the rest as a diff). */
const SAVE_AFTER_CHANGED_SHARE = 0.05;
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
  /** Where the graph is saved between runs; null: memory only. */
  readonly store: AnnGraphStore | null;
  /** Whether the first graph was looked for in the store yet (only the first graph of a run is loaded). */
  private looked = false;
  /** The saved manifest is being read: changes reach the graph as one diff once it is loaded, not one by one. */
  private restoring = false;
  private saving: Promise<void> | null = null;
  private changesSinceSave = 0;
  /** The graph file this process saved last (removed once a newer one is named by the manifest). */
  private savedFile: string | null = null;
  /** Searches the graph answered (the rest fell back to the exact scan). */
  answered = 0;
  /** Full builds started, graphs loaded from the store, and saves finished (tests, benchmarks, status). */
  builds = 0;
  restores = 0;
  saves = 0;
  /** Why the last look in the store did not give a graph, or null when it did (or there was no look). */
  restoreSkipped: string | null = null;
  /** Candidates asked of the graph at least: more costs time, finds more of the exact top hits (benchmarks tune it). */
  minCandidates: number;

  constructor(readonly options: ApproximateSearchOptions) {
    this.minCandidates = options.minCandidates ?? MIN_CANDIDATES;
    const persist = options.persist;
    this.store = persist
      ? new AnnGraphStore(persist.directory, {
          model: persist.model,
          dimensions: options.dimensions,
          metric: 'cos',
          quantization: 'i8',
          ...graphShape(options.graph),
        })
      : null;
  }

  get state(): AnnGraphState | 'off' {
    if (this.restoring) return 'building';
    return this.graph ? this.graph.state : 'off';
  }

  private enabledFor(cache: CachedVectors): boolean {
    return this.options.above > 0 && cache.size >= this.options.above;
  }

  private newGraph(): AnnGraph {
    return new AnnGraph({ dimensions: this.options.dimensions, ...this.options.graph });
  }

  private track(building: Promise<void>): void {
    this.building = building;
    building.then(
      () => {
        if (this.building === building) this.building = null;
      },
      () => undefined, // the graph is 'failed' now: searches scan exactly
    );
  }

  /** The first graph of a run comes from the store when it holds a fitting one; later ones are built. */
  private startGraph(cache: CachedVectors): void {
    if (this.store && !this.looked) this.startRestore(cache, this.store);
    else this.startBuild(cache);
  }

  private startBuild(cache: CachedVectors): void {
    this.graph ??= this.newGraph();
    this.mirrors = cache;
    this.builds++;
    this.track(this.graph.build(cache.ids, cache.matrix, cache.size));
    this.save(cache, { sizeAtBuild: cache.size, changedSinceBuild: 0 });
  }

  private startRestore(cache: CachedVectors, store: AnnGraphStore): void {
    this.looked = true;
    const graph = this.newGraph();
    this.graph = graph;
    this.mirrors = cache;
    this.restoring = true;
    this.track(this.restore(graph, store));
  }

  private async restore(graph: AnnGraph, store: AnnGraphStore): Promise<void> {
    const found = await store.read().catch((error: unknown) => ({ ignored: `unreadable manifest: ${String(error)}` }));
    this.restoring = false;
    if (this.graph !== graph) return; // dropped meanwhile
    // Changes made while the manifest was read are in the cache the graph mirrors now: the diff covers them.
    const current = this.mirrors!;
    if ('ignored' in found) return this.buildInstead(found.ignored, current);
    const { saved } = found;
    const { changed, removed } = changesSince(saved.vectors, current);
    const ignored = unfit(saved, current, changed.length + removed.length);
    if (ignored) return this.buildInstead(ignored, current);
    const loading = graph.load(saved.graph, saved.wear);
    this.postChanges(graph, current, changed, removed);
    try {
      await loading;
    } catch (error) {
      if (this.graph === graph) this.buildInstead(error instanceof Error ? error.message : String(error), this.mirrors!);
      return;
    }
    this.restores++;
    this.restoreSkipped = null;
    this.savedFile = saved.graph.file;
    this.changesSinceSave = changed.length + removed.length;
    this.options.log?.(
      `vector graph: loaded ${saved.graph.size} vectors from ${saved.graph.file} in ${Math.round(graph.lastLoadMs)} ms; ${this.changesSinceSave} changed since it was saved`,
    );
    this.saveIfWorn();
  }

  private buildInstead(reason: string, cache: CachedVectors): void {
    this.restoreSkipped = reason;
    this.options.log?.(`vector graph: building ${cache.size} vectors (${reason})`);
    this.startBuild(cache);
  }

  /** Sends the rows `changed` of `cache` and the `removed` ids to the graph (applied in order, not awaited). */
  private postChanges(graph: AnnGraph, cache: CachedVectors, changed: readonly number[], removed: readonly number[]): void {
    const d = this.options.dimensions;
    const vectors = new Float32Array(changed.length * d);
    changed.forEach((row, i) => vectors.set(cache.matrix.subarray(row * d, row * d + d), i * d));
    // A failure leaves the graph 'failed': searches scan exactly and the next reload builds a new one.
    graph.remove(removed).catch(() => undefined);
    graph.upsert(changed.map((row) => cache.ids[row]!), vectors).catch(() => undefined);
  }

  /**
   * Saves the graph as it will be once every request made so far is applied — which is `cache`, the cache it
   * mirrors. The worker writes the graph file; the manifest follows, saves in the order they were asked for.
   * (A manifest behind its graph would be harmless: a restart re-applies what it lacks.)
   */
  private save(cache: CachedVectors, wear: AnnGraphWear): void {
    const store = this.store;
    const graph = this.graph;
    if (!store || !graph) return;
    const vectors: VersionedIds = { size: cache.size, ids: cache.ids.slice(0, cache.size), seqs: cache.seqs.slice(0, cache.size) };
    const sample = sampleOf(cache);
    this.changesSinceSave = 0;
    const file = store.nextGraphFile();
    const written = graph.save(file);
    const previous = this.saving ?? Promise.resolve();
    const saving = previous.then(async () => {
      try {
        await store.write({ graph: await written, wear, vectors, sample }, this.savedFile);
        this.savedFile = file;
        this.saves++;
      } catch (error) {
        // Not fatal: the graph keeps serving, and the next start builds if no saved graph fits.
        if (this.graph === graph) this.options.log?.(`vector graph: not saved to ${store.directory} (${error instanceof Error ? error.message : String(error)})`);
        await store.discard(file);
      }
    });
    this.saving = saving;
    void saving.then(() => {
      if (this.saving === saving) this.saving = null;
    });
  }

  private saveIfWorn(): void {
    const graph = this.graph;
    const cache = this.mirrors;
    if (!this.store || !graph || !cache || this.restoring || this.saving) return;
    if (this.changesSinceSave > SAVE_AFTER_CHANGED_SHARE * Math.max(cache.size, 1000)) this.save(cache, graph.wear);
  }

  /** Closes the graph; `forget` also removes its saved files (the collection fell below `above`). */
  private async dropGraph(forget: boolean): Promise<void> {
    const graph = this.graph;
    this.graph = null;
    this.mirrors = null;
    this.building = null;
    this.restoring = false;
    await graph?.close();
    await this.saving;
    if (forget && this.store) {
      await this.store.remove().catch(() => undefined);
      this.savedFile = null;
    }
  }

  /** `next` replaced `previous` as the cache (a reload after writes this process did not make, or the first load). */
  async reloaded(previous: CachedVectors | null, next: CachedVectors): Promise<void> {
    if (!this.enabledFor(next)) {
      // A collection below the threshold has no graph, in memory or saved.
      if (this.graph || (this.store && !this.looked)) await this.dropGraph(true);
      this.looked = true;
      return;
    }
    if (this.restoring) {
      this.mirrors = next;
      return;
    }
    const graph = this.graph;
    if (!graph || graph.state === 'failed' || previous === null || previous !== this.mirrors) {
      if (graph?.state === 'failed') await this.dropGraph(false);
      if (this.graph) this.startBuild(next);
      else this.startGraph(next);
      return;
    }
    const { changed, removed } = changesSince(previous, next);
    if (graph.worthRebuilding || changed.length + removed.length > REBUILD_ABOVE_CHANGED_SHARE * next.size) {
      this.startBuild(next);
      return;
    }
    this.mirrors = next;
    this.postChanges(graph, next, changed, removed);
    this.changesSinceSave += changed.length + removed.length;
    this.saveIfWorn();
  }

  /** These ids were written into `cache` in place (it is the cache the graph mirrors when a graph exists). */
  upserted(cache: CachedVectors, ids: readonly number[]): void {
    if (!this.graph) {
      if (this.enabledFor(cache)) this.startGraph(cache);
      return;
    }
    if (cache !== this.mirrors || this.restoring) return;
    const d = this.options.dimensions;
    const vectors = new Float32Array(ids.length * d);
    ids.forEach((id, i) => {
      const row = cache.position.get(id);
      if (row !== undefined) vectors.set(cache.matrix.subarray(row * d, row * d + d), i * d);
    });
    this.graph.upsert(ids, vectors).catch(() => undefined);
    this.changesSinceSave += ids.length;
    if (this.graph.worthRebuilding) this.startBuild(cache);
    else this.saveIfWorn();
  }

  /** These ids were removed from the cache in place. */
  removed(cache: CachedVectors, ids: readonly number[]): void {
    if (!this.graph || cache !== this.mirrors || this.restoring) return;
    this.graph.remove(ids).catch(() => undefined);
    this.changesSinceSave += ids.length;
    if (this.graph.worthRebuilding) this.startBuild(cache);
    else this.saveIfWorn();
  }

  /**
   * The best `limit` hits (at most `perPage` per page) from the graph's candidates rescored exactly, best first and
   * ties by lower id; null when the exact scan should answer instead (no graph, still building, failed, fewer
   * candidates than asked from a collection that holds them, or a per-page cap that even MAX_CANDIDATES cannot fill).
   */
  async search(cache: CachedVectors, query: Float32Array, limit: number, perPage: number): Promise<VectorHit[] | null> {
    const graph = this.graph;
    if (!graph || !this.enabledFor(cache) || cache !== this.mirrors) return null;
    if (this.building || this.saving) {
      // A save holds the worker for a while (seconds at a million vectors): the exact scan answers meanwhile.
      if (!this.options.waitForBuild) return null;
      while (this.building) await this.building.catch(() => undefined);
      if (this.graph !== graph) return null;
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
      const out = selectPerPage(rows, limit, perPage, (row) => cache.pageIds[row]!).map((row) => ({ id: cache.ids[row]!, pageId: cache.pageIds[row]!, score: scores.get(row)! }));
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
    return this.builds > 0 && this.graph?.state === 'ready' ? this.graph.lastBuildMs : null;
  }

  /** Milliseconds the last load of a saved graph took in the worker (SHA-256 check included), once one finished. */
  get lastLoadMs(): number | null {
    return this.restores > 0 && this.graph?.state === 'ready' ? this.graph.lastLoadMs : null;
  }

  /** Milliseconds the worker took to write the graph file (SHA-256 and sync included) at its last save. */
  get lastSaveMs(): number | null {
    return this.saves > 0 && this.graph ? this.graph.lastSaveMs : null;
  }

  /** Resolves when no build, load or save is running (tests and benchmarks). */
  async settled(): Promise<void> {
    while (this.building || this.saving) {
      await this.building?.catch(() => undefined);
      await this.saving;
    }
  }

  /** Saves a ready graph changed since its last save (not one still building: that would hold up the close). */
  async close(): Promise<void> {
    const graph = this.graph;
    if (graph?.state === 'ready' && !this.building && this.mirrors && this.changesSinceSave > 0) this.save(this.mirrors, graph.wear);
    if (!this.building) await this.saving;
    await this.dropGraph(false);
  }
}
