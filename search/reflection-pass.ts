/**
 * One reflection pass (depth >= 2): the page pass, RM3 expansion and sub-queries when the best passages miss query words,
 * the query rewriter, Rocchio feedback on the query vector; retrieve again and score the new passages.
 */
import type { IndexHit } from '../indexer/index.js';
import { l2Normalize } from '../reranker/index.js';
import { stem, words } from '../core/index.js';
import { expansionTerms, queryStems, splitSubQueries, type WeightedTerm } from './reflect.js';
import type { QueryRewriter, RewriteOutcome } from './query-rewriter.js';
import type { Ranked } from './ranking.js';
import type { DenseRetrieval, RequestState, RetrievalList } from './request-state.js';
import type { PassTiming } from './timings.js';
import { COVERAGE_PASSAGES, POOL_SAMPLE, type ReflectionOptions } from './tuning.js';

/** What a reflection pass needs of the pipeline that runs it. */
export interface ReflectionContext {
  options: ReflectionOptions;
  dense: DenseRetrieval | undefined;
  rewriter: QueryRewriter | undefined;
  /** The ranking so far (SearchPipeline's rank). */
  rank(state: RequestState, reranked: boolean): Ranked[];
  /** Scores passages not scored yet against the original query; returns how many it scored. */
  scoreNew(query: string, queryVector: Float32Array | null, ids: readonly number[], state: RequestState): Promise<number>;
}

/** One reflection pass. `firstLists`: the first pass's retrievals (full-text, then dense when there is one). */
export async function reflectionPass(
  ctx: ReflectionContext,
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
  const options = ctx.options;

  let ranked = ctx.rank(state, true).filter(({ hit }) => state.rerankScores.has(hit.id));
  // The page pass first: the best pages read in full, so feedback and the final ranking see their best passages.
  let pagePass: number[] = [];
  if (pass === 2 && options.pagePassPages > 0) {
    const pages = [...new Set(ranked.slice(0, options.pagePassPages).map(({ hit }) => hit.pageId))];
    pagePass = await state.runPagePassages(query, queryVector, pages);
    if (pagePass.length > 0) {
      await ctx.scoreNew(query, queryVector, pagePass, state);
      ranked = ctx.rank(state, true).filter(({ hit }) => state.rerankScores.has(hit.id));
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
  } else if (ctx.dense && originalList) {
    lists.push(originalList);
  }

  // The rewriter's queries are retrieved like the expansion: in a sum of scores they split RM3's complement weight
  // (1 - originalWeight) between them; in rank fusion each is a list of its own, full-text and, with vectors, dense.
  let rewriter: RewriteOutcome | undefined;
  if (pass === 2 && ctx.rewriter) {
    rewriter = await ctx.rewriter.rewrite(query, feedbackHits.slice(0, COVERAGE_PASSAGES).map(({ hit }) => passageText(hit)));
    if (rewriter.queries.length > 0) {
      if (covered && originalList && !ctx.dense) lists.push({ ...originalList, weight: options.originalWeight });
      const share = (1 - options.originalWeight) / rewriter.queries.length;
      const vectors = queryVector && ctx.dense ? await ctx.dense.embedder.embed(rewriter.queries) : [];
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
      if (options.feedbackScoreWeight > 0 && ctx.dense?.scoresFromVectors) state.feedbackVector = refined;
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
  const reranked = (await ctx.scoreNew(query, queryVector, fresh, state)) + pagePass.length;
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
