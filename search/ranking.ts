/**
 * The final ranking of a request: one result per URL from the passages' retrieval evidence and reranker scores (and the
 * page-index scores), and the cross-encoder's judgement of the head.
 */
import type { IndexHit } from '../indexer/index.js';
import { cosineToUnit, dot } from '../reranker/index.js';
import type { CrossEncoderStage, CrossEncoderTiming } from './cross-encoder.js';
import type { RequestState } from './request-state.js';

/** A result: a URL's best passage and its score (0..1). */
export interface Ranked {
  hit: IndexHit;
  score: number;
  /** The model's own 0..1 score of the passage (bi-encoder, or the cross-encoder for the results it judged); absent when unscored. */
  model?: number;
}

/** The pipeline's settings the final score is made of. */
export interface RankingWeights {
  /** Dense retrieval is on: without a reranker, the fused retrieval score ranks. */
  dense: boolean;
  /** The retrieval evidence's share of a scored passage's score (search.retrieval weight of the scorer kind). */
  retrievalWeight: number;
  /** ReflectionOptions.feedbackScoreWeight: share of similarity to the refined query vector, once there is one. */
  feedbackScoreWeight: number;
}

/**
 * The best passage of each URL, best first. Scored passages: w * retrieval/best retrieval + (1 - w) * reranker
 * score; a page's score then mixes in its page-index score (normalised by the best): (1 - a) * passage + a * page.
 * The passages retrieved but never scored follow, in retrieval order, below every scored one.
 */
export function rankResults(state: RequestState, reranked: boolean, weights: RankingWeights): Ranked[] {
  const entries: Array<{ hit: IndexHit; score: number; retrieval: number; model?: number }> = [];
  if (!reranked && !weights.dense) {
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
    const w = weights.retrievalWeight;
    const normalised = (id: number): number => (best > 0 ? (state.evidence.get(id) ?? 0) / best : 0);
    const gamma = state.feedbackVector ? weights.feedbackScoreWeight : 0;
    let lowest = 1;
    for (const [id, rerank] of state.rerankScores) {
      const hit = state.pool.get(id);
      if (!hit) continue;
      const vector = gamma > 0 ? state.vectors.get(id) : undefined;
      const semantic = vector && state.feedbackVector ? (1 - gamma) * rerank + gamma * cosineToUnit(dot(state.feedbackVector, vector)) : rerank;
      const score = clamp01(w * normalised(id) + (1 - w) * semantic);
      lowest = Math.min(lowest, score);
      entries.push({ hit, score, retrieval: normalised(id), model: rerank });
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
    .map(({ hit, score, model }) => (model === undefined ? { hit, score } : { hit, score, model }));
}

/**
 * The cross-encoder judges the best `topN` results of the passes (each URL's best passage, found by any pass)
 * against the original query: their score is w * retrieval evidence / best + (1 - w) * its score, w by
 * search retrieval weight of a cross-encoder (`weight`); every other result follows below them in the passes' order.
 */
export async function crossEncoderRank(
  query: string,
  stage: CrossEncoderStage,
  ranking: Ranked[],
  state: RequestState,
  weight: number,
): Promise<{ ranking: Ranked[]; timing: CrossEncoderTiming }> {
  const head = ranking.slice(0, stage.options.topN);
  const { scores, timing } = await stage.score(query, head.map(({ hit }) => hit));
  let best = 0;
  for (const r of state.evidence.values()) best = Math.max(best, r);
  const w = weight;
  const judged = head
    .map(({ hit }, i) => ({ hit, model: clamp01(scores[i] ?? 0), score: clamp01(w * (best > 0 ? (state.evidence.get(hit.id) ?? 0) / best : 0) + (1 - w) * clamp01(scores[i] ?? 0)), order: i }))
    .sort((x, y) => y.score - x.score || x.order - y.order);
  const lowest = judged.reduce((low, { score }) => Math.min(low, score), 1);
  const rest = ranking.slice(head.length).map(({ hit, score }) => ({ hit, score: clamp01(lowest * 0.999 * score) }));
  return { ranking: [...judged.map(({ hit, score, model }) => ({ hit, score, model })), ...rest], timing };
}

/** Index scores are unbounded; without a reranker they are squashed into [0,1) keeping their order. */
function squash(score: number): number {
  const s = Math.max(0, score);
  return s / (s + 1);
}

export function clamp01(x: number): number {
  if (!Number.isFinite(x)) return 0;
  return Math.min(1, Math.max(0, x));
}
