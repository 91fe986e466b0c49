import { performance } from 'node:perf_hooks';
import type { NotaryConfig } from '../core/config.js';
import type { IndexHit, SearchIndex } from '../indexer/search-index.js';
import type { Reranker, ScorerKind } from '../reranker/reranker.js';
import { DEFAULT_EXPANSION, expansionTerms, queryStems, splitSubQueries, termStem, words, type ExpansionOptions, type WeightedTerm } from './reflect.js';
import type { SearchRequest, SearchResponse, SearchService } from './service.js';
import { makeSnippet } from './snippet.js';

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
}

export const DEFAULT_REFLECTION: ReflectionOptions = {
  feedbackPassages: 10,
  expansion: DEFAULT_EXPANSION,
  originalWeight: 0.7,
  subQueries: true,
  perTermQueries: false,
  expandBelowCoverage: 1,
  deepenWhenCovered: true,
};

export interface SearchPipelineOptions {
  reflection?: Partial<ReflectionOptions>;
  /**
   * Share of rerank_score given to the retrieval evidence (the index score of the pass's query, normalised by the
   * pool's best), the rest to the reranker: rerank_score = w * retrieval + (1 - w) * reranker. By scorer kind,
   * because a weak scorer (the lexical fallback) needs the index's ranking more than a model does.
   */
  retrievalWeight?: Partial<Record<ScorerKind, number>>;
}

export const DEFAULT_RETRIEVAL_WEIGHT: Record<ScorerKind, number> = { lexical: 0.5, 'bi-encoder': 0.2, 'cross-encoder': 0.2 };

/** Best passages whose words decide whether the query's vocabulary was found. */
const COVERAGE_PASSAGES = 3;

/** Passages (the best retrieved) whose term statistics tell a common word from a topical one. */
const POOL_SAMPLE = 100;

/** Best passages a page may contribute to the candidate list, so one long page cannot crowd out the rest. */
const PASSAGES_PER_PAGE = 3;

/** The text a cross-encoder sees: where the passage sits, then the passage. */
export function rerankInput(hit: IndexHit): string {
  const where = hit.headingPath ? `${hit.title} — ${hit.headingPath}` : hit.title;
  return `${where}. ${hit.text}`;
}

/** Index scores are unbounded; without a reranker they are squashed into [0,1) keeping their order. */
function squash(score: number): number {
  const s = Math.max(0, score);
  return s / (s + 1);
}

/** One index query of a request, its weight in the pass's retrieval score and the scores it returned by passage id. */
interface RetrievalList {
  weight: number;
  scores: ReadonlyMap<number, number>;
}

/**
 * Everything one request has retrieved and scored: the pool of passages (union by id), each index query's results
 * (cached by query string) and the reranker's scores (cached by passage id: a passage is scored at most once).
 */
class RequestState {
  readonly pool = new Map<number, IndexHit>();
  readonly queryCache = new Map<string, Map<number, number>>();
  readonly rerankScores = new Map<number, number>();
  retrieval = new Map<number, number>();
  queriesRun = 0;
  retrievedNew = 0;

  constructor(
    private readonly index: SearchIndex,
    private readonly limit: number,
  ) {}

  async run(query: string): Promise<Map<number, number>> {
    const cached = this.queryCache.get(query);
    if (cached) return cached;
    const hits = await this.index.search(query, { limit: this.limit, perPageLimit: PASSAGES_PER_PAGE });
    this.queriesRun++;
    const scores = new Map<number, number>();
    for (const hit of hits) {
      scores.set(hit.id, Math.max(0, hit.score));
      if (!this.pool.has(hit.id)) {
        this.pool.set(hit.id, hit);
        this.retrievedNew++;
      }
    }
    this.queryCache.set(query, scores);
    return scores;
  }

  /** Weighted sum of the lists' scores: index scores are additive over query terms, so this is a weighted query. */
  setRetrieval(lists: readonly RetrievalList[]): void {
    const out = new Map<number, number>();
    for (const { weight, scores } of lists) {
      for (const [id, score] of scores) out.set(id, (out.get(id) ?? 0) + weight * score);
    }
    this.retrieval = out;
  }

  /** Pool passages ordered by retrieval score (ties: the lower id). */
  byRetrieval(): number[] {
    return [...this.pool.keys()].sort((a, b) => (this.retrieval.get(b) ?? 0) - (this.retrieval.get(a) ?? 0) || a - b);
  }
}

/**
 * retrieve -> rerank -> (reflect -> retrieve -> rerank)* -> one result per URL. Depth 1 is one pass; each further
 * depth level is one reflection pass: RM3 pseudo-relevance feedback from the best passages so far (and sub-queries of
 * a multi-part question), retrieve again, merge by passage id, score the new passages against the original query.
 * It stops early when a pass brings no new candidate.
 */
export class SearchPipeline implements SearchService {
  private readonly reflection: ReflectionOptions;
  private readonly retrievalWeight: number;

  constructor(
    private readonly deps: { index: SearchIndex; reranker: Reranker; config: NotaryConfig['search']; options?: SearchPipelineOptions },
  ) {
    const options = deps.options ?? {};
    this.reflection = { ...DEFAULT_REFLECTION, ...options.reflection };
    const kind = deps.reranker.info.kind;
    this.retrievalWeight = clamp01(options.retrievalWeight?.[kind] ?? DEFAULT_RETRIEVAL_WEIGHT[kind]);
  }

  async search(request: Pick<SearchRequest, 'query' | 'depth'>): Promise<SearchOutcome> {
    const { index, config } = this.deps;
    const started = performance.now();
    const query = request.query.trim();
    const depth = Math.min(config.max_depth, Math.max(1, Math.floor(Number.isFinite(request.depth) ? request.depth : 1)));
    const limit = Math.max(config.rerank_top_n, config.max_results * PASSAGES_PER_PAGE);
    const state = new RequestState(index, limit);
    const passes: PassTiming[] = [];

    // Depth 1: the query as given.
    const originalScores = await state.run(query);
    state.setRetrieval([{ weight: 1, scores: originalScores }]);
    const retrieved = performance.now();
    const firstCandidates = config.rerank_top_n > 0 ? state.byRetrieval().slice(0, config.rerank_top_n) : [];
    const firstScored = await this.scoreNew(query, firstCandidates, state);
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
        const timing = await this.reflect(query, pass, originalScores, state, config.rerank_top_n);
        passes.push(timing);
        if (timing.reranked === 0) break;
      }
    }

    const results = this.rank(state, config.rerank_top_n > 0)
      .slice(0, config.max_results)
      .map(({ hit, score }) => ({
        url: hit.url,
        title: hit.title,
        snippet: makeSnippet(hit.text, query, config.snippet_chars),
        rerank_score: score,
      }));
    return {
      results,
      timings: {
        retrieve_ms: passes.reduce((sum, p) => sum + p.retrieve_ms, 0),
        rerank_ms: passes.reduce((sum, p) => sum + p.rerank_ms, 0),
        total_ms: performance.now() - started,
        reranked: state.rerankScores.size,
        passes,
        depth_reached: passes.length,
      },
    };
  }

  /** One reflection pass. */
  private async reflect(query: string, pass: number, originalScores: Map<number, number>, state: RequestState, topN: number): Promise<PassTiming> {
    const started = performance.now();
    const queriesBefore = state.queriesRun;
    const retrievedBefore = state.retrievedNew;
    const options = this.reflection;

    const ranked = this.rank(state, true).filter(({ hit }) => state.rerankScores.has(hit.id));
    const coverage = queryCoverage(query, ranked.slice(0, COVERAGE_PASSAGES).map(({ hit }) => passageText(hit)));
    const cap = options.candidatesPerPass ?? topN;
    let expansion: WeightedTerm[] = [];
    let subQueries: string[] = [];
    let fresh: number[];
    if (coverage >= options.expandBelowCoverage) {
      // The best passages already hold every query word: reformulating would only drift. Look deeper instead.
      fresh = state
        .byRetrieval()
        .filter((id) => !state.rerankScores.has(id))
        .slice(0, options.deepenWhenCovered ? cap : 0);
    } else {
      const feedback = ranked.slice(0, options.feedbackPassages).map(({ hit, score }) => ({ text: passageText(hit), weight: score }));
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
      const queryTerms = Math.max(1, queryStems(query).size);
      const lists: RetrievalList[] = [{ weight: options.originalWeight / queryTerms, scores: original }];
      if (options.perTermQueries) {
        for (const { term, weight } of expansion) lists.push({ weight: (1 - options.originalWeight) * weight, scores: await state.run(term) });
      } else if (expansion.length > 0) {
        const scores = await state.run(expansion.map((t) => t.term).join(' '));
        lists.push({ weight: (1 - options.originalWeight) / expansion.length, scores });
      }
      state.setRetrieval(lists);
      fresh = state
        .byRetrieval()
        .slice(0, topN)
        .filter((id) => !state.rerankScores.has(id))
        .slice(0, cap);
    }
    const retrieved = performance.now();
    const reranked = await this.scoreNew(query, fresh, state);
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
    };
  }

  /** Scores the passages not scored yet in this request against the original query; returns how many it scored. */
  private async scoreNew(query: string, ids: readonly number[], state: RequestState): Promise<number> {
    const hits = ids.filter((id) => !state.rerankScores.has(id)).map((id) => state.pool.get(id)).filter((h): h is IndexHit => h !== undefined);
    if (hits.length === 0) return 0;
    const scores = await this.deps.reranker.score(query, hits.map(rerankInput));
    hits.forEach((hit, i) => state.rerankScores.set(hit.id, clamp01(scores[i] ?? 0)));
    return hits.length;
  }

  /**
   * The best passage of each URL, best first. Scored passages: w * retrieval/best retrieval + (1 - w) * reranker
   * score. The passages retrieved but never scored follow, in retrieval order, below every scored one.
   */
  private rank(state: RequestState, reranked: boolean): Array<{ hit: IndexHit; score: number }> {
    const entries: Array<{ hit: IndexHit; score: number; retrieval: number }> = [];
    if (!reranked) {
      for (const hit of state.pool.values()) entries.push({ hit, score: squash(hit.score), retrieval: hit.score });
    } else {
      let best = 0;
      for (const r of state.retrieval.values()) best = Math.max(best, r);
      const w = this.retrievalWeight;
      const normalised = (id: number): number => (best > 0 ? (state.retrieval.get(id) ?? 0) / best : 0);
      let lowest = 1;
      for (const [id, rerank] of state.rerankScores) {
        const hit = state.pool.get(id);
        if (!hit) continue;
        const score = clamp01(w * normalised(id) + (1 - w) * rerank);
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
    return [...bestByUrl.values()]
      .sort((a, b) => b.score - a.score || b.retrieval - a.retrieval || a.hit.id - b.hit.id)
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
    const found = new Set(words(text).map(termStem));
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
