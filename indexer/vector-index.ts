import type { IndexFilter } from './search-index.js';

/** A passage's embedding: unit length, `dimensions` long. `id` is the passage id from storage (passages.id). */
export interface PassageVector {
  id: number;
  pageId: number;
  vector: Float32Array;
  /** The passage's URL (its host is what domain filters read); absent: the vector passes no domain filter's include list. */
  url?: string;
  /** The page's publication date (ISO 8601), as IndexDoc.publishedAt. */
  publishedAt?: string;
  /** The page's collection ids, as IndexDoc.collections (absent: the default collection). */
  collections?: readonly string[];
}

export interface VectorHit {
  id: number;
  pageId: number;
  /** Cosine similarity with the query vector, -1..1 (both are unit vectors, so the dot product). */
  score: number;
}

export interface VectorSearchOptions {
  limit: number;
  /** Return at most this many passages from one page (default: unlimited). */
  perPageLimit?: number;
  /** Only passages of these pages. */
  pageIds?: readonly number[];
  /** Domain, date and collection filters, applied inside the search (the count asked for is returned when enough vectors pass). */
  filter?: Pick<IndexFilter, 'includeHosts' | 'excludeHosts' | 'published' | 'collections'>;
}

export interface VectorIndexStats {
  backend: string;
  /** The embedding model this index is bound to. */
  model: string;
  dimensions: number;
  /** Vectors of this model. */
  vectors: number;
  /** Vectors stored by another model (ignored by search; replaced as passages are embedded again). */
  stale: number;
}

/**
 * Passage embeddings of one model beside the full-text index, searched exactly (every vector is compared). Bound to
 * one model at construction: vectors written by another model are never returned. Backends: SQL (SQLite and
 * PostgreSQL through Kysely); all pass indexer/vector-index.contract.ts.
 */
export interface VectorIndex {
  readonly name: string;
  readonly model: string;
  readonly dimensions: number;
  /** Inserts or replaces. A vector of the wrong length is an invalid_request error and nothing is written. */
  upsert(items: readonly PassageVector[]): Promise<void>;
  delete(ids: readonly number[]): Promise<void>;
  /** Stored vectors of this model for the given passage ids (missing ids are absent from the map). */
  vectors(ids: readonly number[]): Promise<Map<number, Float32Array>>;
  /**
   * Optional: the dot products of `vector` with the stored vectors of these passages (those without a vector of this
   * model are absent), computed where the vectors are kept, for an index that would otherwise send each vector back
   * (a search engine; issue 34). Equal to dot(vector, vectors(ids)[id]) up to float rounding.
   */
  similarities?(vector: Float32Array, ids: readonly number[]): Promise<Map<number, number>>;
  /** Best first by cosine; ties by lower id. */
  search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]>;
  /** Passage ids in storage that have no vector of this model yet, lowest first. */
  missing(limit: number): Promise<number[]>;
  stats(): Promise<VectorIndexStats>;
  close(): Promise<void>;
}
