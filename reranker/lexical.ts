import { STOPWORDS, stem, terms, words } from '../core/index.js';
import type { Reranker, RerankerInfo } from './reranker.js';

/** BM25's term-frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.5;
/** Passage length (in terms) treated as typical for length normalisation; index passages are 100-200 words. */
const TYPICAL_LENGTH = 120;
/** Share of the score given to query word pairs found next to each other in the passage. */
const PHRASE_WEIGHT = 0.15;

/** Stemmed word terms of `text` (core/text: case, Latin diacritics and word forms folded). */
export function lexicalTerms(text: string): string[] {
  return terms(text);
}

/**
 * Model-free fallback: BM25-style saturated term frequency over the query's terms, averaged so the score is in
 * [0, 1], plus a small bonus for query word pairs that occur side by side. Each passage is scored on its own, so a
 * score does not depend on the other candidates.
 */
export class LexicalReranker implements Reranker {
  readonly info: RerankerInfo;

  constructor(source = 'fallback', why?: string) {
    this.info = { kind: 'lexical', model: 'lexical', source, ...(why ? { why } : {}) };
  }

  async score(query: string, passages: readonly string[]): Promise<number[]> {
    const all = words(query);
    const contentTerms = all.filter((w) => !STOPWORDS.has(w)).map(stem);
    const queryTerms = [...new Set(contentTerms.length > 0 ? contentTerms : all.map(stem))];
    const queryPairs = new Set<string>();
    for (let i = 1; i < contentTerms.length; i++) queryPairs.add(`${contentTerms[i - 1]} ${contentTerms[i]}`);
    return passages.map((passage) => scorePassage(queryTerms, queryPairs, passage));
  }

  async close(): Promise<void> {}
}

function scorePassage(queryTerms: readonly string[], queryPairs: ReadonlySet<string>, passage: string): number {
  const passageWords = words(passage);
  const terms = passageWords.map(stem);
  if (queryTerms.length === 0 || terms.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  const norm = 1 - B + B * (terms.length / TYPICAL_LENGTH);
  let termScore = 0;
  for (const term of queryTerms) {
    const tf = counts.get(term) ?? 0;
    termScore += tf / (tf + K1 * norm);
  }
  termScore /= queryTerms.length;
  if (queryPairs.size === 0) return clamp(termScore);
  const content = passageWords.filter((w) => !STOPWORDS.has(w)).map(stem);
  let pairsFound = 0;
  const seen = new Set<string>();
  for (let i = 1; i < content.length; i++) {
    const pair = `${content[i - 1]} ${content[i]}`;
    if (queryPairs.has(pair) && !seen.has(pair)) {
      seen.add(pair);
      pairsFound++;
    }
  }
  return clamp((1 - PHRASE_WEIGHT) * termScore + PHRASE_WEIGHT * (pairsFound / queryPairs.size));
}

function clamp(value: number): number {
  if (!(value > 0)) return 0;
  return value < 1 ? value : 1;
}
