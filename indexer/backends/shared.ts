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
