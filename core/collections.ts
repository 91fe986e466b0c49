import { NotaryError } from './errors.js';

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

/** A collection's own search settings; null: the deployment's (pricing.search.credits_by_depth, search.max_depth). */
export interface CollectionSettings {
  creditsByDepth: readonly number[] | null;
  maxDepth: number | null;
}

/** The settings of a stored collection row; a stored price list that cannot be read falls back to the deployment's. */
export function collectionSettingsOf(row: { credits_by_depth: string | null; max_depth: number | null }): CollectionSettings {
  let creditsByDepth: readonly number[] | null = null;
  if (row.credits_by_depth !== null) {
    try {
      const value: unknown = JSON.parse(row.credits_by_depth);
      if (Array.isArray(value) && value.length > 0 && value.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) creditsByDepth = value as number[];
    } catch {
      creditsByDepth = null;
    }
  }
  return { creditsByDepth, maxDepth: row.max_depth === null ? null : Number(row.max_depth) };
}

/** Most depths a collection's price list may name. */
const MAX_PRICED_DEPTHS = 10;

/**
 * Checks a collection's settings before they are stored: prices are 1 to 10 whole credits per depth (0 allowed), the
 * maximum depth from 1 to the deployment's search.max_depth. 400 invalid_settings naming the rule otherwise.
 */
export function checkCollectionSettings(settings: { creditsByDepth?: readonly number[] | null; maxDepth?: number | null }, deploymentMaxDepth: number): void {
  const prices = settings.creditsByDepth;
  if (prices != null) {
    if (prices.length < 1 || prices.length > MAX_PRICED_DEPTHS || !prices.every((n) => Number.isSafeInteger(n) && n >= 0 && n <= 1_000_000)) {
      throw new NotaryError('invalid_settings', `a collection's prices are 1 to ${MAX_PRICED_DEPTHS} whole numbers of credits from 0 to 1000000, one per depth from depth 1 (e.g. 1,1,2)`, {
        credits_by_depth: prices,
      });
    }
  }
  const depth = settings.maxDepth;
  if (depth != null && (!Number.isSafeInteger(depth) || depth < 1 || depth > deploymentMaxDepth)) {
    throw new NotaryError('invalid_settings', `a collection's maximum depth is from 1 to ${deploymentMaxDepth} (search.max_depth)`, { max_depth: depth });
  }
}

/** A --prices value: "1,1,2" (credits by depth), or "default" (null: the price list's). */
export function parsePricesOption(value: string): readonly number[] | null {
  if (value.trim() === 'default') return null;
  const parts = value.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^\d+$/.test(part))) {
    throw new NotaryError('invalid_settings', `--prices "${value.slice(0, 80)}": give whole credits per depth, comma-separated (e.g. 1,1,2), or "default"`);
  }
  return parts.map(Number);
}

/** A --max-depth value: a whole number, or "default" (null: search.max_depth). */
export function parseMaxDepthOption(value: string): number | null {
  if (value.trim() === 'default') return null;
  if (!/^\d+$/.test(value.trim())) throw new NotaryError('invalid_settings', `--max-depth "${value.slice(0, 80)}": give a whole number, or "default"`);
  return Number(value.trim());
}

/**
 * The collections a payer may read under two limits (a key's and its tenant's): those in both; a null limit is no
 * limit, so the other one holds; both null: every collection (null).
 */
export function narrowCollections(a: readonly string[] | null, b: readonly string[] | null): readonly string[] | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.filter((id) => b.includes(id));
}
