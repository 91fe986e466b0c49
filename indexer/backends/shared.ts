import { NotaryError } from '../../core/index.js';
import type { Storage } from '../../storage/index.js';
import { selectPerPage } from '../page-cap.js';

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
 * `firstK`: the first `k` (an index whose cost grows with `k`, as an HNSW's does, may start nearer `limit`).
 */
export async function widenedSearch<T extends { id: number; pageId: number; score: number }>(
  limit: number,
  perPage: number,
  maxK: number,
  fetch: (k: number) => Promise<{ candidates: T[]; exhausted: boolean }>,
  firstK: number = perPage >= limit ? limit + 8 : limit * 4,
): Promise<T[]> {
  for (let k = Math.min(maxK, firstK); ; k = Math.min(maxK, k * 2)) {
    const { candidates, exhausted } = await fetch(k);
    const hits = [...candidates].sort((a, b) => b.score - a.score || a.id - b.id);
    const selected = selectPerPage(hits, limit, perPage, (hit) => hit.pageId);
    if (exhausted || k >= maxK) return selected;
    const last = selected[selected.length - 1];
    const tieAtCut = last !== undefined && hits[hits.length - 1]!.score >= last.score;
    if (selected.length >= limit && !tieAtCut) return selected;
  }
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
