import { LRUCache } from 'lru-cache';
import { performance } from 'node:perf_hooks';
import type { NotaryConfig } from '../core/config.js';
import { passageModelText, type IndexDoc, type IndexFilter, type IndexHit, type PageHit, type SearchIndex } from '../indexer/search-index.js';
import { detectLanguage, normaliseLanguageTag, primaryLanguage } from '../core/language.js';
import type { VectorHit, VectorIndex } from '../indexer/vector-index.js';
import type { Embedder } from '../reranker/embedder.js';
import { cosineToUnit, dot, l2Normalize } from '../reranker/pooling.js';
import type { Reranker, ScorerKind } from '../reranker/reranker.js';
import { contentWords, stem, words } from '../core/text.js';
import { DEFAULT_EXPANSION, expansionTerms, queryStems, splitSubQueries, type ExpansionOptions, type WeightedTerm } from './reflect.js';
import type { SearchRequest, SearchResponse, SearchService } from './service.js';
import type { QueryRewriter, RewriteOutcome } from './query-rewriter.js';
import { makeSnippet } from './snippet.js';
import type { CrossEncoderStage, CrossEncoderTiming } from './cross-encoder.js';

/** One retrieve -> rerank pass: depth 1 is the first, each further depth level one reflection pass. */
export interface PassTiming {
  depth: number;
  retrieve_ms: number;
  rerank_ms: number;
  /** Index queries run in this pass (cached ones are not run again). */
  queries: number;
  /** Passages the pass added to the pool of retrieved passages. */
  retrieved_new: number;
  /** Passages scored by the reranker in this pass (none is scored twice in one request). */
  reranked: number;
  /** Reflection passes: share of the query's words found in the best passages so far (1 = all). */
  coverage?: number;
  /** Expansion terms and their weights (reflection passes). */
  expansion?: WeightedTerm[];
  sub_queries?: string[];
  /** Whether the pass searched the vectors again with a query vector moved towards the feedback passages. */
  dense_feedback?: boolean;
  /** The optional query rewriter (first reflection pass only): its queries, time, and error if it failed. */
  rewriter?: RewriteOutcome;
}

export interface SearchTimings {
  retrieve_ms: number;
  rerank_ms: number;
  total_ms: number;
  /** Passages scored by the reranker, all passes together. */
  reranked: number;
  /** Per pass, in order. */
  passes: PassTiming[];
  /** Passes run: fewer than the depth asked for when a pass brought no new candidates. */
  depth_reached: number;
  /** The cross-encoder's judgement of the best results (depth >= search.cross_encoder_from_depth); in rerank_ms too. */
  cross_encoder?: CrossEncoderTiming;
}

export interface SearchOutcome extends SearchResponse {
  timings: SearchTimings;
}

/** Reflection settings (depth >= 2). */
export interface ReflectionOptions {
  /** Best passages of the previous pass the relevance model is estimated from. */
  feedbackPassages: number;
  expansion: ExpansionOptions;
  /** RM3's mixing weight of the original query against the expansion terms (0..1). */
  originalWeight: number;
  /** Retrieve for each part of a multi-part question too (first reflection pass). */
  subQueries: boolean;
  /** One index query per expansion term (exact RM3 weights) instead of one OR query of all of them. */
  perTermQueries: boolean;
  /**
   * Reformulate only when the best passages so far miss some query words (coverage below this share); otherwise the
   * pass looks deeper into what was retrieved (deepenWhenCovered) or stops.
   */
  expandBelowCoverage: number;
  deepenWhenCovered: boolean;
  /** New passages a reflection pass may send to the reranker; default search.rerank_top_n. */
  candidatesPerPass?: number;
  /** How far down the pass's new ranking it looks for passages not scored yet; default search.rerank_top_n. */
  window?: number;
  /**
   * Dense retrieval only: Rocchio feedback in embedding space. The pass searches the vectors again with
   * normalise(q + denseFeedbackWeight * weighted mean of the feedback passages' vectors); 0 turns it off.
   */
  denseFeedbackWeight: number;
  /** Dense feedback also when the best passages already hold every query word (lexical expansion does not then). */
  denseFeedbackWhenCovered: boolean;
  /**
   * Dense with stored vectors: share of the semantic score taken from similarity to the refined query vector after a
   * reflection pass (the rest stays similarity to the original query); 0 keeps the original query's alone.
   */
  feedbackScoreWeight: number;
  /**
   * The first reflection pass reads the best pages of the ranking so far in full: every passage of the top
   * `pagePassPages` pages that holds a query word (full-text, restricted to those pages) or has a stored vector is
   * scored, so a page is judged by its best passage anywhere in it, not by the ones that happened to be retrieved.
   * 0 turns it off.
   */
  pagePassPages: number;
}

export const DEFAULT_REFLECTION: ReflectionOptions = {
  feedbackPassages: 10,
  expansion: DEFAULT_EXPANSION,
  originalWeight: 0.7,
  subQueries: true,
  perTermQueries: false,
  expandBelowCoverage: 1,
  deepenWhenCovered: true,
  denseFeedbackWeight: 1,
  denseFeedbackWhenCovered: true,
  feedbackScoreWeight: 0,
  pagePassPages: 10,
};

/**
 * Reflection defaults with dense retrieval, chosen on development queries kept apart from the reported ones
 * (bench/tune-search.ts, bench/results/tune-search-2026-11-22-*.json): the best 3 passages make the feedback, and
 * 0.3 of the model score comes from similarity to the refined query vector.
 */
export const DEFAULT_HYBRID_REFLECTION: ReflectionOptions = {
  ...DEFAULT_REFLECTION,
  feedbackPassages: 3,
  feedbackScoreWeight: 0.3,
};

/** With dense retrieval, the final score's retrieval evidence is the full-text score (measured best, see above). */
export const DEFAULT_HYBRID_EVIDENCE: HybridEvidence = 'lexical';

export interface SearchPipelineOptions {
  reflection?: Partial<ReflectionOptions>;
  /**
   * Share of rerank_score given to the retrieval evidence (the index score of the pass's query, normalised by the
   * pool's best), the rest to the reranker: rerank_score = w * retrieval + (1 - w) * reranker. By scorer kind,
   * because a weak scorer (the lexical fallback) needs the index's ranking more than a model does.
   */
  retrievalWeight?: Partial<Record<ScorerKind, number>>;
  /** Hybrid retrieval: reciprocal rank fusion constant k in sum(weight / (k + rank)). */
  rrfK?: number;
  /**
   * Hybrid retrieval, depth 1: the first `headPerList` passages of the full-text and the vector list are scored by the
   * reranker whatever their fused rank; the rest of the rerank_top_n candidates follow in fused order. 0: fused order alone.
   */
  headPerList?: number;
  /**
   * Hybrid retrieval: the retrieval evidence in the final score. "rrf": the fused ranks of all lists (which picks the
   * candidates either way); "lexical": the full-text scores alone (the dense side is already the model's score).
   */
  hybridEvidence?: HybridEvidence;
  pageEvidence?: Partial<PageEvidenceOptions>;
}

export type HybridEvidence = 'rrf' | 'lexical';

/**
 * Page-level evidence: a result is a page, and a lookup is answered by the page whose own fields (title, headings, URL
 * path, body, searched as a whole in the page index) name the thing asked for, not only by its best passage.
 */
export interface PageEvidenceOptions {
  /** Share of a page's score from its page-index score (normalised by the best), by scorer kind; the rest is its best passage's. */
  weight: Partial<Record<ScorerKind, number>>;
  /** Pages taken from the page index per query; those without a passage in the pool bring their best passage. */
  candidates: number;
  /**
   * A lookup names a thing in a few words ("VACUUM", "nlargest() (in module heapq)"); a question describes what it
   * wants in many. The page weight applies in full up to `fullUpToWords` content words and falls linearly to
   * nothing at `noneFromWords`, where the passages answer.
   */
  fullUpToWords: number;
  noneFromWords: number;
}

/**
 * With a neural model the page weight is 0: measured on 2026-11-23 it cost both sets it was measured on (Cranfield
 * nDCG@10 0.424 -> 0.416, PostgreSQL docs MRR@10 0.746 -> 0.732 at 0.4). The lexical fallback keeps it.
 */
export const DEFAULT_PAGE_EVIDENCE: PageEvidenceOptions = {
  weight: { lexical: 0.5, 'bi-encoder': 0, 'cross-encoder': 0 },
  candidates: 20,
  fullUpToWords: 3,
  noneFromWords: 10,
};

/** The share of the page weight a query of `words` content words gets. */
export function pageWeightScale(words: number, options: Pick<PageEvidenceOptions, 'fullUpToWords' | 'noneFromWords'>): number {
  if (words <= options.fullUpToWords) return 1;
  if (words >= options.noneFromWords) return 0;
  return (options.noneFromWords - words) / Math.max(1, options.noneFromWords - options.fullUpToWords);
}

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

export const DEFAULT_RRF_K = 60;

/**
 * Reciprocal rank fusion of a full-text list of 300 and a vector list of 600 ranks any passage both lists hold in
 * their top ~60 above the first hit of one list alone (2 / (61 + r) > 1 / 61), so the 30 candidates the reranker
 * scores could all be such middling passages while the full-text ranking's best, an exact identifier match the
 * embedder does not place (wordpiece fragments of "VERIFY_DEFAULT", "PyListObject"), is never scored and ends below
 * every scored one. Measured on 2026-11-24: each list's head guaranteed a score lifts the Python docs' MRR@10 from
 * 0.841 to 0.862 (S@1 0.767 -> 0.785), the PostgreSQL docs' from 0.801 to 0.811, and leaves Cranfield's nDCG@10 at
 * 0.424 (bench/results/eval-search-2026-11-24-minilm-head10.json).
 */
export const DEFAULT_HEAD_PER_LIST = 10;

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

export const DEFAULT_RETRIEVAL_WEIGHT: Record<ScorerKind, number> = { lexical: 0.5, 'bi-encoder': 0.2, 'cross-encoder': 0.2 };

/** Best passages whose words decide whether the query's vocabulary was found. */
const COVERAGE_PASSAGES = 3;

/** Passages (the best retrieved) whose term statistics tell a common word from a topical one. */
const POOL_SAMPLE = 100;

/** Best passages a page may contribute to the candidate list, so one long page cannot crowd out the rest. */
const PASSAGES_PER_PAGE = 3;

/** Passages of one page the page pass of a reflection reads (by each retrieval). */
const PAGE_PASS_PASSAGES = 40;


/** Index scores are unbounded; without a reranker they are squashed into [0,1) keeping their order. */
function squash(score: number): number {
  const s = Math.max(0, score);
  return s / (s + 1);
}

/**
 * One retrieval of a request (a full-text query or a vector search) and its scores by passage id. `weight` weighs a
 * full-text list's scores in a weighted sum (RM3's mixture); `rrfWeight` weighs its ranks in reciprocal rank fusion.
 */
interface RetrievalList {
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
class RequestState {
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

  /** Whether a stored passage passes the request's filter (vector hits are filtered after the fact). */
  allows(doc: IndexDoc): boolean {
    if (this.filter.excludeNavigation && doc.navigation) return false;
    const languages = this.filter.languages;
    if (languages && languages.length > 0 && doc.language && !languages.includes(primaryLanguage(doc.language))) return false;
    return true;
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
    return this.dense.index.search(vector, { limit: filtered ? this.limit * 2 : this.limit, perPageLimit: PASSAGES_PER_PAGE });
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
      const vectorHits = await this.dense.index.search(queryVector, { limit: pageIds.length * PAGE_PASS_PASSAGES, perPageLimit: PAGE_PASS_PASSAGES, pageIds });
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

/**
 * retrieve -> rerank -> (reflect -> retrieve -> rerank)* -> one result per URL. Depth 1 is one pass; each further
 * depth level is one reflection pass: RM3 pseudo-relevance feedback from the best passages so far (and sub-queries of
 * a multi-part question), with dense retrieval also Rocchio feedback on the query vector; retrieve again, merge by
 * passage id, score the new passages against the original query. It stops early when a pass brings no new candidate.
 */
export class SearchPipeline implements SearchService {
  private readonly reflection: ReflectionOptions;
  private readonly retrievalWeight: number;
  /** The retrieval evidence's share of a cross-encoder-judged score. */
  private readonly crossEncoderWeight: number;
  private readonly rrfK: number;
  private readonly headPerList: number;
  private readonly hybridEvidence: HybridEvidence;
  private readonly pageWeight: number;
  private readonly pageEvidence: PageEvidenceOptions;
  private readonly pageCandidates: number;
  /** search.query_vector_cache recent queries' vectors (the text as searched); null when off. */
  private readonly queryVectors: LRUCache<string, Float32Array> | null;

  constructor(
    private readonly deps: {
      index: SearchIndex;
      reranker: Reranker;
      config: NotaryConfig['search'];
      options?: SearchPipelineOptions;
      dense?: DenseRetrieval;
      /** Asked for alternative queries in the first reflection pass (search.query_rewriter). */
      rewriter?: QueryRewriter;
      /** The cross-encoder's job: the final rerank_score of searches from its depth on (never below). */
      crossEncoder?: CrossEncoderStage;
    },
  ) {
    const options = deps.options ?? {};
    this.reflection = { ...(deps.dense ? DEFAULT_HYBRID_REFLECTION : DEFAULT_REFLECTION), ...options.reflection };
    const kind = deps.reranker.info.kind;
    this.retrievalWeight = clamp01(options.retrievalWeight?.[kind] ?? DEFAULT_RETRIEVAL_WEIGHT[kind]);
    this.crossEncoderWeight = clamp01(options.retrievalWeight?.['cross-encoder'] ?? DEFAULT_RETRIEVAL_WEIGHT['cross-encoder']);
    this.rrfK = Math.max(0, options.rrfK ?? DEFAULT_RRF_K);
    this.headPerList = Math.max(0, Math.floor(options.headPerList ?? DEFAULT_HEAD_PER_LIST));
    this.hybridEvidence = options.hybridEvidence ?? DEFAULT_HYBRID_EVIDENCE;
    this.pageWeight = clamp01(options.pageEvidence?.weight?.[kind] ?? DEFAULT_PAGE_EVIDENCE.weight[kind] ?? 0);
    this.pageEvidence = { ...DEFAULT_PAGE_EVIDENCE, ...options.pageEvidence, weight: { ...DEFAULT_PAGE_EVIDENCE.weight, ...options.pageEvidence?.weight } };
    this.pageCandidates = Math.max(0, Math.floor(this.pageEvidence.candidates));
    const cached = deps.config.query_vector_cache;
    this.queryVectors = deps.dense && cached > 0 ? new LRUCache<string, Float32Array>({ max: cached }) : null;
  }

  /** The query's vector: from the cache of recent queries, else from the model (and then cached). */
  private async queryVector(dense: DenseRetrieval, query: string): Promise<Float32Array | null> {
    const cache = this.queryVectors;
    const known = cache?.get(query);
    if (known) return known;
    const vector = (await dense.embedder.embed([query]))[0] ?? null;
    if (vector && cache) cache.set(query, vector);
    return vector;
  }

  /** "bm25" or "hybrid (<model>)": what the first stage uses. */
  get retrieval(): string {
    return this.deps.dense ? `hybrid (bm25 + ${this.deps.dense.embedder.model})` : 'bm25';
  }

  async search(request: Pick<SearchRequest, 'query' | 'depth' | 'language'>): Promise<SearchOutcome> {
    const { index, config, dense } = this.deps;
    const started = performance.now();
    const query = request.query.trim();
    const depth = Math.min(config.max_depth, Math.max(1, Math.floor(Number.isFinite(request.depth) ? request.depth : 1)));
    const limit = Math.max(config.rerank_top_n, config.max_results * PASSAGES_PER_PAGE);
    // One language at a time: the one asked for (or the deployment's) filters; otherwise the query's own language, when
    // it can be told, picks which translation of a page is shown.
    const asked = normaliseLanguageTag(request.language ?? config.default_language ?? null);
    const detected = asked ? null : detectLanguage(query);
    const preferred = asked ?? (detected?.reliable ? detected.language : null);
    const filter: IndexFilter = {
      excludeNavigation: !config.include_navigation_pages,
      ...(asked ? { languages: [primaryLanguage(asked)] } : {}),
    };
    const state = new RequestState(index, limit, dense, this.rrfK, this.hybridEvidence, filter, this.headPerList);
    state.pageWeight = this.pageWeight * pageWeightScale(contentWords(query).length, this.pageEvidence);
    const passes: PassTiming[] = [];

    // Depth 1: the query as given (and its vector), passages and whole pages. The model embeds the query on its own
    // thread while full text runs on this one.
    const embedding = dense ? this.queryVector(dense, query) : Promise.resolve(null);
    embedding.catch(() => undefined); // a failure is thrown below, where it is awaited; never an unhandled rejection
    // Whole pages are ranked beside the passages too (on another connection where the index has one).
    const pages = state.pageWeight > 0 && this.pageCandidates > 0 ? index.searchPages(query, { limit: this.pageCandidates, filter }) : null;
    pages?.catch(() => undefined);
    // The vector search is sent as soon as the query's vector is there (the pool takes its hits in order below).
    const vectorHits = embedding.then((vector) => (vector ? state.searchDense(vector) : []));
    vectorHits.catch(() => undefined);
    const originalScores = await state.run(query);
    const fromPages = pages ? await state.runPages(query, pages) : [];
    const queryVector = await embedding;
    const denseScores = queryVector ? await state.runDense('q', queryVector, vectorHits) : null;
    const firstLists: RetrievalList[] = [{ kind: 'lexical', weight: 1, rrfWeight: 1, scores: originalScores }];
    if (denseScores) firstLists.push({ kind: 'dense', weight: 1, rrfWeight: 1, scores: denseScores });
    state.setRetrieval(firstLists);
    const retrieved = performance.now();
    const firstCandidates = config.rerank_top_n > 0 ? [...new Set([...state.forScoring().slice(0, config.rerank_top_n), ...fromPages])] : [];
    const firstScored = await this.scoreNew(query, queryVector, firstCandidates, state);
    passes.push({
      depth: 1,
      retrieve_ms: retrieved - started,
      rerank_ms: performance.now() - retrieved,
      queries: state.queriesRun,
      retrieved_new: state.retrievedNew,
      reranked: firstScored,
    });

    if (config.rerank_top_n > 0) {
      for (let pass = 2; pass <= depth; pass++) {
        const timing = await this.reflect(query, queryVector, pass, firstLists, state, config.rerank_top_n);
        passes.push(timing);
        if (timing.reranked === 0) break;
      }
    }

    let ranking = this.rank(state, config.rerank_top_n > 0);
    let crossEncoder: CrossEncoderTiming | undefined;
    const stage = this.deps.crossEncoder;
    if (stage && config.rerank_top_n > 0 && stage.serves(depth)) ({ ranking, timing: crossEncoder } = await this.crossEncoderRank(query, stage, ranking, state));
    const ranked = await this.oneTranslationEach(query, ranking, preferred, state, config.max_results);
    const results = ranked.map(({ hit, score }) => ({
      url: hit.url,
      title: hit.title,
      snippet: makeSnippet(hit.text, query, config.snippet_chars),
      rerank_score: score,
    }));
    return {
      results,
      timings: {
        retrieve_ms: passes.reduce((sum, p) => sum + p.retrieve_ms, 0),
        rerank_ms: passes.reduce((sum, p) => sum + p.rerank_ms, 0) + (crossEncoder?.ms ?? 0),
        total_ms: performance.now() - started,
        reranked: state.rerankScores.size,
        passes,
        depth_reached: passes.length,
        ...(crossEncoder ? { cross_encoder: crossEncoder } : {}),
      },
    };
  }

  /**
   * The cross-encoder judges the best `topN` results of the passes (each URL's best passage, found by any pass)
   * against the original query: their score is w * retrieval evidence / best + (1 - w) * its score, w by
   * search retrieval weight of a cross-encoder; every other result follows below them in the passes' order.
   */
  private async crossEncoderRank(
    query: string,
    stage: CrossEncoderStage,
    ranking: Array<{ hit: IndexHit; score: number }>,
    state: RequestState,
  ): Promise<{ ranking: Array<{ hit: IndexHit; score: number }>; timing: CrossEncoderTiming }> {
    const head = ranking.slice(0, stage.options.topN);
    const { scores, timing } = await stage.score(query, head.map(({ hit }) => hit));
    let best = 0;
    for (const r of state.evidence.values()) best = Math.max(best, r);
    const w = this.crossEncoderWeight;
    const judged = head
      .map(({ hit }, i) => ({ hit, score: clamp01(w * (best > 0 ? (state.evidence.get(hit.id) ?? 0) / best : 0) + (1 - w) * clamp01(scores[i] ?? 0)), order: i }))
      .sort((x, y) => y.score - x.score || x.order - y.order);
    const lowest = judged.reduce((low, { score }) => Math.min(low, score), 1);
    const rest = ranking.slice(head.length).map(({ hit, score }) => ({ hit, score: clamp01(lowest * 0.999 * score) }));
    return { ranking: [...judged.map(({ hit, score }) => ({ hit, score })), ...rest], timing };
  }

  /** One reflection pass. `firstLists`: the first pass's retrievals (full-text, then dense when there is one). */
  private async reflect(
    query: string,
    queryVector: Float32Array | null,
    pass: number,
    firstLists: readonly RetrievalList[],
    state: RequestState,
    topN: number,
  ): Promise<PassTiming> {
    const started = performance.now();
    const queriesBefore = state.queriesRun;
    const retrievedBefore = state.retrievedNew;
    const options = this.reflection;

    let ranked = this.rank(state, true).filter(({ hit }) => state.rerankScores.has(hit.id));
    // The page pass first: the best pages read in full, so feedback and the final ranking see their best passages.
    let pagePass: number[] = [];
    if (pass === 2 && options.pagePassPages > 0) {
      const pages = [...new Set(ranked.slice(0, options.pagePassPages).map(({ hit }) => hit.pageId))];
      pagePass = await state.runPagePassages(query, queryVector, pages);
      if (pagePass.length > 0) {
        await this.scoreNew(query, queryVector, pagePass, state);
        ranked = this.rank(state, true).filter(({ hit }) => state.rerankScores.has(hit.id));
      }
    }
    const coverage = queryCoverage(query, ranked.slice(0, COVERAGE_PASSAGES).map(({ hit }) => passageText(hit)));
    const covered = coverage >= options.expandBelowCoverage;
    const cap = options.candidatesPerPass ?? topN;
    const feedbackHits = ranked.slice(0, options.feedbackPassages);
    let expansion: WeightedTerm[] = [];
    let subQueries: string[] = [];
    const [originalList, ...denseLists] = firstLists;
    const originalScores = originalList?.scores ?? new Map<number, number>();
    const lists: RetrievalList[] = [];

    if (!covered) {
      const feedback = feedbackHits.map(({ hit, score }) => ({ text: passageText(hit), weight: score }));
      const pool = state
        .byRetrieval()
        .slice(0, POOL_SAMPLE)
        .map((id) => state.pool.get(id))
        .filter((hit): hit is IndexHit => hit !== undefined)
        .map(passageText);
      expansion = expansionTerms(query, feedback, options.expansion, pool);

      // The original query's index score; sub-queries hold a subset of its terms, so their scores bound it from below.
      subQueries = pass === 2 && options.subQueries ? splitSubQueries(query) : [];
      const original = new Map(originalScores);
      for (const sub of subQueries) {
        for (const [id, score] of await state.run(sub)) original.set(id, Math.max(original.get(id) ?? 0, score));
      }
      // Full-text only, the lists (each scaled to its best) are summed: RM3's mixture of the query and its expansion.
      // In rank fusion the original query counts 1 and the expansion in RM3's proportion to it.
      const expansionRrf = (1 - options.originalWeight) / Math.max(1e-9, options.originalWeight);
      lists.push({ kind: 'lexical', weight: options.originalWeight, rrfWeight: 1, scores: original });
      if (options.perTermQueries) {
        for (const { term, weight } of expansion) {
          lists.push({ kind: 'lexical', weight: (1 - options.originalWeight) * weight, rrfWeight: expansionRrf * weight, scores: await state.run(term) });
        }
      } else if (expansion.length > 0) {
        const scores = await state.run(expansion.map((t) => t.term).join(' '));
        lists.push({ kind: 'lexical', weight: 1 - options.originalWeight, rrfWeight: expansionRrf, scores });
      }
    } else if (this.deps.dense && originalList) {
      lists.push(originalList);
    }

    // The rewriter's queries are retrieved like the expansion: in a sum of scores they split RM3's complement weight
    // (1 - originalWeight) between them; in rank fusion each is a list of its own, full-text and, with vectors, dense.
    let rewriter: RewriteOutcome | undefined;
    if (pass === 2 && this.deps.rewriter) {
      rewriter = await this.deps.rewriter.rewrite(query, feedbackHits.slice(0, COVERAGE_PASSAGES).map(({ hit }) => passageText(hit)));
      if (rewriter.queries.length > 0) {
        if (covered && originalList && !this.deps.dense) lists.push({ ...originalList, weight: options.originalWeight });
        const share = (1 - options.originalWeight) / rewriter.queries.length;
        const vectors = queryVector && this.deps.dense ? await this.deps.dense.embedder.embed(rewriter.queries) : [];
        for (const [i, rewritten] of rewriter.queries.entries()) {
          lists.push({ kind: 'lexical', weight: share, rrfWeight: 1, scores: await state.run(rewritten) });
          const vector = vectors[i];
          if (vector) lists.push({ kind: 'dense', weight: 1, rrfWeight: 1, scores: await state.runDense(`rw${i}`, vector) });
        }
      }
    }
    const rewritten = (rewriter?.queries.length ?? 0) > 0;

    let denseFeedback = false;
    if (queryVector && (!covered || options.denseFeedbackWhenCovered) && options.denseFeedbackWeight > 0) {
      const feedbackVectors = await state.vectorsOf(feedbackHits.map(({ hit }) => hit.id));
      const refined = rocchio(
        queryVector,
        feedbackHits.flatMap(({ hit, score }) => {
          const v = feedbackVectors.get(hit.id);
          return v ? [{ vector: v, weight: score }] : [];
        }),
        options.denseFeedbackWeight,
      );
      if (refined) {
        lists.push(...denseLists, { kind: 'dense', weight: 1, rrfWeight: 1, scores: await state.runDense(`prf${pass}`, refined) });
        if (options.feedbackScoreWeight > 0 && this.deps.dense?.scoresFromVectors) state.feedbackVector = refined;
        denseFeedback = true;
      }
    }
    if (!denseFeedback) lists.push(...denseLists);

    let fresh: number[];
    if (covered && !denseFeedback && !rewritten) {
      // The best passages already hold every query word: reformulating would only drift. Look deeper instead.
      fresh = state
        .byRetrieval()
        .filter((id) => !state.rerankScores.has(id))
        .slice(0, options.deepenWhenCovered ? cap : 0);
    } else {
      state.setRetrieval(lists);
      // Fused order here, not forScoring(): the heads of the expansion and feedback lists are drift as often as not,
      // and scoring them first cost depth 2 on the PostgreSQL docs MRR@10 0.811 -> 0.645 (2026-11-24).
      fresh = state
        .byRetrieval()
        .slice(0, options.window ?? topN)
        .filter((id) => !state.rerankScores.has(id))
        .slice(0, cap);
    }
    const retrieved = performance.now();
    const reranked = (await this.scoreNew(query, queryVector, fresh, state)) + pagePass.length;
    return {
      depth: pass,
      retrieve_ms: retrieved - started,
      rerank_ms: performance.now() - retrieved,
      queries: state.queriesRun - queriesBefore,
      retrieved_new: state.retrievedNew - retrievedBefore,
      reranked,
      coverage,
      expansion,
      sub_queries: subQueries,
      dense_feedback: denseFeedback,
      ...(rewriter ? { rewriter } : {}),
    };
  }

  /**
   * Scores the passages not scored yet in this request against the original query; returns how many it scored. With
   * the reranker's own vectors stored, a passage's score is the cosine of the query vector and its stored vector.
   */
  private async scoreNew(query: string, queryVector: Float32Array | null, ids: readonly number[], state: RequestState): Promise<number> {
    const hits = ids.filter((id) => !state.rerankScores.has(id)).map((id) => state.pool.get(id)).filter((h): h is IndexHit => h !== undefined);
    if (hits.length === 0) return 0;
    let toModel = hits;
    if (queryVector && this.deps.dense?.scoresFromVectors) {
      const stored = await state.vectorsOf(hits.map((h) => h.id));
      for (const [id, vector] of stored) state.rerankScores.set(id, clamp01(cosineToUnit(dot(queryVector, vector))));
      toModel = hits.filter((h) => !stored.has(h.id));
    }
    if (toModel.length > 0) {
      const scores = await this.deps.reranker.score(query, toModel.map(passageModelText));
      toModel.forEach((hit, i) => state.rerankScores.set(hit.id, clamp01(scores[i] ?? 0)));
    }
    return hits.length;
  }

  /**
   * Translations of one page are one result: the first (best) of each translation group is kept, shown in the
   * preferred language when the index has that version (its best passage for the query), at the group's score.
   */
  private async oneTranslationEach(
    query: string,
    ranked: Array<{ hit: IndexHit; score: number }>,
    preferred: string | null,
    state: RequestState,
    max: number,
  ): Promise<Array<{ hit: IndexHit; score: number }>> {
    const out: Array<{ hit: IndexHit; score: number }> = [];
    const groups = new Set<string>();
    const urls = new Set<string>();
    const wanted = preferred ? primaryLanguage(preferred) : null;
    for (const entry of ranked) {
      if (out.length >= max) break;
      const key = entry.hit.translationKey;
      if (key && groups.has(key)) continue;
      if (key) groups.add(key);
      let shown = entry;
      if (key && wanted && entry.hit.language && primaryLanguage(entry.hit.language) !== wanted) {
        const [version] = await this.deps.index.search(query, {
          limit: 1,
          perPageLimit: 1,
          filter: { ...state.filter, translationKey: key, languages: [wanted] },
        });
        if (version?.language && primaryLanguage(version.language) === wanted) shown = { hit: version, score: entry.score };
      }
      if (urls.has(shown.hit.url)) continue;
      urls.add(shown.hit.url);
      out.push(shown);
    }
    return out;
  }

  /**
   * The best passage of each URL, best first. Scored passages: w * retrieval/best retrieval + (1 - w) * reranker
   * score; a page's score then mixes in its page-index score (normalised by the best): (1 - a) * passage + a * page.
   * The passages retrieved but never scored follow, in retrieval order, below every scored one.
   */
  private rank(state: RequestState, reranked: boolean): Array<{ hit: IndexHit; score: number }> {
    const entries: Array<{ hit: IndexHit; score: number; retrieval: number }> = [];
    if (!reranked && !this.deps.dense) {
      for (const hit of state.pool.values()) entries.push({ hit, score: squash(hit.score), retrieval: hit.score });
    } else if (!reranked) {
      // Hybrid without a reranker: the fused retrieval score, scaled so the best is 1.
      let best = 0;
      for (const r of state.retrieval.values()) best = Math.max(best, r);
      for (const hit of state.pool.values()) {
        const r = best > 0 ? (state.retrieval.get(hit.id) ?? 0) / best : 0;
        entries.push({ hit, score: clamp01(r), retrieval: r });
      }
    } else {
      let best = 0;
      for (const r of state.evidence.values()) best = Math.max(best, r);
      const w = this.retrievalWeight;
      const normalised = (id: number): number => (best > 0 ? (state.evidence.get(id) ?? 0) / best : 0);
      const gamma = state.feedbackVector ? this.reflection.feedbackScoreWeight : 0;
      let lowest = 1;
      for (const [id, rerank] of state.rerankScores) {
        const hit = state.pool.get(id);
        if (!hit) continue;
        const vector = gamma > 0 ? state.vectors.get(id) : undefined;
        const semantic = vector && state.feedbackVector ? (1 - gamma) * rerank + gamma * cosineToUnit(dot(state.feedbackVector, vector)) : rerank;
        const score = clamp01(w * normalised(id) + (1 - w) * semantic);
        lowest = Math.min(lowest, score);
        entries.push({ hit, score, retrieval: normalised(id) });
      }
      // Unscored passages rank below the scored ones, keeping their retrieval order.
      for (const hit of state.pool.values()) {
        if (state.rerankScores.has(hit.id)) continue;
        const r = normalised(hit.id);
        entries.push({ hit, score: clamp01(lowest * 0.999 * r), retrieval: r });
      }
    }
    const bestByUrl = new Map<string, (typeof entries)[number]>();
    for (const entry of entries) {
      const prev = bestByUrl.get(entry.hit.url);
      if (!prev || entry.score > prev.score || (entry.score === prev.score && entry.retrieval > prev.retrieval)) bestByUrl.set(entry.hit.url, entry);
    }
    let bestPage = 0;
    for (const v of state.pageScores.values()) bestPage = Math.max(bestPage, v);
    const a = bestPage > 0 ? state.pageWeight : 0;
    return [...bestByUrl.values()]
      .map((entry) => {
        const page = a > 0 ? (state.pageScores.get(entry.hit.pageId) ?? 0) / bestPage : 0;
        return { ...entry, score: clamp01((1 - a) * entry.score + a * page) };
      })
      .sort((x, y) => y.score - x.score || y.retrieval - x.retrieval || x.hit.id - y.hit.id)
      .map(({ hit, score }) => ({ hit, score }));
  }
}

function passageText(hit: IndexHit): string {
  return `${hit.title} ${hit.headingPath} ${hit.text}`;
}

/** Largest share of the query's content stems any one of `passages` holds. */
function queryCoverage(query: string, passages: readonly string[]): number {
  const stems = queryStems(query);
  if (stems.size === 0) return 1;
  let best = 0;
  for (const text of passages) {
    const found = new Set(words(text).map(stem));
    let n = 0;
    for (const stem of stems) if (found.has(stem)) n++;
    best = Math.max(best, n / stems.size);
  }
  return best;
}

function clamp01(x: number): number {
  if (!Number.isFinite(x)) return 0;
  return Math.min(1, Math.max(0, x));
}

/**
 * Rocchio feedback: normalise(q + beta * weighted mean of the feedback vectors), or null without feedback. The mean is
 * unit-normalised first so beta alone sets how far the query moves.
 */
export function rocchio(query: Float32Array, feedback: ReadonlyArray<{ vector: Float32Array; weight: number }>, beta: number): Float32Array | null {
  const total = feedback.reduce((sum, f) => sum + Math.max(0, f.weight), 0);
  if (!(total > 0)) return null;
  const mean = new Float64Array(query.length);
  for (const { vector, weight } of feedback) {
    const w = Math.max(0, weight) / total;
    for (let d = 0; d < mean.length; d++) mean[d] = (mean[d] ?? 0) + w * (vector[d] ?? 0);
  }
  const direction = l2Normalize(mean);
  const moved = new Float64Array(query.length);
  for (let d = 0; d < moved.length; d++) moved[d] = (query[d] ?? 0) + beta * (direction[d] ?? 0);
  return Float32Array.from(l2Normalize(moved));
}
