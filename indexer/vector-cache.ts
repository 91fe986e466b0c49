import { VectorMatrix } from './wasm/dot-scanner.js';
import { PageCap, selectPerPage } from './page-cap.js';
import type { VectorHit } from './vector-index.js';
import { factsPass, hasFactFilter, type FactFilter } from './filter-facts.js';
import { prunedSearch } from './pruned-scan.js';

/**
 * What SqlVectorIndex keeps in memory, as ann-search.ts reads it (VectorCache below): row i is matrix[i*d..), with its
 * id, page and write seq.
 */
export interface CachedVectors {
  readonly dimensions: number;
  readonly size: number;
  readonly matrix: Float32Array;
  readonly ids: Float64Array;
  readonly pageIds: Float64Array;
  readonly seqs: Float64Array;
  readonly position: ReadonlyMap<number, number>;
}

/** query · vectors[base .. base + query.length), summed in order in doubles as reranker's dot sums (the same bits). */
export function dotAt(query: Float32Array, vectors: Float32Array, base: number): number {
  let sum = 0;
  for (let j = 0; j < query.length; j++) sum += query[j]! * vectors[base + j]!;
  return sum;
}

/**
 * This model's vectors in memory: row i is matrix[i*d .. (i+1)*d), with its passage id, page id and the write
 * generation (seq) that stored it. `maxSeq` and `size` are what the database said when the cache was last known
 * to equal it; every database row with seq <= maxSeq is in the cache with the same content.
 */
export class VectorCache {
  readonly store: VectorMatrix;
  ids: Float64Array;
  pageIds: Float64Array;
  seqs: Float64Array;
  /** Each row's host and publication date (epoch ms, NaN when unknown): what domain and date filters read. */
  hosts: string[] = [];
  /** Each row's collection ids (undefined: the default collection), what collection filters read. */
  collections: Array<readonly string[] | undefined> = [];
  published: Float64Array;
  size = 0;
  maxSeq = 0;
  /** passage_vector_changes when the cache was last known current (SQLite); null: unknown, check the rows. */
  stamp: number | null = null;
  readonly position = new Map<number, number>();

  constructor(
    readonly dimensions: number,
    capacity: number,
  ) {
    const cap = Math.max(16, capacity);
    this.store = new VectorMatrix(dimensions, cap);
    this.ids = new Float64Array(cap);
    this.pageIds = new Float64Array(cap);
    this.seqs = new Float64Array(cap);
    this.published = new Float64Array(cap);
  }

  private grow(): void {
    const cap = this.ids.length * 2;
    this.store.reserve(cap);
    for (const key of ['ids', 'pageIds', 'seqs', 'published'] as const) {
      const next = new Float64Array(cap);
      next.set(this[key]);
      this[key] = next;
    }
  }

  /** The dot product of `query` with passage `id`'s row, summed as reranker's dot sums (the same bits); undefined without one. */
  similarity(query: Float32Array, id: number): number | undefined {
    const row = this.position.get(id);
    if (row === undefined) return undefined;
    return dotAt(query, this.store.matrix, row * this.dimensions);
  }

  /** Row i is matrix[i*d .. (i+1)*d); a new view after the cache grows. */
  get matrix(): Float32Array {
    return this.store.matrix;
  }

  /** Inserts or overwrites; returns the row. */
  put(id: number, pageId: number, seq: number, host = '', published: number | null = null, collections?: readonly string[]): number {
    let row = this.position.get(id);
    if (row === undefined) {
      if (this.size === this.ids.length) this.grow();
      row = this.size++;
      this.position.set(id, row);
      this.ids[row] = id;
    }
    // The caller writes the row's vector next: its int8 copy is made again before the next search.
    this.store.changed(row);
    this.pageIds[row] = pageId;
    this.seqs[row] = seq;
    this.hosts[row] = host;
    this.collections[row] = collections;
    this.published[row] = published ?? Number.NaN;
    return row;
  }

  /** Removes by moving the last row into the hole; returns whether the id was present. */
  remove(id: number): boolean {
    const row = this.position.get(id);
    if (row === undefined) return false;
    const last = this.size - 1;
    if (row !== last) {
      const d = this.dimensions;
      this.matrix.copyWithin(row * d, last * d, last * d + d);
      this.store.changed(row);
      const lastId = this.ids[last]!;
      this.ids[row] = lastId;
      this.pageIds[row] = this.pageIds[last]!;
      this.seqs[row] = this.seqs[last]!;
      this.hosts[row] = this.hosts[last]!;
      this.collections[row] = this.collections[last];
      this.published[row] = this.published[last]!;
      this.position.set(lastId, row);
    }
    this.position.delete(id);
    this.hosts.length = last;
    this.collections.length = last;
    this.size = last;
    return true;
  }

  highestSeq(): number {
    let max = 0;
    for (let i = 0; i < this.size; i++) if (this.seqs[i]! > max) max = this.seqs[i]!;
    return max;
  }
}

/**
 * Candidate rows ordered best first: higher score, then lower id. A bounded binary heap keeps the best `k` while
 * scanning, so a search costs O(N log k) rather than sorting all N scores.
 */
function topK(scores: Float32Array, ids: Float64Array, n: number, k: number): number[] {
  const heap = new Int32Array(Math.min(k, n));
  let size = 0;
  // "a is worse than b": the heap root is the worst kept candidate.
  const worse = (a: number, b: number): boolean => {
    const sa = scores[a]!;
    const sb = scores[b]!;
    return sa < sb || (sa === sb && ids[a]! > ids[b]!);
  };
  const siftDown = (start: number): void => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) return;
      const right = left + 1;
      const worst = right < size && worse(heap[right]!, heap[left]!) ? right : left;
      if (!worse(heap[worst]!, heap[i]!)) return;
      const tmp = heap[i]!;
      heap[i] = heap[worst]!;
      heap[worst] = tmp;
      i = worst;
    }
  };
  for (let row = 0; row < n; row++) {
    if (size < heap.length) {
      let i = size++;
      heap[i] = row;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[parent]!)) break;
        const tmp = heap[i]!;
        heap[i] = heap[parent]!;
        heap[parent] = tmp;
        i = parent;
      }
    } else if (size > 0) {
      const root = heap[0]!;
      const s = scores[row]!;
      const rs = scores[root]!;
      if (s > rs || (s === rs && ids[row]! < ids[root]!)) {
        heap[0] = row;
        siftDown(0);
      }
    }
  }
  const out = Array.from(heap.subarray(0, size));
  out.sort((a, b) => scores[b]! - scores[a]! || ids[a]! - ids[b]!);
  return out;
}

/** The rows a filter's domain, date and collection parts let through, as a predicate; undefined when it has none. */
export function factsAllow(cache: VectorCache, filter: FactFilter | undefined): ((row: number) => boolean) | undefined {
  if (!hasFactFilter(filter)) return undefined;
  return (row) => {
    const published = cache.published[row]!;
    return factsPass(filter, cache.hosts[row] ?? '', Number.isNaN(published) ? null : published, cache.collections[row]);
  };
}

/**
 * Exact search over the cache: the dot product of the query with every row, then the best `limit` rows, at most
 * `perPage` of them from one page, best first (ties: lower id); only rows of `pageIds` when given, and only rows
 * `allow` lets through (domain and date filters, applied before the best are taken).
 */
export function exactSearch(
  cache: VectorCache,
  query: Float32Array,
  limit: number,
  perPage: number,
  pageIds?: readonly number[],
  allow?: (row: number) => boolean,
): VectorHit[] {
  if (!pageIds) {
    // Most rows pruned by the int8 first pass (pruned-scan.ts): the same answer from the float scores of the rest.
    const pruned = prunedSearch(cache, query, limit, perPage, allow);
    if (pruned) return pruned;
  }
  const scores = cache.store.scores(query, cache.size);
  if (!pageIds && allow) {
    // Rows the filter leaves out score -Infinity, so the best `limit` are taken among those that pass.
    for (let row = 0; row < cache.size; row++) if (!allow(row)) scores[row] = Number.NEGATIVE_INFINITY;
    return selectHits(cache, scores, limit, perPage).filter((hit) => hit.score !== Number.NEGATIVE_INFINITY);
  }
  if (pageIds) {
    // Every passage of these pages, best first (the scan scores all of them anyway).
    const pages = new Set(pageIds);
    const rows: number[] = [];
    for (let row = 0; row < cache.size; row++) if (pages.has(cache.pageIds[row]!) && (!allow || allow(row))) rows.push(row);
    rows.sort((a, b) => scores[b]! - scores[a]! || cache.ids[a]! - cache.ids[b]!);
    const cap = new PageCap(perPage);
    const out: VectorHit[] = [];
    for (const row of rows) {
      const pageId = cache.pageIds[row]!;
      if (!cap.take(pageId)) continue;
      out.push({ id: cache.ids[row]!, pageId, score: scores[row]! });
      if (out.length === limit) break;
    }
    return out;
  }
  return selectHits(cache, scores, limit, perPage);
}

/** The best `limit` rows, at most `perPage` of them from one page, best first (ties: lower id). */
export function selectHits(cache: VectorCache, scores: Float32Array, limit: number, perPage: number): VectorHit[] {
  const n = cache.size;
  const hit = (row: number): VectorHit => ({ id: cache.ids[row]!, pageId: cache.pageIds[row]!, score: scores[row]! });
  if (perPage >= limit) return topK(scores, cache.ids, n, limit).map(hit);
  // Take candidates best first, skipping pages already full. When the best `k` candidates do not fill `limit`
  // slots, the answer may lie deeper: widen k and select again (at most log2(N / limit) rounds).
  for (let k = limit * 4; ; k *= 2) {
    const candidates = topK(scores, cache.ids, n, k);
    const out = selectPerPage(candidates, limit, perPage, (row) => cache.pageIds[row]!).map(hit);
    if (out.length === limit || k >= n) return out;
  }
}
