import { LRUCache } from 'lru-cache';
import { performance } from 'node:perf_hooks';
import type { NotaryConfig } from '../core/index.js';
import { stem, words } from '../core/index.js';
import type { IndexDoc } from '../indexer/index.js';
import { PairBatcher, type PairScorer } from '../reranker/index.js';
import type { Reranker } from '../reranker/index.js';
import { queryStems } from './reflect.js';

/** What the cross-encoder stage did in one search. */
export interface CrossEncoderTiming {
  /** Results it judged (cached pairs included). */
  scored: number;
  /** Of those, pairs whose score came from the cache. */
  cached: number;
  ms: number;
}

// What the cross-encoder reads of a passage. Its cost is linear in the tokens of the pair (about 0.3 ms a token and
// 2-3 ms a model run on one core here, docs/models.md, Cross-encoder speed), so besides a number of words the window
// can be held to a number of model tokens.

/** The model tokens a word (a whitespace-separated piece of text) becomes; the tokens of a text are the sum over its words. */
export type WordTokens = (word: string) => number;

/** The distinct stems of a word (a whitespace-separated piece of text): what queryWindow matches query stems with. */
export type WordStems = (word: string) => readonly string[];

/** A word's distinct stems, computed each time (CrossEncoderStage remembers them). */
export const wordStems: WordStems = (word) => [...new Set(words(word).map(stem))];

/** A token budget for the text the cross-encoder reads of a passage (title, headings and window). */
export interface TokenBudget {
  tokens: number;
  count: WordTokens;
}

/**
 * The window of `text` holding the most distinct query stems (then the most query-word occurrences; the earliest such
 * window wins ties), of at most `windowWords` words (0: no limit) and, with a budget, of at most `budget.tokens`
 * tokens. Text within both limits comes back unchanged (its whitespace collapsed).
 */
export function queryWindow(text: string, query: string, windowWords: number, budget?: TokenBudget, stemsOf: WordStems = wordStems): string {
  const tokens = text.split(/\s+/).filter((t) => t.length > 0);
  const maxWords = windowWords > 0 ? windowWords : tokens.length;
  const cost = budget ? tokens.map((t) => budget.count(t)) : null;
  const limit = budget ? Math.max(0, budget.tokens) : Number.POSITIVE_INFINITY;
  if (!budget && windowWords <= 0) return text;
  const total = cost ? cost.reduce((sum, c) => sum + c, 0) : 0;
  if (tokens.length <= maxWords && total <= limit) return tokens.join(' ');
  const wanted = queryStems(query);
  const hits = tokens.map((token) => stemsOf(token).filter((s) => wanted.has(s)));
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
  // Two pointers: each start takes as many words as both limits allow; the end never moves back.
  let end = 0;
  let used = 0;
  let best = { start: 0, end: 0, distinct: -1, occurrences: -1 };
  for (let start = 0; start < tokens.length; start++) {
    if (end < start) {
      end = start;
      used = 0;
    }
    while (end < tokens.length && end - start < maxWords && used + (cost?.[end] ?? 0) <= limit) {
      used += cost?.[end] ?? 0;
      add(end, 1);
      end++;
    }
    const better = distinct > best.distinct || (distinct === best.distinct && occurrences > best.occurrences);
    if (end > start && better) best = { start, end, distinct, occurrences };
    // Later windows reaching the end are parts of this one: never better.
    if (end === tokens.length) break;
    if (end > start) {
      add(start, -1);
      used -= cost?.[start] ?? 0;
    }
  }
  return tokens.slice(best.start, best.end).join(' ');
}

/** The passage's place: its title, then its headings. */
function whereOf(doc: Pick<IndexDoc, 'title' | 'headingPath'>): string {
  return doc.headingPath ? `${doc.title} — ${doc.headingPath}` : doc.title;
}

/** Words (in order) of `text` whose tokens fit in `limit`, from its start. */
function headWithin(text: string, limit: number, count: WordTokens): { text: string; tokens: number } {
  const kept: string[] = [];
  let used = 0;
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    const c = count(word);
    if (used + c > limit) break;
    kept.push(word);
    used += c;
  }
  return { text: kept.join(' '), tokens: used };
}

/**
 * What the cross-encoder reads of a passage: where it is (title, headings), then the query-centred window of its text.
 * With a budget (tokens for this whole text), the place takes at most half of it (cut from its end) and the window
 * the rest.
 */
export function crossEncoderText(
  doc: Pick<IndexDoc, 'title' | 'headingPath' | 'text'>,
  query: string,
  windowWords: number,
  budget?: TokenBudget,
  stemsOf: WordStems = wordStems,
): string {
  if (!budget) return `${whereOf(doc)}. ${queryWindow(doc.text, query, windowWords, undefined, stemsOf)}`;
  const full = whereOf(doc);
  // The "." after the place is a token of its own.
  const room = Math.max(0, budget.tokens - 1);
  const where = headWithin(full, Math.floor(room / 2), budget.count);
  const window = queryWindow(doc.text, query, windowWords, { tokens: room - where.tokens, count: budget.count }, stemsOf);
  return `${where.text}. ${window}`;
}

/** Tokens a passage keeps beside however long a query under search.cross_encoder_pair_tokens. */
export const MIN_PASSAGE_TOKENS = 24;
/** Distinct words whose token counts a stage remembers (then it starts again). */
const WORD_CACHE = 100_000;
/** Distinct words whose stems a stage remembers. */
const STEM_CACHE = 50_000;

export interface CrossEncoderStageOptions {
  fromDepth: number;
  topN: number;
  windowWords: number;
  /**
   * Tokens of a (query, passage) pair the model reads at most, special tokens included (0: no limit but the model's
   * max_seq_length); the passage keeps at least MIN_PASSAGE_TOKENS whatever the query's length.
   */
  pairTokens?: number;
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
    pairTokens: search.cross_encoder_pair_tokens,
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
  /** The model's token counts, when it tells them (an ONNX model does). */
  private readonly counter: TokenCounter | null;
  private readonly wordCache = new Map<string, number>();
  /** Words' stems (foldCase, the word pattern and the stemmer cost more than a lookup). */
  private readonly stemCache = new Map<string, readonly string[]>();
  private readonly stemsOf: WordStems = (word) => {
    let found = this.stemCache.get(word);
    if (found === undefined) {
      found = wordStems(word);
      if (this.stemCache.size >= STEM_CACHE) this.stemCache.clear();
      this.stemCache.set(word, found);
    }
    return found;
  };
  /** Concurrent searches' pairs in shared model calls (a model that scores pairs of any queries, batchWaitMs > 0). */
  readonly batcher: PairBatcher | null;

  constructor(
    readonly model: Reranker,
    readonly options: CrossEncoderStageOptions,
  ) {
    this.cache = options.cacheSize > 0 ? new LRUCache<string, number>({ max: options.cacheSize }) : null;
    this.counter = countsTokens(model) ? model : null;
    this.batcher = options.batchWaitMs > 0 && scoresPairs(model) ? new PairBatcher(model, { maxWaitMs: options.batchWaitMs, maxPairs: options.batchPairs }) : null;
  }

  /** The tokens a passage may take beside `query` under options.pairTokens (undefined: no budget, or a model that cannot count). */
  private passageBudget(query: string): TokenBudget | undefined {
    const limit = this.options.pairTokens ?? 0;
    const counter = this.counter;
    if (limit <= 0 || !counter) return undefined;
    const tokens = Math.max(MIN_PASSAGE_TOKENS, limit - counter.pairSpecialTokens - counter.textTokens(query));
    return { tokens, count: (word) => this.wordTokens(word, counter) };
  }

  /** Tokens of one word, remembered (a corpus has a limited vocabulary; tokenizing it again costs more than a lookup). */
  private wordTokens(word: string, counter: TokenCounter): number {
    let n = this.wordCache.get(word);
    if (n === undefined) {
      n = counter.textTokens(word);
      if (this.wordCache.size >= WORD_CACHE) this.wordCache.clear();
      this.wordCache.set(word, n);
    }
    return n;
  }

  /** Whether a search of this depth has its rerank_score from the cross-encoder. */
  serves(depth: number): boolean {
    return depth >= this.options.fromDepth;
  }

  /** Scores in [0, 1] of each doc against `query`, in order, and what it took. */
  async score(query: string, docs: ReadonlyArray<Pick<IndexDoc, 'title' | 'headingPath' | 'text'>>): Promise<{ scores: number[]; timing: CrossEncoderTiming }> {
    const started = performance.now();
    const budget = this.passageBudget(query);
    const texts = docs.map((doc) => crossEncoderText(doc, query, this.options.windowWords, budget, this.stemsOf));
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

/** What a model tells of its tokenizer (OnnxReranker): content tokens of a text, special tokens a pair adds. */
export interface TokenCounter {
  textTokens(text: string): number;
  readonly pairSpecialTokens: number;
}

function countsTokens(model: Reranker): model is Reranker & TokenCounter {
  return typeof (model as Partial<TokenCounter>).textTokens === 'function' && typeof (model as Partial<TokenCounter>).pairSpecialTokens === 'number';
}

function scoresPairs(model: Reranker): model is Reranker & PairScorer {
  return typeof (model as Partial<PairScorer>).scorePairs === 'function' && model.info.kind === 'cross-encoder';
}
