import { LRUCache } from 'lru-cache';
import { performance } from 'node:perf_hooks';
import type { NotaryConfig } from '../core/config.js';
import { stem, words } from '../core/text.js';
import type { IndexDoc } from '../indexer/search-index.js';
import { PairBatcher, type PairScorer } from '../reranker/pair-batcher.js';
import type { Reranker } from '../reranker/reranker.js';
import { queryStems } from './reflect.js';

/** What the cross-encoder stage did in one search. */
export interface CrossEncoderTiming {
  /** Results it judged (cached pairs included). */
  scored: number;
  /** Of those, pairs whose score came from the cache. */
  cached: number;
  ms: number;
}

/**
 * The `windowWords` whitespace-separated words of `text` that hold the most distinct query stems (then the most
 * query-word occurrences; the earliest such window wins ties): a cross-encoder reads a query-centred window, not a
 * whole passage. Text no longer than the window comes back unchanged.
 */
export function queryWindow(text: string, query: string, windowWords: number): string {
  if (windowWords <= 0) return text;
  const tokens = text.split(/\s+/).filter((t) => t.length > 0);
  if (tokens.length <= windowWords) return tokens.join(' ');
  const wanted = queryStems(query);
  const hits = tokens.map((token) => [...new Set(words(token).map(stem))].filter((s) => wanted.has(s)));
  const counts = new Map<string, number>();
  let distinct = 0;
  let occurrences = 0;
  const add = (i: number, delta: 1 | -1): void => {
    for (const s of hits[i] ?? []) {
      const before = counts.get(s) ?? 0;
      const after = before + delta;
      counts.set(s, after);
      if (before === 0 && after > 0) distinct++;
      if (before > 0 && after === 0) distinct--;
      occurrences += delta;
    }
  };
  for (let i = 0; i < windowWords; i++) add(i, 1);
  let best = { start: 0, distinct, occurrences };
  for (let start = 1; start + windowWords <= tokens.length; start++) {
    add(start - 1, -1);
    add(start + windowWords - 1, 1);
    if (distinct > best.distinct || (distinct === best.distinct && occurrences > best.occurrences)) best = { start, distinct, occurrences };
  }
  return tokens.slice(best.start, best.start + windowWords).join(' ');
}

/** What the cross-encoder reads of a passage: where it is (title, headings), then the query-centred window of its text. */
export function crossEncoderText(doc: Pick<IndexDoc, 'title' | 'headingPath' | 'text'>, query: string, windowWords: number): string {
  const where = doc.headingPath ? `${doc.title} — ${doc.headingPath}` : doc.title;
  return `${where}. ${queryWindow(doc.text, query, windowWords)}`;
}

export interface CrossEncoderStageOptions {
  fromDepth: number;
  topN: number;
  windowWords: number;
  /** (query, text) scores kept; 0: none. */
  cacheSize: number;
  /** Longest wait of a search's pairs for those of concurrent searches, to share one model call (ms; 0: no batching). */
  batchWaitMs: number;
  /** Pairs of concurrent searches per model call at most. */
  batchPairs: number;
}

export function crossEncoderStageOptions(search: NotaryConfig['search']): CrossEncoderStageOptions {
  return {
    fromDepth: search.cross_encoder_from_depth,
    topN: search.cross_encoder_top_n,
    windowWords: search.cross_encoder_window_words,
    cacheSize: search.cross_encoder_cache,
    batchWaitMs: search.cross_encoder_batch_wait_ms,
    batchPairs: search.cross_encoder_batch_pairs,
  };
}

/**
 * The cross-encoder's job in a search: from `fromDepth` on, it judges the best `topN` results of the passes against
 * the original query (query-centred windows; scores of repeated pairs come from a cache). Below that depth it never runs.
 */
export class CrossEncoderStage {
  private readonly cache: LRUCache<string, number> | null;
  /** Concurrent searches' pairs in shared model calls (a model that scores pairs of any queries, batchWaitMs > 0). */
  readonly batcher: PairBatcher | null;

  constructor(
    readonly model: Reranker,
    readonly options: CrossEncoderStageOptions,
  ) {
    this.cache = options.cacheSize > 0 ? new LRUCache<string, number>({ max: options.cacheSize }) : null;
    this.batcher = options.batchWaitMs > 0 && scoresPairs(model) ? new PairBatcher(model, { maxWaitMs: options.batchWaitMs, maxPairs: options.batchPairs }) : null;
  }

  /** Whether a search of this depth has its rerank_score from the cross-encoder. */
  serves(depth: number): boolean {
    return depth >= this.options.fromDepth;
  }

  /** Scores in [0, 1] of each doc against `query`, in order, and what it took. */
  async score(query: string, docs: ReadonlyArray<Pick<IndexDoc, 'title' | 'headingPath' | 'text'>>): Promise<{ scores: number[]; timing: CrossEncoderTiming }> {
    const started = performance.now();
    const texts = docs.map((doc) => crossEncoderText(doc, query, this.options.windowWords));
    const keys = texts.map((text) => `${query}\u0000${text}`);
    const scores: number[] = keys.map((key) => this.cache?.get(key) ?? Number.NaN);
    const missing = scores.flatMap((s, i) => (Number.isNaN(s) ? [i] : []));
    if (missing.length > 0) {
      const passages = missing.map((i) => texts[i] as string);
      const fresh = await (this.batcher ? this.batcher.score(query, passages) : this.model.score(query, passages));
      missing.forEach((i, j) => {
        const s = fresh[j] ?? 0;
        scores[i] = s;
        this.cache?.set(keys[i] as string, s);
      });
    }
    return { scores, timing: { scored: docs.length, cached: docs.length - missing.length, ms: performance.now() - started } };
  }
}

function scoresPairs(model: Reranker): model is Reranker & PairScorer {
  return typeof (model as Partial<PairScorer>).scorePairs === 'function' && model.info.kind === 'cross-encoder';
}
