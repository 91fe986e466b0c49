/**
 * Collections: named sets of pages in one deployment (issue 33). Every page belongs to one or more; a page with no
 * recorded membership (indexed before collections, or stored by a tool that names none) belongs to the default one.
 * Index backends and vector stores keep each document's collection ids and filter on them inside retrieval.
 */

/** The id of the collection every page belongs to unless it was put in others: fixed, so backends know it unasked. */
export const DEFAULT_COLLECTION_ID = 'col_default';
/** Its name: what a request without `collection` searches. */
export const DEFAULT_COLLECTION_NAME = 'default';

/** A collection name: lower-case letters, digits, "-" and "_", starting with a letter or digit, at most 64. */
export const COLLECTION_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
const NAME = new RegExp(COLLECTION_NAME_PATTERN);

export function isCollectionName(name: string): boolean {
  return NAME.test(name);
}

/** A document's collection ids as stored: the given ones, or the default collection's when none are given. */
export function collectionIdsOf(ids: readonly string[] | undefined | null): readonly string[] {
  return ids && ids.length > 0 ? ids : [DEFAULT_COLLECTION_ID];
}

/** Whether a document in `held` (none: the default collection) is in one of `wanted`. */
export function inCollections(held: readonly string[] | undefined | null, wanted: readonly string[]): boolean {
  const own = collectionIdsOf(held);
  return own.some((id) => wanted.includes(id));
}

/**
 * A stored JSON list of collection ids (an API key's): null stays null (no limit); a value that cannot be read limits
 * to nothing rather than opening every collection.
 */
export function parseCollectionIds(stored: string | null): readonly string[] | null {
  if (stored === null) return null;
  try {
    const value: unknown = JSON.parse(stored);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}
