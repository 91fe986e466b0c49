import type { NotaryConfig } from '../core/index.js';
import { LexicalReranker } from '../reranker/index.js';
import type { Reranker, RerankerInfo, ScorerKind } from '../reranker/index.js';
import { CrossEncoderStage, crossEncoderStageOptions } from '../search/index.js';
import type { OpenedDense } from './dense.js';

/** Which model does what, by name only (no paths, URLs or error texts): /healthz, `notary status`, `notary models list`. */
export interface ModelAssignment {
  /** First-stage retrieval: "hybrid" (BM25 + the bi-encoder's vectors) or "bm25". */
  retrieval: 'hybrid' | 'bm25';
  bi_encoder: string | null;
  cross_encoder: string | null;
  /** Who gives rerank_score at which depths, and why, in order of depth. */
  depths: Array<{ from: number; to: number; scorer: ScorerKind; model: string; why: string }>;
}

/** The scorers a search pipeline runs with: depth 1's (and the reflection passes'), and the cross-encoder's stage. */
export interface Scorers {
  /** Scores the passes' candidates (depth 1 and the reflection passes): the bi-encoder when there is one. */
  passes: Reranker;
  crossEncoder: CrossEncoderStage | undefined;
  assignment: ModelAssignment;
}

/** A model's name as shown: "ms-marco-MiniLM-L-6-v2", never its folder. */
export function modelName(info: RerankerInfo): string {
  return info.kind === 'lexical' ? 'lexical' : info.model.replace(/ \(.*\)$/s, '');
}

/**
 * Two models, two jobs. The bi-encoder (embeddings.model, or the reranker itself when that is one) embeds, drives
 * hybrid retrieval and scores the passes; a cross-encoder (the reranker, when it is one) gives rerank_score to
 * searches from search.cross_encoder_from_depth on and never runs below. Without a bi-encoder the passes are scored
 * lexically; without a cross-encoder every depth keeps the bi-encoder's (or the fallback's) scores.
 */
export function assignScorers(config: NotaryConfig, reranker: Reranker, opened: OpenedDense): Scorers {
  const maxDepth = config.search.max_depth;
  const dense = opened.dense;
  const cross = reranker.info.kind === 'cross-encoder' ? reranker : undefined;
  const biModel = reranker.info.kind === 'bi-encoder' ? reranker : opened.model;
  let passes: Reranker;
  let passesWhy: string;
  if (reranker.info.kind === 'bi-encoder') {
    passes = reranker;
    passesWhy = dense ? 'the bi-encoder: cosine of its query and passage vectors' : 'the bi-encoder named as the reranker';
  } else if (dense && opened.model) {
    passes = opened.model;
    passesWhy = 'the bi-encoder (embeddings.model): cosine of its query and passage vectors';
  } else if (cross) {
    passes = new LexicalReranker('fallback', 'no bi-encoder: the cross-encoder does not run at depth 1');
    passesWhy = 'no bi-encoder is configured (embeddings.model, NOTARY_EMBEDDING_MODEL): term overlap';
  } else {
    passes = reranker;
    passesWhy = 'no neural model is available: term overlap (notary models list says why)';
  }
  const stage = cross ? new CrossEncoderStage(cross, crossEncoderStageOptions(config.search)) : undefined;
  const from = stage ? stage.options.fromDepth : maxDepth + 1;
  const depths: ModelAssignment['depths'] = [];
  if (from > 1) {
    depths.push({
      from: 1,
      to: Math.min(maxDepth, from - 1),
      scorer: passes.info.kind,
      model: modelName(passes.info),
      why: !cross
        ? `${passesWhy}; no cross-encoder is configured`
        : from > maxDepth
          ? `${passesWhy}; the cross-encoder serves no depth (search.cross_encoder_from_depth ${from} is above search.max_depth ${maxDepth})`
          : `${passesWhy}; the cross-encoder serves from search.cross_encoder_from_depth ${from}`,
    });
  }
  if (cross && from <= maxDepth) {
    depths.push({
      from,
      to: maxDepth,
      scorer: 'cross-encoder',
      model: modelName(cross.info),
      why: `search.cross_encoder_from_depth is ${from}: it judges the best ${config.search.cross_encoder_top_n} results of the passes (scored by ${modelName(passes.info)}) against the original query`,
    });
  }
  return {
    passes,
    crossEncoder: stage && from <= maxDepth ? stage : undefined,
    assignment: {
      retrieval: dense ? 'hybrid' : 'bm25',
      bi_encoder: biModel ? modelName(biModel.info) : null,
      cross_encoder: cross ? modelName(cross.info) : null,
      depths,
    },
  };
}

/** One line per depth range, as `notary status` and `notary models list` print it. */
export function assignmentLines(assignment: ModelAssignment): string[] {
  return assignment.depths.map(({ from, to, scorer, model, why }) => {
    const depths = from === to ? `depth ${from}` : `depths ${from}-${to}`;
    return `${depths.padEnd(11)} ${scorer === 'lexical' ? 'lexical' : `${scorer} ${model}`}: ${why}`;
  });
}
