import { STOPWORDS, stem, words } from '../../core/index.js';

/**
 * Text analysis for index backends that do not stem English themselves (Meilisearch) or take a query's words from
 * notary (PostgreSQL's tsquery): core/text's words (the ones FTS5's `porter unicode61 remove_diacritics 2` tokenizer
 * sees) reduced to Porter stems. Documents are indexed as these stems and queries are analysed the same way, so
 * "indexes" finds "index" and "cafe" finds "café" as they do in FTS5.
 *
 * Three settings differ from core/text's defaults, each kept as it was when these backends' indexes were built, so
 * their relevance stays what was measured: words are cut at MAX_TERM_LENGTH, only words of the letters a-z are
 * stemmed (a word of other letters is kept whole; core/text's stem() also runs Porter's suffix rules over those), and
 * the query stopwords lack one word of core/text's list (QUERY_STOPWORDS below).
 */

/** Longer "words" are not words (a base64 blob, a hostile query): they are cut to this length. */
export const MAX_TERM_LENGTH = 64;

/**
 * English function words dropped from a query: core/text's STOPWORDS without "did". The difference matters:
 * Meilisearch keeps the stems of this list as its index's stop words, so adding "did" would change the settings of
 * every index already built (the next start applies them again and Meilisearch re-indexes every document), and both
 * backends would stop searching for "did"; that change to their relevance has not been measured.
 */
export const QUERY_STOPWORDS: ReadonlySet<string> = new Set([...STOPWORDS].filter((word) => word !== 'did'));

/** Lower-cased, diacritic-folded words of `text`, in order, each cut at MAX_TERM_LENGTH. */
export function analysedWords(text: string): string[] {
  return words(text).map((w) => (w.length > MAX_TERM_LENGTH ? w.slice(0, MAX_TERM_LENGTH) : w));
}

/** Porter stem of a folded word; words with digits, and words of letters other than a-z, are kept as they are. */
export function stemWord(word: string): string {
  return /^[a-z]+$/.test(word) ? stem(word) : word;
}

/** `text` as the stems an index stores, joined by spaces. */
export function stemmedText(text: string): string {
  return analysedWords(text).map(stemWord).join(' ');
}

/**
 * The stems a query searches for: unique, stopwords dropped unless nothing else is left, at most `maxTerms`. Empty
 * when the query holds no word.
 */
export function queryStems(query: string, maxTerms: number): string[] {
  const all = [...new Set(analysedWords(query))];
  const meaningful = all.filter((w) => !QUERY_STOPWORDS.has(w));
  const chosen = meaningful.length > 0 ? meaningful : all;
  return [...new Set(chosen.map(stemWord))].slice(0, maxTerms);
}
