import { EXPANSION_STOPWORDS, stem, words } from '../core/index.js';

/**
 * Reflection: reformulating a query from what a pass found. Pseudo-relevance feedback in the RM3 manner (a relevance
 * model estimated from the top passages, weighted by their scores, mixed with the original query) and splitting
 * multi-part questions into sub-queries.
 */

export interface WeightedTerm {
  /** A surface form of the term as it occurs in the text (the index stems it again). */
  term: string;
  weight: number;
}

export interface FeedbackPassage {
  text: string;
  /** How much this passage counts: its score from the previous pass (rerank_score), >= 0. */
  weight: number;
}

export interface ExpansionOptions {
  /** Expansion terms kept (the highest weighted). */
  terms: number;
  /** A term must occur in at least this many feedback passages (rare, one-passage words are mostly noise). */
  minPassages: number;
  /**
   * Term statistics of a wider pool (every passage the pass retrieved): a term found in more than this share of
   * the pool says little about relevance and is dropped. 1 keeps everything.
   */
  maxPoolShare: number;
  /**
   * Rank (and weight) candidate terms by P(w|R) times their pool idf, log(1 / pool share), rather than by P(w|R)
   * alone: favours topical words over words common to the whole pool (which also cost the most to query).
   */
  poolIdf: boolean;
}

const MIN_POOL_FOR_SHARE = 20;

export const DEFAULT_EXPANSION: ExpansionOptions = { terms: 10, minPassages: 2, maxPoolShare: 0.5, poolIdf: true };

function usableTerm(word: string): boolean {
  if (word.length < 2 || EXPANSION_STOPWORDS.has(word)) return false;
  // Bare numbers and very long tokens (hashes, identifiers glued together) rarely generalise.
  return !/^\p{N}+$/u.test(word) && word.length <= 40;
}

/** The query's content-word stems (stopwords dropped unless nothing else is left). */
export function queryStems(query: string): Set<string> {
  const all = words(query);
  const content = all.filter(usableTerm);
  return new Set((content.length > 0 ? content : all).map(stem));
}

/**
 * The relevance model of RM1: P(w|R) proportional to sum over feedback passages d of weight(d) * tf(w,d) / |d|, over
 * content words not already in the query, normalised to sum to 1 over the terms kept. Forms of one stem are counted
 * together and represented by their most frequent surface form.
 */
export function expansionTerms(
  query: string,
  feedback: readonly FeedbackPassage[],
  options: ExpansionOptions = DEFAULT_EXPANSION,
  pool: readonly string[] = [],
): WeightedTerm[] {
  const inQuery = queryStems(query);
  const totalWeight = feedback.reduce((sum, p) => sum + Math.max(0, p.weight), 0);
  if (feedback.length === 0 || options.terms <= 0) return [];
  const stats = new Map<string, { weight: number; passages: number; forms: Map<string, number> }>();
  for (const passage of feedback) {
    const passageWeight = totalWeight > 0 ? Math.max(0, passage.weight) / totalWeight : 1 / feedback.length;
    const tokens = words(passage.text);
    if (tokens.length === 0 || passageWeight === 0) continue;
    const counts = new Map<string, { tf: number; forms: Map<string, number> }>();
    for (const token of tokens) {
      if (!usableTerm(token)) continue;
      const key = stem(token);
      if (inQuery.has(key)) continue;
      let entry = counts.get(key);
      if (!entry) counts.set(key, (entry = { tf: 0, forms: new Map() }));
      entry.tf++;
      entry.forms.set(token, (entry.forms.get(token) ?? 0) + 1);
    }
    for (const [key, { tf, forms }] of counts) {
      let stat = stats.get(key);
      if (!stat) stats.set(key, (stat = { weight: 0, passages: 0, forms: new Map() }));
      stat.weight += (passageWeight * tf) / tokens.length;
      stat.passages++;
      for (const [form, n] of forms) stat.forms.set(form, (stat.forms.get(form) ?? 0) + n);
    }
  }
  const usePool = pool.length > 0 && (options.maxPoolShare < 1 || options.poolIdf);
  // A share over a handful of passages says nothing about how common a word is.
  const maxShare = pool.length >= MIN_POOL_FOR_SHARE ? options.maxPoolShare : 1;
  const poolShare = poolDocumentShare(pool, usePool ? new Set(stats.keys()) : new Set());
  if (options.poolIdf && pool.length > 0) {
    const n = pool.length;
    for (const [key, s] of stats) s.weight *= Math.log((n + 1) / ((poolShare.get(key) ?? 0) * n + 0.5));
  }
  const kept = [...stats.entries()]
    .filter(([key, s]) => s.passages >= Math.min(options.minPassages, feedback.length) && (poolShare.get(key) ?? 0) <= maxShare && s.weight > 0)
    .sort((a, b) => b[1].weight - a[1].weight || (a[0] < b[0] ? -1 : 1))
    .slice(0, options.terms);
  const sum = kept.reduce((acc, [, s]) => acc + s.weight, 0);
  return kept.map(([, s]) => ({ term: mostFrequentForm(s.forms), weight: sum > 0 ? s.weight / sum : 1 / kept.length }));
}

/** Share of pool passages holding each of `keys` (stems). */
function poolDocumentShare(pool: readonly string[], keys: ReadonlySet<string>): Map<string, number> {
  const share = new Map<string, number>();
  if (pool.length === 0 || keys.size === 0) return share;
  for (const text of pool) {
    const seen = new Set<string>();
    for (const token of words(text)) {
      const key = stem(token);
      if (keys.has(key)) seen.add(key);
    }
    for (const key of seen) share.set(key, (share.get(key) ?? 0) + 1);
  }
  for (const [key, n] of share) share.set(key, n / pool.length);
  return share;
}

function mostFrequentForm(forms: ReadonlyMap<string, number>): string {
  let best = '';
  let bestCount = -1;
  for (const [form, n] of forms) {
    if (n > bestCount || (n === bestCount && form < best)) {
      best = form;
      bestCount = n;
    }
  }
  return best;
}

/** Where a multi-part question splits: question marks, semicolons, commas, "vs"/"versus", " and ". */
const SPLIT = /\?|;|,|\s(?:vs\.?|versus|and)\s/iu;
/** A part must hold at least this many content words to stand as a sub-query. */
const MIN_PART_TERMS = 2;

/**
 * The parts of a multi-part question, each substantial (at least two content words), or [] when the query does not
 * split into at least two such parts. "compare btree vs hash indexes" -> [] (one side is a single word);
 * "how is heat transfer computed, and what is the effect of viscosity?" -> two parts.
 */
export function splitSubQueries(query: string): string[] {
  const parts = query
    .split(SPLIT)
    .map((part) => part.replace(/\s+/gu, ' ').trim())
    .filter((part) => words(part).filter(usableTerm).length >= MIN_PART_TERMS);
  const unique = [...new Set(parts.map((p) => p.toLowerCase()))];
  return unique.length >= 2 ? unique : [];
}
