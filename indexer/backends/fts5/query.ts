/** A user's query as an FTS5 MATCH expression, narrowed by a filter's facet tokens. */
import { contentWords, identifiers } from '../../../core/index.js';
import type { IndexFilter } from '../../search-index.js';
import { languageToken, NAVIGATION_TOKEN, translationToken } from './facets.js';

const MAX_QUERY_TERMS = 32;

/**
 * Turns any user string into a safe FTS5 MATCH expression: words only (letters, digits, marks), each quoted, OR
 * between them. FTS5 syntax in the input (quotes, *, :, parentheses, NEAR, AND/OR/NOT, -, ^) cannot reach the
 * parser. Returns null when no word is left.
 */
export function toFts5Query(input: string): string | null {
  const phrases = queryPhrases(input);
  return phrases ? phrases.map((phrase) => `"${phrase}"`).join(' OR ') : null;
}

/** The phrases of toFts5Query's expression, in its order (words and spaces only); null when the query has no word. */
export function queryPhrases(input: string): string[] | null {
  const terms = [...new Set(contentWords(input))].slice(0, MAX_QUERY_TERMS);
  if (terms.length === 0) return null;
  // The tokenizer splits identifiers (lc_numeric, pg_stat_activity, max.connections) into their parts; the
  // identifier itself also goes in as a phrase, so a passage holding it exactly outscores one holding a part.
  const phrases = identifiers(input).slice(0, MAX_QUERY_TERMS);
  return [...terms, ...phrases.map((parts) => parts.join(' '))];
}

/** The text columns of each table: a query's words match these only, never the filter tokens of `facets`. */
export const PASSAGE_TEXT = '{title headings body}';
export const PAGE_TEXT = '{title headings path body}';

/** The MATCH expression of `query` over `columns`, narrowed by `filter`'s facets; null when the query has no word. */
export function filteredMatch(query: string, filter: IndexFilter | undefined, columns: string): string | null {
  const match = typeof query === 'string' ? toFts5Query(query) : null;
  if (match === null) return null;
  let expr = `(${columns} : (${match}))`;
  if (filter?.languages && filter.languages.length > 0) {
    const tokens = [...new Set([...filter.languages.map(languageToken), languageToken(null)])];
    expr += ` AND facets : (${tokens.map((t) => `"${t}"`).join(' OR ')})`;
  }
  if (filter?.translationKey) expr += ` AND facets : "${translationToken(filter.translationKey)}"`;
  if (filter?.excludeNavigation) expr = `(${expr}) NOT facets : "${NAVIGATION_TOKEN}"`;
  return expr;
}
