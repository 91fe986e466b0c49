/**
 * notary's own BM25 over Meilisearch's candidates (issue 34): Meilisearch finds the passages holding the query's
 * words (search-index.ts) and each is scored here as FTS5's bm25() scores it in the SQLite backend (k1 1.2, b 0.75,
 * the columns' weights title 4 : headings 2 : body 1; idf ln((N - df + 0.5) / (df + 0.5)), at least 1e-6; a row's
 * length is its tokens in every column, its filter tokens too), from the candidate's own stored fields analysed as the
 * index analyses them (analysis.ts), the stems' document counts (query-words.ts) and the index's average length
 * (a sample of the documents' stored `len`).
 *
 * What it cannot express exactly: the candidates are Meilisearch's (a passage FTS5 would rank in the top `limit`
 * but that Meilisearch's OR query leaves out of its candidates is missing), a phrase's document count is Meilisearch's
 * phrase search over the stems (its stop words are not in its index), the average length is a sample's, and a word is
 * tokenized by core/text rather than FTS5's unicode61 (CJK runs are segmented here). bench/results holds the measured difference.
 */
import { FTS5_COLUMN_WEIGHTS } from '../fts5/ranking.js';
import { analysedWords, stemWord } from '../analysis.js';

const K1 = 1.2;
const B = 0.75;

/** The fields of a passage BM25 reads (as stored). */
export interface Bm25Fields {
  /** The fields analysed as the index stores them (stems joined by spaces): read instead of analysing the text. */
  s_title?: string | undefined;
  s_headings?: string | undefined;
  s_text?: string | undefined;
  /** The stored length (documentLength), when the document has one. */
  len?: number | undefined;
  title?: string | undefined;
  headingPath?: string | undefined;
  text?: string | undefined;
  language?: string | undefined;
  navigation?: boolean | undefined;
  translationKey?: string | undefined;
}

/**
 * The filter tokens FTS5's `facets` column holds for a passage (fts5/facets.ts passageFacetsOf: language, the page,
 * navigation, translation group): bm25() counts them in a row's length.
 */
function facetTokens(doc: Bm25Fields): number {
  return 2 + (doc.navigation ? 1 : 0) + (doc.translationKey ? 1 : 0);
}

/** A passage's length as FTS5's bm25() counts it: its tokens in title, headings, body and facets. */
export function documentLength(doc: Bm25Fields): number {
  return analysedWords(doc.title ?? '').length + analysedWords(doc.headingPath ?? '').length + analysedWords(doc.text ?? '').length + facetTokens(doc);
}

/** The statistics of the whole index BM25 needs. */
export interface Bm25Stats {
  /** Documents in the index. */
  documents: number;
  /** Their average length (documentLength). */
  averageLength: number;
  /** Documents holding each stem. */
  df: (stem: string) => number | undefined;
}

/** The key a phrase is counted under (Meilisearch's phrase syntax: its stems in quotes). */
export function phraseKey(phrase: readonly string[]): string {
  return `"${phrase.join(' ')}"`;
}

const SPACE = 0x20;

/**
 * Occurrences of `term` (a stem, or a phrase's stems joined by spaces) as whole tokens of `field` (stems joined by
 * single spaces, as stored), overlapping ones included: what splitting the field at its spaces and comparing tokens
 * counts, without making a string of every token.
 */
export function occurrences(field: string, term: string): number {
  if (term.length === 0) return 0;
  let count = 0;
  for (let i = field.indexOf(term); i !== -1; i = field.indexOf(term, i + 1)) {
    const end = i + term.length;
    if ((i === 0 || field.charCodeAt(i - 1) === SPACE) && (end === field.length || field.charCodeAt(end) === SPACE)) count++;
  }
  return count;
}

/** Tokens of a stored field: `field.split(' ').length`, 0 for an empty field. */
function tokenCount(field: string): number {
  if (field.length === 0) return 0;
  let n = 1;
  for (let i = field.indexOf(' '); i !== -1; i = field.indexOf(' ', i + 1)) n++;
  return n;
}

/** A query's terms as frequencies() reads them: each stem's positions among the terms, each phrase joined. */
interface QueryTerms {
  stems: readonly string[];
  at: ReadonlyMap<string, readonly number[]>;
  phrases: readonly (readonly string[])[];
  joined: readonly string[];
}

function queryTermsOf(stems: readonly string[], phrases: readonly (readonly string[])[]): QueryTerms {
  const at = new Map<string, number[]>();
  stems.forEach((s, i) => at.set(s, [...(at.get(s) ?? []), i]));
  return { stems, at, phrases, joined: phrases.map((phrase) => phrase.join(' ')) };
}

/**
 * The weighted frequency of each of `stems` and each of `phrases` (stems at consecutive positions of one field) in
 * `doc`, and the doc's length. From the stored stems when the doc has them (each term looked up in the field's text:
 * about a tenth of the CPU of splitting 200 candidates into tokens, issue 34), else from its text analysed.
 */
function frequencies(query: QueryTerms, doc: Bm25Fields): { tf: number[]; length: number } {
  const { stems, at, phrases, joined } = query;
  const tf = new Array<number>(stems.length + phrases.length).fill(0);
  let length = facetTokens(doc);
  const add = (i: number, count: number, weight: number) => {
    for (let c = 0; c < count; c++) tf[i]! += weight;
  };
  if (typeof doc.s_title === 'string' && typeof doc.s_headings === 'string' && typeof doc.s_text === 'string') {
    for (const [field, weight] of [
      [doc.s_title, FTS5_COLUMN_WEIGHTS.title],
      [doc.s_headings, FTS5_COLUMN_WEIGHTS.headings],
      [doc.s_text, FTS5_COLUMN_WEIGHTS.body],
    ] as const) {
      length += tokenCount(field);
      for (const [stem, terms] of at) {
        const count = occurrences(field, stem);
        if (count > 0) for (const i of terms) add(i, count, weight);
      }
      joined.forEach((phrase, p) => add(stems.length + p, occurrences(field, phrase), weight));
    }
    return { tf, length: typeof doc.len === 'number' && doc.len > 0 ? doc.len : length };
  }
  // Analysing a passage costs about 3 us a word (issue 34: 240 candidates of the PostgreSQL docs took 50-130 ms).
  for (const [tokens, weight] of [
    [analysedWords(doc.title ?? '').map(stemWord), FTS5_COLUMN_WEIGHTS.title],
    [analysedWords(doc.headingPath ?? '').map(stemWord), FTS5_COLUMN_WEIGHTS.headings],
    [analysedWords(doc.text ?? '').map(stemWord), FTS5_COLUMN_WEIGHTS.body],
  ] as const) {
    length += tokens.length;
    for (const t of tokens) {
      const terms = at.get(t);
      if (terms !== undefined) for (const i of terms) tf[i]! += weight;
    }
    phrases.forEach((phrase, p) => {
      for (let i = 0; i + phrase.length <= tokens.length; i++) {
        if (phrase.every((word, j) => tokens[i + j] === word)) tf[stems.length + p]! += weight;
      }
    });
  }
  return { tf, length: typeof doc.len === 'number' && doc.len > 0 ? doc.len : length };
}

/**
 * BM25 of each doc for the query's stems and phrases (0 for a doc holding none of them). A phrase is a term of its
 * own, as the identifiers of a query are in FTS5 (fts5/query.ts): its df is counted under phraseKey. A stem listed
 * twice (two words of the query with one stem) is two terms, as FTS5's two phrases are.
 */
export function bm25Scores(stems: readonly string[], docs: readonly Bm25Fields[], stats: Bm25Stats, phrases: readonly (readonly string[])[] = []): number[] {
  const n = Math.max(1, stats.documents);
  const idf = [...stems, ...phrases.map(phraseKey)].map((s) => {
    const df = Math.min(n, Math.max(0, stats.df(s) ?? 0));
    const value = Math.log((n - df + 0.5) / (df + 0.5));
    return value <= 0 ? 1e-6 : value;
  });
  const avgdl = stats.averageLength > 0 ? stats.averageLength : 1;
  const query = queryTermsOf(stems, phrases);
  return docs.map((doc) => {
    const { tf, length } = frequencies(query, doc);
    let score = 0;
    for (let i = 0; i < tf.length; i++) {
      const f = tf[i]!;
      if (f > 0) score += idf[i]! * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * length) / avgdl)));
    }
    return score;
  });
}
