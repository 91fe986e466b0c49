import { analysedWords, MAX_TERM_LENGTH, QUERY_STOPWORDS } from '../analysis.js';

const MAX_QUERY_TERMS = 32;

/**
 * The websearch-free tsquery of a user string: its words only (letters, digits, marks), stopwords dropped unless
 * nothing else is left, OR between them; each identifier (lc_numeric, pg_catalog.pg_class) also as a phrase of its
 * parts. Nothing of tsquery's syntax in the input reaches the parser. Null when no word is left.
 */
export function toTsQuery(input: string): string | null {
  const terms = queryTerms(input);
  if (terms.length === 0) return null;
  const phrases = queryPhrases(input).map((parts) => `(${parts.split(' ').join(' <-> ')})`);
  return [...terms, ...phrases].join(' | ');
}

/** The identifiers of a query (lc_numeric, pg_catalog.pg_class) as their words, space-separated (BM25 scores each). */
export function queryPhrases(input: string): string[] {
  const lowered = input.normalize('NFKC').toLowerCase();
  return [...new Set(lowered.match(/[\p{L}\p{N}\p{M}]+(?:[_.:][\p{L}\p{N}\p{M}]+)+/gu) ?? [])]
    .map((id) => analysedWords(id))
    .filter((parts) => parts.length > 1)
    .slice(0, MAX_QUERY_TERMS)
    .map((parts) => parts.map((p) => p.slice(0, MAX_TERM_LENGTH)).join(' '));
}

/** The words a query searches for: unique, stopwords dropped unless nothing else is left, at most MAX_QUERY_TERMS. */
export function queryTerms(input: string): string[] {
  const words = [...new Set(analysedWords(input))];
  const meaningful = words.filter((w) => !QUERY_STOPWORDS.has(w));
  return (meaningful.length > 0 ? meaningful : words).slice(0, MAX_QUERY_TERMS);
}
