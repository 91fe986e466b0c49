/**
 * The search pipeline's tuning: its options, their measured defaults, and the fixed sizes of a request's pools.
 */
import type { ScorerKind } from '../reranker/index.js';
import { DEFAULT_EXPANSION, type ExpansionOptions } from './reflect.js';

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
   * Share of the fused score given to the retrieval evidence (the index score of the pass's query, normalised by the
   * pool's best), the rest to the reranker: fused = w * retrieval + (1 - w) * reranker (rerank_score is the fused score
   * through the scorer's calibration, search/calibration.ts). By scorer kind,
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

export const DEFAULT_RETRIEVAL_WEIGHT: Record<ScorerKind, number> = { lexical: 0.5, 'bi-encoder': 0.2, 'cross-encoder': 0.2 };

/** Best passages whose words decide whether the query's vocabulary was found. */
export const COVERAGE_PASSAGES = 3;

/** Passages (the best retrieved) whose term statistics tell a common word from a topical one. */
export const POOL_SAMPLE = 100;

/** Best passages a page may contribute to the candidate list, so one long page cannot crowd out the rest. */
export const PASSAGES_PER_PAGE = 3;

/** Passages of one page the page pass of a reflection reads (by each retrieval). */
export const PAGE_PASS_PASSAGES = 40;
