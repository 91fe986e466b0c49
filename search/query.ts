import { NotaryError } from '../core/index.js';

/** Controls other than tab, line feed and carriage return (which count as spaces). */
const CONTROL = /(?![\t\n\r])\p{Cc}/u;
/** Zero-width and other invisible format characters (ZWSP, ZWJ, word joiner, BOM, soft hyphen, ...). */
const FORMAT = /\p{Cf}/gu;
const SEARCHABLE = /[\p{L}\p{N}]/u;

/**
 * The query as searched: invisible format characters removed and the ends trimmed. Refuses, with a 400, queries that
 * are empty in effect (nothing but spaces, invisible characters or punctuation), control characters such as NUL, and
 * unpaired UTF-16 surrogates, so no call is charged for a search that could not match anything.
 */
export function normalizeQuery(raw: string, maxLength: number): string {
  if (!raw.isWellFormed()) throw new NotaryError('invalid_request', 'query contains an unpaired UTF-16 surrogate (not valid Unicode text)');
  if (CONTROL.test(raw)) throw new NotaryError('invalid_request', 'query contains a control character (such as NUL)');
  const query = raw.replace(FORMAT, '').trim();
  if (!SEARCHABLE.test(query)) throw new NotaryError('invalid_request', 'query must contain at least one letter or digit');
  if (query.length > maxLength) throw new NotaryError('invalid_request', `query must be at most ${maxLength} characters`);
  return query;
}
