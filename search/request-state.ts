import type {
  IndexDoc,
  IndexFilter,
  IndexHit,
  PageHit,
  SearchIndex,
  VectorHit,
  VectorIndex,
} from '../indexer/index.js';
import { primaryLanguage } from '../core/language.js';
import { factsPass, hasFactFilter, hostOf, publishedMs, type FactFilter } from '../indexer/index.js';
import type { Embedder } from '../reranker/index.js';
import { dot } from '../reranker/index.js';
import { PAGE_PASS_PASSAGES, PASSAGES_PER_PAGE, type HybridEvidence } from './tuning.js';

/**
 * Dense retrieval beside the full-text index: passage vectors of `embedder`'s model. `scoresFromVectors` says the
 * embedder is the reranker's own bi-encoder, so a passage's rerank score is the cosine of stored vectors (no model
 * run per passage).
 */
export interface DenseRetrieval {
  index: VectorIndex;
  embedder: Embedder;
  scoresFromVectors: boolean;
}

/**
 * Candidate order for the reranker: the heads of the lists (their first `perList` ids, taken in turns so a cut keeps
 * each list's best), then every other id in `fused` order. Each list is ordered best first.
 */
export function candidateOrder(lists: ReadonlyArray<readonly number[]>, fused: readonly number[], perList: number): number[] {
  const out: number[] = [];
  const seen = new Set<number>();
  const add = (id: number): void => {
    if (seen.has(id)) return;
    seen.add(id);
    out.push(id);
  };
  for (let rank = 0; rank < perList; rank++) for (const list of lists) if (rank < list.length) add(list[rank] as number);
  for (const id of fused) add(id);
  return out;
}

/**
 * One retrieval of a request (a full-text query or a vector search) and its scores by passage id. `weight` weighs a
 * full-text list's scores in a weighted sum (RM3's mixture); `rrfWeight` weighs its ranks in reciprocal rank fusion.
 */
export interface RetrievalList {
  kind: 'lexical' | 'dense';
  weight: number;
  rrfWeight: number;
  scores: ReadonlyMap<number, number>;
}

/**
 * Everything one request has retrieved and scored: the pool of passages (union by id), each retrieval's results
 * (cached by query string or vector key), passage vectors fetched, and the reranker's scores (cached by passage id: a
 * passage is scored at most once).
 */
export class RequestState {
  readonly pool = new Map<number, IndexHit>();
  readonly queryCache = new Map<string, Map<number, number>>();
  readonly rerankScores = new Map<number, number>();
  readonly vectors = new Map<number, Float32Array>();
  /** The best raw index score of each full-text query run, so hits found later join its list on the same scale. */
  private readonly rawBest = new Map<string, number>();
  /** Orders candidates for scoring. */
  retrieval = new Map<number, number>();
  /** Each retrieval list of the last setRetrieval, best first (hybrid: their heads are scored first). */
  listOrders: number[][] = [];
  /** The retrieval evidence in the final score (w * evidence / best + (1 - w) * semantic score). */
  evidence = new Map<number, number>();
  /** Rocchio-refined query vector of the last reflection pass, when its similarity enters the final score. */
  feedbackVector: Float32Array | null = null;
  queriesRun = 0;
  retrievedNew = 0;

  /** Page-index score by page id (the query's page-level retrieval). */
  pageScores = new Map<number, number>();
  /** Share of a page's score from its page-index score, for this query. */
  pageWeight = 0;

  constructor(
    private readonly index: SearchIndex,
    private readonly limit: number,
    private readonly dense: DenseRetrieval | undefined,
    private readonly rrfK: number,
    private readonly hybridEvidence: HybridEvidence,
    readonly filter: IndexFilter,
    private readonly headPerList = 0,
  ) {}

  /** The filter has a domain, date or collection part. */
  private get hasFacts(): boolean {
    return hasFactFilter(this.filter);
  }

  /**
   * Whether a stored passage passes the request's filter: vector hits are filtered by language and navigation after
   * the fact (domains and dates inside the vector search; checked here again from the passage's own facts, for
   * vectors stored before the vector index kept them).
   */
  allows(doc: IndexDoc): boolean {
    if (this.filter.excludeNavigation && doc.navigation) return false;
    // A document read back without its collections (index.get) was checked for them inside the vector search.
    if (this.hasFacts && !factsPass(this.factFilter(doc.collections !== undefined), hostOf(doc.url), publishedMs(doc.publishedAt), doc.collections)) return false;
    const languages = this.filter.languages;
    if (languages && languages.length > 0 && doc.language && !languages.includes(primaryLanguage(doc.language))) return false;
    return true;
  }

  /** The filter's domain, date and collection parts (what the vector index applies inside its search). */
  private factFilter(withCollections = true): FactFilter {
    const { includeHosts, excludeHosts, published, collections } = this.filter;
    return {
      ...(includeHosts ? { includeHosts } : {}),
      ...(excludeHosts ? { excludeHosts } : {}),
      ...(published ? { published } : {}),
      ...(collections && withCollections ? { collections } : {}),
    };
  }

  async run(query: string): Promise<Map<number, number>> {
    const cached = this.queryCache.get(query);
    if (cached) return cached;
    const hits = await this.index.search(query, { limit: this.limit, perPageLimit: PASSAGES_PER_PAGE, filter: this.filter });
    this.queriesRun++;
    // An index score is comparable only within its own list (BM25, ts_rank and Meilisearch's 0..1 ranking score are
    // on different scales): each list is divided by its best, so lists are combined on one scale whatever the backend.
    let best = 0;
    for (const hit of hits) best = Math.max(best, hit.score);
    const scores = new Map<number, number>();
    for (const hit of hits) {
      scores.set(hit.id, best > 0 ? Math.max(0, hit.score) / best : 0);
      this.addToPool(hit);
    }
    this.queryCache.set(query, scores);
    this.rawBest.set(query, best);
    return scores;
  }

  /** The vector index's hits for `vector`: the search alone, which runDense then takes into the pool. */
  searchDense(vector: Float32Array): Promise<VectorHit[]> {
    if (!this.dense) return Promise.resolve([]);
    // Vector hits are filtered after the search: ask for more when a filter is on.
    const filtered = this.filter.excludeNavigation || (this.filter.languages?.length ?? 0) > 0;
    return this.dense.index.search(vector, { limit: filtered ? this.limit * 2 : this.limit, perPageLimit: PASSAGES_PER_PAGE, filter: this.factFilter() });
  }

  /**
   * Vector search; results are cached under `key`. Scores are cosines (may be negative). `searched`: the hits of
   * searchDense(vector) begun earlier by the caller, so that the search ran beside other work.
   */
  async runDense(key: string, vector: Float32Array, searched?: Promise<VectorHit[]>): Promise<Map<number, number>> {
    const cacheKey = `\u0000dense:${key}`;
    const cached = this.queryCache.get(cacheKey);
    if (cached) return cached;
    const scores = new Map<number, number>();
    if (!this.dense) return scores;
    const hits = await (searched ?? this.searchDense(vector));
    this.queriesRun++;
    for (const hit of hits) scores.set(hit.id, hit.score);
    const unknown = hits.filter((hit) => !this.pool.has(hit.id)).map((hit) => hit.id);
    for (const doc of await this.index.get(unknown)) if (this.allows(doc)) this.addToPool({ ...doc, score: 0 });
    // A vector whose passage is not in the full-text index (being re-indexed) cannot be shown: drop it.
    for (const id of [...scores.keys()]) if (!this.pool.has(id)) scores.delete(id);
    this.queryCache.set(cacheKey, scores);
    return scores;
  }

  /** Stored vectors of these passages (fetched once per request); passages without one are absent. */
  async vectorsOf(ids: readonly number[]): Promise<Map<number, Float32Array>> {
    const wanted = ids.filter((id) => !this.vectors.has(id));
    if (this.dense && wanted.length > 0) for (const [id, v] of await this.dense.index.vectors(wanted)) this.vectors.set(id, v);
    const out = new Map<number, Float32Array>();
    for (const id of ids) {
      const v = this.vectors.get(id);
      if (v) out.set(id, v);
    }
    return out;
  }

  /**
   * Dot products of `vector` with these passages' stored vectors (passages without one are absent): from the vectors
   * this request already holds, else from the vector index, which computes them where it keeps them when it can.
   */
  async similaritiesOf(vector: Float32Array, ids: readonly number[]): Promise<Map<number, number>> {
    const index = this.dense?.index;
    const out = new Map<number, number>();
    const wanted = index?.similarities ? ids.filter((id) => !this.vectors.has(id)) : [];
    const vectors = await this.vectorsOf(ids.filter((id) => !wanted.includes(id)));
    for (const [id, v] of vectors) out.set(id, dot(vector, v));
    if (index?.similarities && wanted.length > 0) for (const [id, s] of await index.similarities(vector, wanted)) out.set(id, s);
    return out;
  }

  /**
   * The page index's best pages for `query` (`ranked`, begun by the caller so that it runs beside the passage
   * query); pages without a passage in the pool bring their best passages (one full-text query restricted to them).
   * Returns the ids of the passages added.
   */
  async runPages(query: string, ranked: Promise<PageHit[]>): Promise<number[]> {
    const pages = await ranked;
    this.queriesRun++;
    for (const page of pages) this.pageScores.set(page.pageId, Math.max(this.pageScores.get(page.pageId) ?? 0, Math.max(0, page.score)));
    const pooled = new Set([...this.pool.values()].map((hit) => hit.pageId));
    const missing = pages.filter((p) => !pooled.has(p.pageId)).map((p) => p.pageId);
    if (missing.length === 0) return [];
    const hits = await this.index.search(query, { limit: missing.length, perPageLimit: 1, filter: { ...this.filter, pageIds: missing } });
    this.queriesRun++;
    const added: number[] = [];
    const list = this.queryCache.get(query);
    for (const hit of hits) {
      if (this.pool.has(hit.id)) continue;
      this.addToPool(hit);
      list?.set(hit.id, this.onListScale(query, hit.score));
      added.push(hit.id);
    }
    return added;
  }

  /** Every passage of these pages that matches the query or has a vector; returns the ids new to the pool. */
  async runPagePassages(query: string, queryVector: Float32Array | null, pageIds: readonly number[]): Promise<number[]> {
    if (pageIds.length === 0) return [];
    const added: number[] = [];
    const list = this.queryCache.get(query);
    const hits = await this.index.search(query, { limit: pageIds.length * PAGE_PASS_PASSAGES, perPageLimit: PAGE_PASS_PASSAGES, filter: { ...this.filter, pageIds } });
    this.queriesRun++;
    for (const hit of hits) {
      if (list && !list.has(hit.id)) list.set(hit.id, this.onListScale(query, hit.score));
      if (this.pool.has(hit.id)) continue;
      this.addToPool(hit);
      added.push(hit.id);
    }
    if (this.dense && queryVector) {
      const vectorHits = await this.dense.index.search(queryVector, {
        limit: pageIds.length * PAGE_PASS_PASSAGES,
        perPageLimit: PAGE_PASS_PASSAGES,
        pageIds,
        filter: this.factFilter(),
      });
      this.queriesRun++;
      const unknown = vectorHits.filter((h) => !this.pool.has(h.id)).map((h) => h.id);
      for (const doc of await this.index.get(unknown)) {
        if (!this.allows(doc)) continue;
        this.addToPool({ ...doc, score: 0 });
        added.push(doc.id);
      }
    }
    return added;
  }

  /** A raw index score for `query` divided by the best of the query's own list (as run() scales it), at most 1. */
  private onListScale(query: string, score: number): number {
    const best = this.rawBest.get(query) ?? 0;
    return best > 0 ? Math.min(1, Math.max(0, score) / best) : 0;
  }

  private addToPool(hit: IndexHit): void {
    if (this.pool.has(hit.id)) return;
    this.pool.set(hit.id, hit);
    this.retrievedNew++;
  }

  /**
   * The retrieval evidence of each pooled passage. Full-text only: a weighted sum of the lists' scores, each list
   * scaled to its best (RM3's mixture of the query and its expansion). Hybrid: reciprocal rank fusion, because index
   * scores and cosines are on different scales.
   */
  setRetrieval(lists: readonly RetrievalList[]): void {
    const summed = new Map<number, number>();
    for (const { kind, weight, scores } of lists) {
      if (kind !== 'lexical') continue;
      for (const [id, score] of scores) summed.set(id, (summed.get(id) ?? 0) + weight * score);
    }
    if (!this.dense) {
      this.retrieval = summed;
      this.evidence = summed;
      return;
    }
    const fused = new Map<number, number>();
    this.listOrders = [];
    for (const { rrfWeight, scores } of lists) {
      const ranked = [...scores.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      ranked.forEach(([id], rank) => fused.set(id, (fused.get(id) ?? 0) + rrfWeight / (this.rrfK + rank + 1)));
      if (rrfWeight > 0) this.listOrders.push(ranked.map(([id]) => id));
    }
    this.retrieval = fused;
    this.evidence = this.hybridEvidence === 'lexical' ? summed : fused;
  }

  /** Pool passages ordered by retrieval score (ties: the lower id). */
  byRetrieval(): number[] {
    return [...this.pool.keys()].sort((a, b) => (this.retrieval.get(b) ?? 0) - (this.retrieval.get(a) ?? 0) || a - b);
  }

  /** The order passages are sent to the reranker in: with several lists fused, their heads first (candidateOrder). */
  forScoring(): number[] {
    const fused = this.byRetrieval();
    if (!this.dense || this.headPerList <= 0 || this.listOrders.length < 2) return fused;
    return candidateOrder(
      this.listOrders.map((list) => list.filter((id) => this.pool.has(id))),
      fused,
      this.headPerList,
    );
  }
}
