import type { Reranker, RerankerInfo } from './reranker.js';

const STOPWORDS = new Set(
  (
    'a an and are as at be but by do does did for from has have how i in is it its of on or that the their this to ' +
    'was were what when where which who why will with you your'
  ).split(' '),
);

/** BM25's term-frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.5;
/** Passage length (in terms) treated as typical for length normalisation; index passages are 100-200 words. */
const TYPICAL_LENGTH = 120;
/** Share of the score given to query word pairs found next to each other in the passage. */
const PHRASE_WEIGHT = 0.15;

/** A light suffix stripper: enough to match plural/verb forms, not a full Porter stemmer. */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return trimDouble(word.slice(0, -3));
  if (word.endsWith('ed') && word.length > 4) return trimDouble(word.slice(0, -2));
  if (word.endsWith('es') && /(?:ch|sh|x|z|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is')) return word.slice(0, -1);
  return word;
}

function trimDouble(word: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(word) && !/(?:ll|ss|zz)$/.test(word) ? word.slice(0, -1) : word;
}

/** Lowercased, accent-stripped, stemmed word terms of `text`. */
export function lexicalTerms(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
  return (folded.match(/[\p{L}\p{N}]+/gu) ?? []).map(stem);
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
    const allTerms = lexicalTerms(query);
    const contentTerms = allTerms.filter((term) => !STOPWORDS.has(term));
    const queryTerms = [...new Set(contentTerms.length > 0 ? contentTerms : allTerms)];
    const queryPairs = new Set<string>();
    for (let i = 1; i < contentTerms.length; i++) queryPairs.add(`${contentTerms[i - 1]} ${contentTerms[i]}`);
    return passages.map((passage) => scorePassage(queryTerms, queryPairs, lexicalTerms(passage)));
  }

  async close(): Promise<void> {}
}

function scorePassage(queryTerms: readonly string[], queryPairs: ReadonlySet<string>, terms: readonly string[]): number {
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
  const content = terms.filter((term) => !STOPWORDS.has(term));
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
