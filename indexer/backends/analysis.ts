import { stemmer } from 'stemmer';

/**
 * Text analysis for index backends that do not stem English themselves (Meilisearch): the same words FTS5's
 * `porter unicode61 remove_diacritics 2` tokenizer sees (NFKC, lower case, Latin diacritics folded, runs of letters,
 * digits and marks) reduced to Porter stems. Documents are indexed as these stems and queries are analysed the same
 * way, so "indexes" finds "index" and "cafe" finds "café" as they do in FTS5.
 */

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const LATIN_DIACRITICS = /[\u0300-\u036f]/gu;

/** Longer "words" are not words (a base64 blob, a hostile query): they are cut to this length. */
export const MAX_TERM_LENGTH = 64;

/** English function words: too common to narrow a query (the list toFts5Query drops). */
export const QUERY_STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by can do does for from had has have how i if in into is it its me my no not of on or ' +
    'our so such that the their then there these they this to was we were what when where which who why will with ' +
    'would you your'
  ).split(' '),
);

function fold(text: string): string {
  const lower = text.normalize('NFKC').toLowerCase();
  return /[^ -~\s]/u.test(lower) ? lower.normalize('NFD').replace(LATIN_DIACRITICS, '').normalize('NFKC') : lower;
}

/** Lower-cased, diacritic-folded words of `text`, in order. */
export function analysedWords(text: string): string[] {
  return (fold(text).match(WORD) ?? []).map((w) => (w.length > MAX_TERM_LENGTH ? w.slice(0, MAX_TERM_LENGTH) : w));
}

/** Porter stem of a folded word (words with digits, and non-Latin words, are kept as they are). */
export function stemWord(word: string): string {
  return /^[a-z]+$/.test(word) ? stemmer(word) : word;
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
  const words = [...new Set(analysedWords(query))];
  const meaningful = words.filter((w) => !QUERY_STOPWORDS.has(w));
  const chosen = meaningful.length > 0 ? meaningful : words;
  return [...new Set(chosen.map(stemWord))].slice(0, maxTerms);
}
