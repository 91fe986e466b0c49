import { LRUCache } from 'lru-cache';
import { performance } from 'node:perf_hooks';
import type { NotaryConfig } from '../core/index.js';
import { isOwnTranslationGroup, passageModelText, type IndexFilter, type IndexHit, type SearchIndex } from '../indexer/index.js';
import { detectLanguage, normaliseLanguageTag, primaryLanguage } from '../core/language.js';
import { cosineToUnit } from '../reranker/index.js';
import type { Reranker } from '../reranker/index.js';
import { contentWords } from '../core/index.js';
import type { SearchRequest, SearchService } from './service.js';
import type { QueryRewriter } from './query-rewriter.js';
import { makeSnippet } from './snippet.js';
import { highlightsOf } from './highlights.js';
import type { CrossEncoderStage, CrossEncoderTiming } from './cross-encoder.js';
import { clamp01, crossEncoderRank, rankResults, type Ranked } from './ranking.js';
import { calibrateList, calibrationFor, listEvidence, type CalibrationParameters, type ListEvidence } from './calibration.js';
import { reflectionPass, type ReflectionContext } from './reflection-pass.js';
import { RequestState, type DenseRetrieval, type RetrievalList } from './request-state.js';
import type { PassTiming, SearchOutcome } from './timings.js';
import {
  DEFAULT_HEAD_PER_LIST,
  DEFAULT_HYBRID_EVIDENCE,
  DEFAULT_HYBRID_REFLECTION,
  DEFAULT_PAGE_EVIDENCE,
  DEFAULT_REFLECTION,
  DEFAULT_RETRIEVAL_WEIGHT,
  DEFAULT_RRF_K,
  PASSAGES_PER_PAGE,
  pageWeightScale,
  type HybridEvidence,
  type PageEvidenceOptions,
  type ReflectionOptions,
  type SearchPipelineOptions,
} from './tuning.js';

/** `{published_date}` (ISO 8601 UTC) from a hit's stored date; nothing when it has none, it does not parse or its year is not 0000..9999. */
function publishedDate(stored: string | undefined): { published_date?: string } {
  const time = stored ? Date.parse(stored) : Number.NaN;
  const iso = Number.isNaN(time) ? '' : new Date(time).toISOString();
  return /^\d{4}-/.test(iso) ? { published_date: iso } : {};
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
  private readonly reflectionContext: ReflectionContext;
  /** Each scorer's calibration (search/calibration.ts), looked up once; null: rerank_score is the fused score. */
  private readonly calibrations = new Map<Reranker, Promise<CalibrationParameters | null>>();

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
      /** Calibrations by scorer, fixed (tests, the calibration harness); default: looked up by the scorer's .onnx file. */
      calibration?: (model: Reranker) => Promise<CalibrationParameters | null>;
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
    this.reflectionContext = {
      options: this.reflection,
      dense: deps.dense,
      rewriter: deps.rewriter,
      rank: (state, reranked) => this.rank(state, reranked),
      scoreNew: (query, queryVector, ids, state) => this.scoreNew(query, queryVector, ids, state),
    };
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

  async search(request: Pick<SearchRequest, 'query' | 'depth' | 'language' | 'maxResults' | 'filter' | 'highlights' | 'include'>): Promise<SearchOutcome> {
    const { index, config, dense } = this.deps;
    const started = performance.now();
    const query = request.query.trim();
    const depth = Math.min(config.max_depth, Math.max(1, Math.floor(Number.isFinite(request.depth) ? request.depth : 1)));
    const maxResults = Math.max(1, Math.floor(request.maxResults ?? config.max_results));
    const limit = Math.max(config.rerank_top_n, maxResults * PASSAGES_PER_PAGE);
    // One language at a time: the one asked for (or the deployment's) filters; otherwise the query's own language, when
    // it can be told, picks which translation of a page is shown (told only when a result has translations).
    const asked = normaliseLanguageTag(request.language ?? config.default_language ?? null);
    // The primary language asked for or detected, or null.
    const wantedLanguage = (): string | null => {
      const detected = asked ? null : detectLanguage(query);
      const language = asked ?? (detected?.reliable ? detected.language : null);
      return language ? primaryLanguage(language) : null;
    };
    const filter: IndexFilter = {
      excludeNavigation: !config.include_navigation_pages,
      ...(asked ? { languages: [primaryLanguage(asked)] } : {}),
      ...request.filter,
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
        const timing = await reflectionPass(this.reflectionContext, query, queryVector, pass, firstLists, state, config.rerank_top_n);
        passes.push(timing);
        if (timing.reranked === 0) break;
      }
    }

    let ranking = this.rank(state, config.rerank_top_n > 0);
    let crossEncoder: CrossEncoderTiming | undefined;
    const stage = this.deps.crossEncoder;
    if (stage && config.rerank_top_n > 0 && stage.serves(depth)) ({ ranking, timing: crossEncoder } = await crossEncoderRank(query, stage, ranking, state, this.crossEncoderWeight));
    const ranked = await this.oneTranslationEach(query, ranking, wantedLanguage, state, maxResults);
    const scoring = await this.calibrate(query, ranked, crossEncoder && stage ? stage.model : config.rerank_top_n > 0 ? this.deps.reranker : null);
    const highlights = request.highlights
      ? await highlightsOf(query, ranked, request.highlights, state, index, (ids) => this.scoreNew(query, queryVector, ids, state))
      : null;
    const withDate = request.include?.includes('published_date') === true;
    const results = ranked.map(({ hit }, i) => ({
      url: hit.url,
      title: hit.title,
      snippet: makeSnippet(hit.text, query, config.snippet_chars),
      rerank_score: scoring.scores[i] ?? 0,
      ...(highlights ? { highlights: highlights.get(hit.pageId) ?? [] } : {}),
      ...(withDate ? publishedDate(hit.publishedAt) : {}),
    }));
    return {
      results,
      scoring: { fused: ranked.map(({ score }) => score), evidence: scoring.evidence, calibrated: scoring.calibrated },
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
   * The list's rerank_scores: through the calibration of the scorer that made them (monotone in the fused score, so
   * the order stays), anchored on the evidence of the list's best result; the fused scores where it has none.
   */
  private async calibrate(query: string, ranked: readonly Ranked[], scorer: Reranker | null): Promise<{ scores: number[]; evidence: ListEvidence | null; calibrated: boolean }> {
    const fused = ranked.map(({ score }) => score);
    const best = ranked[0];
    const evidence = best?.model !== undefined ? listEvidence(query, { model: best.model, ...best.hit }) : null;
    if (!scorer || !evidence) return { scores: fused, evidence, calibrated: false };
    let params = this.calibrations.get(scorer);
    if (!params) {
      params = (this.deps.calibration ?? calibrationFor)(scorer);
      this.calibrations.set(scorer, params);
      params.catch(() => this.calibrations.delete(scorer));
    }
    const found = await params;
    return { scores: calibrateList(found, evidence, fused), evidence, calibrated: found !== null };
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
      const stored = await state.similaritiesOf(queryVector, hits.map((h) => h.id));
      for (const [id, similarity] of stored) state.rerankScores.set(id, clamp01(cosineToUnit(similarity)));
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
    ranked: Ranked[],
    wantedLanguage: () => string | null,
    state: RequestState,
    max: number,
  ): Promise<Ranked[]> {
    const out: Ranked[] = [];
    const groups = new Set<string>();
    const urls = new Set<string>();
    let told: string | null | undefined; // undefined: not asked yet
    for (const entry of ranked) {
      if (out.length >= max) break;
      const key = entry.hit.translationKey;
      if (key && groups.has(key)) continue;
      if (key) groups.add(key);
      let shown = entry;
      let wanted: string | null = null;
      if (key && entry.hit.language && !isOwnTranslationGroup(key)) {
        if (told === undefined) told = wantedLanguage();
        wanted = told;
      }
      if (key && wanted && entry.hit.language && primaryLanguage(entry.hit.language) !== wanted) {
        const [version] = await this.deps.index.search(query, {
          limit: 1,
          perPageLimit: 1,
          filter: { ...state.filter, translationKey: key, languages: [wanted] },
        });
        if (version?.language && primaryLanguage(version.language) === wanted) shown = { ...entry, hit: version };
      }
      if (urls.has(shown.hit.url)) continue;
      urls.add(shown.hit.url);
      out.push(shown);
    }
    return out;
  }

  /** The best passage of each URL, best first (ranking.ts). */
  private rank(state: RequestState, reranked: boolean): Ranked[] {
    return rankResults(state, reranked, {
      dense: this.deps.dense !== undefined,
      retrievalWeight: this.retrievalWeight,
      feedbackScoreWeight: this.reflection.feedbackScoreWeight,
    });
  }
}
