import { stemmer } from 'stemmer';
import { hasUnspacedScript, segmentWords } from './unspaced.js';

/**
 * Text analysis, in one place: words, stopwords and stems as the index, the scorers, reflection, snippets and the
 * evaluation see them. Words are NFKC-normalised, lower-cased runs of letters, digits and marks, with Latin diacritics
 * folded (as FTS5's `remove_diacritics` does), so "Café" and "cafe" are one word. Stems are Porter's (the algorithm
 * of FTS5's `porter` tokenizer), so a stem computed here matches the index's own. In scripts written without spaces
 * (Chinese, Japanese, Thai) words are the platform segmenter's, and the FTS5 index holds its text with a zero-width
 * space between them (core/unspaced.ts) so that its tokens are those words too.
 */

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** Combining marks of the Latin diacritics block only: marks of other scripts (Devanagari vowel signs) are letters. */
const LATIN_DIACRITICS = /[\u0300-\u036f]/gu;

/** Lower-cased, NFKC-normalised words of `text`, in order, Latin diacritics folded. */
export function words(text: string): string[] {
  const found = foldCase(text).match(WORD) ?? [];
  // A run of Chinese, Japanese or Thai letters is a clause, not a word: the segmenter finds its words.
  return hasUnspacedScript(text) ? found.flatMap((w) => (hasUnspacedScript(w) ? segmentWords(w) : [w])) : found;
}

/** `text` lower-cased and normalised the way words() sees it (for finding words at their offsets). */
export function foldCase(text: string): string {
  const normalised = text.normalize('NFKC').toLowerCase();
  // Only decompose when there is something to fold: most text is plain ASCII.
  return /[^ -~\s]/u.test(normalised) ? normalised.normalize('NFD').replace(LATIN_DIACRITICS, '').normalize('NFKC') : normalised;
}

/** `text` reduced to its words joined by single spaces: two strings that differ only in case and punctuation compare equal. */
export function comparableText(text: string): string {
  return words(text).join(' ');
}

/** English function words: too common to narrow a query or to count as evidence. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by can do does for from had has have how i if in into is it its me my no not of on or ' +
    'our so such that the their then there these they this to was we were what when where which who why will with ' +
    'would you your did'
  ).split(' '),
);

/**
 * Words that carry no topic for query expansion: the stopwords plus common verbs, quantities and discourse words
 * ("also", "using", "two") that a relevance model would otherwise pick from any feedback passage.
 */
export const EXPANSION_STOPWORDS: ReadonlySet<string> = new Set([
  ...STOPWORDS,
  ...(
    'about above after again against all also am any aren because been before being below between both cannot could ' +
    'doing don down during each either else etc even ever every few further get gets given having he her here hers ' +
    'herself him himself his however ie isn itself just less like made make makes many may might more most much must ' +
    'myself neither nor now off often once one only other others otherwise ours ourselves out over own per rather same ' +
    'see shall she should since some than theirs them themselves thereby therefore those though through thus too under ' +
    'until up upon us use used uses using very via well whatever whether while whom whose within without yet yours ' +
    'yourself eg e g two three four five first second new'
  ).split(' '),
]);

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/** Words repeat a lot across requests and pages; stemming dominates the cost of reading text. */
const STEM_CACHE_SIZE = 100_000;
const stemCache = new Map<string, string>();

/** Porter stem of one word from words() ("indexes" and "index" share one). Words holding digits are kept as they are. */
export function stem(word: string): string {
  let key = stemCache.get(word);
  if (key === undefined) {
    key = /\p{N}/u.test(word) || word.length <= 2 ? word : stemmer(word);
    if (stemCache.size >= STEM_CACHE_SIZE) stemCache.clear();
    stemCache.set(word, key);
  }
  return key;
}

/** Stems of every word of `text`, in order. */
export function terms(text: string): string[] {
  return words(text).map(stem);
}

/** Words of `text` without stopwords, or all of them when nothing else is left ("to be or not to be"). */
export function contentWords(text: string): string[] {
  const all = words(text);
  const content = all.filter((w) => !STOPWORDS.has(w));
  return content.length > 0 ? content : all;
}

/** The distinct stems of a query's content words. */
export function queryTerms(query: string): string[] {
  return [...new Set(contentWords(query).map(stem))];
}

/**
 * Identifiers written with joiners ("lc_numeric", "pg_catalog.pg_class", "os.path.join") as the lists of their words:
 * tokenizers split them, so a search can ask for the parts as a phrase.
 */
export function identifiers(text: string): string[][] {
  const found = foldCase(text).match(/[\p{L}\p{N}\p{M}]+(?:[_.:][\p{L}\p{N}\p{M}]+)+/gu) ?? [];
  return [...new Set(found)].map((id) => id.match(WORD) ?? []).filter((parts) => parts.length > 1);
}
