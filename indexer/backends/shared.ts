import { NotaryError } from '../../core/errors.js';
import type { Storage } from '../../storage/db.js';

/** A Float32Array of `dimensions` finite values, else invalid_request. */
export function checkVector(vector: unknown, dimensions: number, what: string): Float32Array {
  if (!(vector instanceof Float32Array)) throw new NotaryError('invalid_request', `${what} is not a Float32Array`);
  if (vector.length !== dimensions) throw new NotaryError('invalid_request', `${what} has ${vector.length} dimensions, expected ${dimensions}`);
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) throw new NotaryError('invalid_request', `${what} has a non-finite value at ${i}`);
  }
  return vector;
}

/** Takes hits best first, at most `perPage` from one page, until `limit` are taken. */
export function selectPerPage<T extends { pageId: number }>(hits: readonly T[], limit: number, perPage: number): T[] {
  const used = new Map<number, number>();
  const out: T[] = [];
  for (const hit of hits) {
    if (out.length >= limit) break;
    const n = used.get(hit.pageId) ?? 0;
    if (n >= perPage) continue;
    used.set(hit.pageId, n + 1);
    out.push(hit);
  }
  return out;
}

const ID_CHUNK = 1000;

/** Which of these passage ids exist in storage. */
export async function existingPassageIds(storage: Storage, ids: readonly number[]): Promise<Set<number>> {
  const out = new Set<number>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += ID_CHUNK) {
    const rows = await storage.db.selectFrom('passages').select('id').where('id', 'in', unique.slice(i, i + ID_CHUNK)).execute();
    for (const r of rows) out.add(Number(r.id));
  }
  return out;
}

/**
 * Passage ids in storage, lowest first, that `haveVector` does not report: for vector stores outside the database,
 * which are asked one chunk of ids at a time.
 */
export async function missingPassages(storage: Storage, limit: number, haveVector: (ids: number[]) => Promise<Set<number>>): Promise<number[]> {
  const n = Math.floor(limit);
  if (Number.isNaN(n)) throw new NotaryError('invalid_request', `limit must be a number, got ${limit}`);
  const out: number[] = [];
  let after = 0;
  while (out.length < n) {
    const rows = await storage.db.selectFrom('passages').select('id').where('id', '>', after).orderBy('id').limit(ID_CHUNK).execute();
    if (rows.length === 0) break;
    const ids = rows.map((r) => Number(r.id));
    const have = await haveVector(ids);
    for (const id of ids) {
      if (!have.has(id)) out.push(id);
      if (out.length >= n) break;
    }
    after = ids[ids.length - 1]!;
  }
  return out;
}

/**
 * Nearest-neighbour search over an approximate index, made exact at the cut: `fetch(k)` returns the index's best `k`
 * candidates with exact scores (and whether the index has no more); they are ordered by score, then lower id, and
 * capped per page. When the cut falls on a tie, or the cap left slots empty, `k` doubles and the index is asked again.
 */
export async function widenedSearch<T extends { id: number; pageId: number; score: number }>(
  limit: number,
  perPage: number,
  maxK: number,
  fetch: (k: number) => Promise<{ candidates: T[]; exhausted: boolean }>,
): Promise<T[]> {
  for (let k = Math.min(maxK, perPage >= limit ? limit + 8 : limit * 4); ; k = Math.min(maxK, k * 2)) {
    const { candidates, exhausted } = await fetch(k);
    const hits = [...candidates].sort((a, b) => b.score - a.score || a.id - b.id);
    const selected = selectPerPage(hits, limit, perPage);
    if (exhausted || k >= maxK) return selected;
    const last = selected[selected.length - 1];
    const tieAtCut = last !== undefined && hits[hits.length - 1]!.score >= last.score;
    if (selected.length >= limit && !tieAtCut) return selected;
  }
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

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
