import type { CrossEncoderTiming } from './cross-encoder.js';
import type { ListEvidence } from './calibration.js';
import type { SearchResponse } from './service.js';
import type { RewriteOutcome } from './query-rewriter.js';
import type { WeightedTerm } from './reflect.js';

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

/** How a list's rerank_scores were made (never on the wire: the calibration harness reads it). */
export interface ListScoring {
  /** The fused scores, in the list's order (the rerank_score of an uncalibrated scorer). */
  fused: number[];
  /** The list's best result's absolute evidence the calibration is anchored on; null without a model score. */
  evidence: ListEvidence | null;
  /** Whether the scorer had a calibration (search/calibrations.json, NOTARY_CALIBRATION_FILE). */
  calibrated: boolean;
}

export interface SearchOutcome extends SearchResponse {
  timings: SearchTimings;
  scoring?: ListScoring;
}
