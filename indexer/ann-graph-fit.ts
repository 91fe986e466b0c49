/** Whether a saved HNSW graph (ann-store.ts) can stand in for a build over a cache's vectors, and what changed since. */
import type { SavedAnnGraph, VectorSample, VersionedIds } from './ann-store.js';
import type { CachedVectors } from './vector-cache.js';

/** Share of the collection changed (replaced, added, removed) above which a diff costs more than a fresh build. */
export const REBUILD_ABOVE_CHANGED_SHARE = 0.25;
/** Rows whose exact vectors are kept with a saved graph to tell it from one of another database. */
const SAMPLE_ROWS = 16;

/** Rows of `next` that are new or rewritten since `previous`, and the ids of `previous` that `next` no longer holds. */
export function changesSince(previous: VersionedIds, next: CachedVectors): { changed: number[]; removed: number[] } {
  const kept = new Uint8Array(next.size);
  const changed: number[] = [];
  const removed: number[] = [];
  for (let row = 0; row < previous.size; row++) {
    const id = previous.ids[row]!;
    const at = next.position.get(id);
    if (at === undefined) {
      removed.push(id);
      continue;
    }
    kept[at] = 1;
    if (next.seqs[at] !== previous.seqs[row]) changed.push(at);
  }
  for (let row = 0; row < next.size; row++) if (kept[row] === 0) changed.push(row);
  return { changed, removed };
}

export function sampleOf(cache: CachedVectors): VectorSample {
  const d = cache.dimensions;
  const size = Math.min(SAMPLE_ROWS, cache.size);
  const ids = new Float64Array(size);
  const seqs = new Float64Array(size);
  const vectors = new Float32Array(size * d);
  for (let i = 0; i < size; i++) {
    const row = Math.floor((i * cache.size) / size);
    ids[i] = cache.ids[row]!;
    seqs[i] = cache.seqs[row]!;
    vectors.set(cache.matrix.subarray(row * d, row * d + d), i * d);
  }
  return { size, ids, seqs, vectors };
}

/**
 * Why a saved sample shows the graph was built from other vectors than `cache` holds, or null when it agrees. Rows
 * rewritten since the save are not compared: the diff replaces them, and a cache whose rows all differ from the
 * graph's (id, seq) pairs is more than the diff takes anyway.
 */
function sampleDisagrees(sample: VectorSample, cache: CachedVectors): string | null {
  const d = cache.dimensions;
  for (let i = 0; i < sample.size; i++) {
    const row = cache.position.get(sample.ids[i]!);
    if (row === undefined || cache.seqs[row] !== sample.seqs[i]) continue;
    for (let j = 0; j < d; j++) {
      if (cache.matrix[row * d + j] !== sample.vectors[i * d + j]) return `passage ${sample.ids[i]} has another vector under the same write seq`;
    }
  }
  return null;
}

/** Why a saved graph cannot stand in for a build of `cache`, `changes` vectors on, or null when it can. */
export function unfit(saved: SavedAnnGraph, cache: CachedVectors, changes: number): string | null {
  const disagreement = sampleDisagrees(saved.sample, cache);
  if (disagreement) return `saved graph is of other vectors: ${disagreement}`;
  if (changes > REBUILD_ABOVE_CHANGED_SHARE * cache.size) return `${changes} vectors changed since the graph was saved: a build is cheaper`;
  return null;
}
