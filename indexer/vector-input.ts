/** What a vector index is given, checked: vectors of its dimensions, a search's limit and per-page cap. */
import { NotaryError } from '../core/index.js';
import type { PassageVector } from './vector-index.js';

/** A Float32Array of `dimensions` finite values, else invalid_request. */
export function checkVector(vector: unknown, dimensions: number, what: string): Float32Array {
  if (!(vector instanceof Float32Array)) throw new NotaryError('invalid_request', `${what} is not a Float32Array`);
  if (vector.length !== dimensions) throw new NotaryError('invalid_request', `${what} has ${vector.length} dimensions, expected ${dimensions}`);
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) throw new NotaryError('invalid_request', `${what} has a non-finite value at ${i}`);
  }
  return vector;
}

/** Validated limit and per-page cap of a vector search (a non-number is invalid_request). */
export function vectorSearchBounds(options: { limit: number; perPageLimit?: number }): { limit: number; perPage: number } {
  const limit = Math.floor(options.limit);
  if (Number.isNaN(limit)) throw new NotaryError('invalid_request', `search limit must be a number, got ${options.limit}`);
  let perPage = Infinity;
  if (options.perPageLimit !== undefined) {
    perPage = Math.floor(options.perPageLimit);
    if (Number.isNaN(perPage)) throw new NotaryError('invalid_request', `perPageLimit must be a number, got ${options.perPageLimit}`);
    perPage = Math.max(1, perPage);
  }
  return { limit, perPage };
}

/** The vectors to write, checked (integer ids, `dimensions` finite values) and one per passage id (the last given). */
export function checkedVectors(items: readonly PassageVector[], dimensions: number): PassageVector[] {
  const byId = new Map<number, PassageVector>();
  items.forEach((item, i) => {
    if (!Number.isSafeInteger(item.id) || !Number.isSafeInteger(item.pageId)) throw new NotaryError('invalid_request', `vector ${i}: id and pageId must be integers`);
    checkVector(item.vector, dimensions, `vector for passage ${item.id}`);
    byId.set(item.id, item);
  });
  return [...byId.values()];
}
