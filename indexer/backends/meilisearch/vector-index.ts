import { collectionIdsOf, NotaryError } from '../../../core/index.js';
import { createHash } from 'node:crypto';
import type { Storage } from '../../../storage/index.js';
import type { PassageVector, VectorHit, VectorIndex, VectorIndexStats, VectorSearchOptions } from '../../vector-index.js';
import { checkedVectors, checkVector, vectorSearchBounds } from '../../vector-input.js';
import { dot, existingPassageIds, missingPassages, widenedSearch } from '../shared.js';
import type { MeilisearchConnection } from './connection.js';
import { chunks, DOC_FIELDS, domainAndDateFilter, filterString, ID_CHUNK, idsFilter, type PassageDocument } from './documents.js';
import { hostOf, hostSuffixes, publishedMs } from '../../filter-facts.js';
import { MAX_TOTAL_HITS } from './settings.js';

/** The host and date fields of a vector's passage when the vector brings them (else the passage's own stay). */
function domainAndDateFields(item: PassageVector): Pick<PassageDocument, 'host' | 'hostSuffixes' | 'publishedAt' | 'collections'> {
  const host = item.url ? hostOf(item.url) : null;
  const published = publishedMs(item.publishedAt);
  return {
    ...(host === null ? {} : { host, hostSuffixes: hostSuffixes(host) }),
    ...(published === null ? {} : { publishedAt: published }),
    collections: [...collectionIdsOf(item.collections)],
  };
}

/**
 * The first number of candidates a vector search asks for. The engine's time grows with it (7,442 passages, bench
 * machine: 59 ms of engine time for 240, 32 for 120, 18 for 60); with at most 3 passages a page, the 60th passage kept
 * was at rank 63–101 of 40 searches (bench/results/*meili*), so 1.5x the limit, widened when the cap leaves slots empty.
 */
export function firstK(limit: number, perPage: number): number {
  return perPage >= limit ? limit + 8 : Math.ceil(limit * 1.5);
}

/** How long the dot products of a vector search are taken as current by similarities(), and for how many vectors. */
const COMPUTED_MS = 5_000;
const COMPUTED_MAX = 256;

export interface MeilisearchVectorIndexOptions {
  model: string;
  dimensions: number;
}

/**
 * Passage vectors in the same Meilisearch documents as the passages, under a user-provided embedder named after
 * the model (so two models never mix), searched by Meilisearch's vector store (HNSW, approximate) through its hybrid
 * search with semanticRatio 1. The candidates are rescored exactly from their stored vectors, and passages that no
 * longer exist in storage are dropped (and their vectors removed), as the SQL cascade does for the other backends.
 */
export class MeilisearchVectorIndex implements VectorIndex {
  readonly name = 'meilisearch';
  readonly model: string;
  readonly dimensions: number;
  private readonly embedder: string;
  private readonly tag: string;

  private constructor(
    private readonly connection: MeilisearchConnection,
    private readonly storage: Storage,
    options: MeilisearchVectorIndexOptions,
  ) {
    if (!options.model) throw new NotaryError('invalid_config', 'vector index needs a model name');
    if (!Number.isInteger(options.dimensions) || options.dimensions <= 0) {
      throw new NotaryError('invalid_config', `vector dimensions must be a positive integer, got ${options.dimensions}`);
    }
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.tag = `${options.model}|${options.dimensions}`;
    this.embedder = `v_${createHash('sha256').update(this.tag).digest('hex').slice(0, 16)}`;
  }

  /**
   * The dot products recent searches computed, by query vector (a copy, compared whole), for similarities(): the
   * pipeline scores a search's candidates with the same vector right after it (search/pipeline.ts scoreNew), and those
   * the vector search returned need no request. Forgotten after COMPUTED_MS and on this index's writes; another
   * process's writes show after COMPUTED_MS at most (as the connection's recent passages).
   */
  private computed: Array<{ vector: Float32Array; at: number; scores: Map<number, number> }> = [];

  private remembered(vector: Float32Array): Map<number, number> | undefined {
    const now = Date.now();
    this.computed = this.computed.filter((c) => now - c.at <= COMPUTED_MS);
    return this.computed.find((c) => c.vector.length === vector.length && c.vector.every((x, i) => x === vector[i]))?.scores;
  }

  private remember(vector: Float32Array, hits: readonly VectorHit[]): void {
    const known = this.remembered(vector);
    if (known) {
      for (const h of hits) known.set(h.id, h.score);
      return;
    }
    if (this.computed.length >= COMPUTED_MAX) this.computed.shift();
    this.computed.push({ vector: Float32Array.from(vector), at: Date.now(), scores: new Map(hits.map((h) => [h.id, h.score])) });
  }

  static async open(connection: MeilisearchConnection, storage: Storage, options: MeilisearchVectorIndexOptions): Promise<MeilisearchVectorIndex> {
    const index = MeilisearchVectorIndex.attach(connection, storage, options);
    if (await connection.ensureIndex()) await connection.ensureEmbedder(index.embedder, index.dimensions);
    return index;
  }

  /** The index as it is, making nothing (no index, no embedder): for reading what it holds. */
  static attach(connection: MeilisearchConnection, storage: Storage, options: MeilisearchVectorIndexOptions): MeilisearchVectorIndex {
    return new MeilisearchVectorIndex(connection, storage, options);
  }

  private get index() {
    return this.connection.client.index<PassageDocument>(this.connection.options.index);
  }

  private get ofThisModel(): string {
    return `vector_model = ${filterString(this.tag)}`;
  }

  async upsert(items: readonly PassageVector[]): Promise<void> {
    const unique = checkedVectors(items, this.dimensions);
    this.computed = [];
    // One vector per passage, as in the SQL backends: writing this model's vector clears any other model's.
    const docs = unique.map((item) => ({
      id: item.id,
      pageId: item.pageId,
      ...domainAndDateFields(item),
      vector_model: this.tag,
      vector_norm: Math.sqrt(dot(item.vector, item.vector)),
      _vectors: { [this.embedder]: Array.from(item.vector) },
    }));
    for (const chunk of chunks(docs, this.connection.options.batchSize)) await this.connection.updateDocuments(this.connection.options.index, chunk, () => true, 'adding vectors');
  }

  /** Removes the vectors of these passages, whichever model wrote them (the passages' text stays). */
  async delete(ids: readonly number[]): Promise<void> {
    for (const id of ids) if (!Number.isSafeInteger(id)) throw new NotaryError('invalid_request', `passage id must be an integer, got ${id}`);
    const unique = [...new Set(ids)];
    if (unique.length === 0) return;
    this.computed = [];
    const embedders = await this.connection.embedderNames(this.connection.options.index, true);
    for (const chunk of chunks(unique, ID_CHUNK)) {
      const { results } = await this.connection.call('reading documents', () =>
        this.index.getDocuments({ filter: `${idsFilter(chunk)} AND vector_model EXISTS`, fields: ['id'], limit: chunk.length }),
      );
      if (results.length === 0) continue;
      const cleared = results.map((r) => ({ id: Number(r.id), vector_model: null, vector_norm: null, _vectors: Object.fromEntries(embedders.map((name) => [name, null])) }));
      await this.connection.wait(this.index.updateDocuments(cleared), 'removing vectors');
    }
  }

  async vectors(ids: readonly number[]): Promise<Map<number, Float32Array>> {
    for (const id of ids) if (!Number.isSafeInteger(id)) throw new NotaryError('invalid_request', `passage id must be an integer, got ${id}`);
    const out = new Map<number, Float32Array>();
    for (const chunk of chunks([...new Set(ids)], ID_CHUNK)) {
      const { results } = await this.connection.call('reading vectors', () =>
        this.index.getDocuments({ filter: `${idsFilter(chunk)} AND ${this.ofThisModel}`, fields: ['id'], retrieveVectors: true, limit: chunk.length }),
      );
      for (const r of results) {
        const v = this.vectorOf(r);
        if (v) out.set(Number(r.id), v);
      }
    }
    return out;
  }

  private vectorOf(doc: PassageDocument): Float32Array | null {
    const entry = doc._vectors?.[this.embedder] as { embeddings?: number[][] } | undefined;
    const embedding = entry?.embeddings?.[0];
    return embedding && embedding.length === this.dimensions ? Float32Array.from(embedding) : null;
  }

  /**
   * Dot products with these passages' vectors from one vector search restricted to them (the engine's similarity and
   * the stored norms, as in search()), instead of sending their vectors back: 5 ms of the engine's CPU and 3 kB for
   * 30 passages where reading their vectors takes 22 ms and 244 kB (bench index, issue 34). Passages the engine
   * leaves out (no vector of this model, or an approximate miss) and vectors without a stored norm are read.
   */
  async similarities(vector: Float32Array, ids: readonly number[]): Promise<Map<number, number>> {
    const query = checkVector(vector, this.dimensions, 'query vector');
    for (const id of ids) if (!Number.isSafeInteger(id)) throw new NotaryError('invalid_request', `passage id must be an integer, got ${id}`);
    const queryNorm = Math.sqrt(dot(query, query));
    const out = new Map<number, number>();
    const known = this.remembered(query);
    const asked = [...new Set(ids)].filter((id) => {
      const score = known?.get(id);
      if (score !== undefined) out.set(id, score);
      return score === undefined;
    });
    for (const chunk of chunks(asked, ID_CHUNK)) {
      const response = await this.connection.call('vector similarities', () =>
        this.index.search('', {
          vector: Array.from(query),
          hybrid: { embedder: this.embedder, semanticRatio: 1 },
          filter: `${idsFilter(chunk)} AND ${this.ofThisModel}`,
          limit: chunk.length,
          showRankingScore: true,
          attributesToRetrieve: ['id', 'vector_norm'],
        }),
      );
      for (const h of response.hits) {
        if (typeof h.vector_norm === 'number' && typeof h._rankingScore === 'number') out.set(Number(h.id), (2 * h._rankingScore - 1) * h.vector_norm * queryNorm);
      }
      const unscored = chunk.filter((id) => !out.has(id));
      if (unscored.length > 0) for (const [id, v] of await this.vectors(unscored)) out.set(id, dot(v, query));
    }
    return out;
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]> {
    const query = checkVector(vector, this.dimensions, 'query vector');
    const { limit, perPage } = vectorSearchBounds(options);
    if (limit <= 0 || (options.pageIds && options.pageIds.length === 0)) return [];
    const asked = Array.from(query);
    const queryNorm = Math.sqrt(dot(query, query));
    return widenedSearch(limit, perPage, MAX_TOTAL_HITS, async (k) => {
      const response = await this.connection.call('vector search', () =>
        this.index.search('', {
          vector: asked,
          hybrid: { embedder: this.embedder, semanticRatio: 1 },
          filter: [
            this.ofThisModel,
            ...(options.pageIds ? [`pageId IN [${options.pageIds.filter((id) => Number.isSafeInteger(id)).join(', ')}]`] : []),
            ...domainAndDateFilter(options.filter),
          ].join(' AND '),
          limit: k,
          showRankingScore: true,
          attributesToRetrieve: [...DOC_FIELDS, 'vector_norm'],
        }),
      );
      // The engine's similarity is (1 + cosine) / 2 (f32); with the norms of both vectors it is their dot product,
      // without sending the vectors back. Vectors written before their norm was kept are read and scored here.
      this.connection.remember(this.connection.options.index, response.hits);
      const candidates: VectorHit[] = [];
      const unnormed: Array<{ id: number; pageId: number }> = [];
      for (const h of response.hits) {
        const norm = h.vector_norm;
        if (typeof norm === 'number' && typeof h._rankingScore === 'number') {
          candidates.push({ id: Number(h.id), pageId: Number(h.pageId), score: (2 * h._rankingScore - 1) * norm * queryNorm });
        } else unnormed.push({ id: Number(h.id), pageId: Number(h.pageId) });
      }
      if (unnormed.length > 0) {
        const stored = await this.vectors(unnormed.map((h) => h.id));
        for (const h of unnormed) {
          const v = stored.get(h.id);
          if (v) candidates.push({ ...h, score: dot(v, query) });
        }
      }
      // Passages removed from storage behind the index's back (the SQL backends' cascade) are dropped here.
      const alive = await existingPassageIds(this.storage, candidates.map((c) => c.id));
      const gone = candidates.filter((c) => !alive.has(c.id)).map((c) => c.id);
      if (gone.length > 0) await this.delete(gone);
      const kept = candidates.filter((c) => alive.has(c.id));
      this.remember(query, kept);
      return { candidates: kept, exhausted: response.hits.length < k };
    }, firstK(limit, perPage));
  }

  async missing(limit: number): Promise<number[]> {
    return missingPassages(this.storage, limit, async (ids) => {
      const { results } = await this.connection.call('reading documents', () =>
        this.index.getDocuments({ filter: `${idsFilter(ids)} AND ${this.ofThisModel}`, fields: ['id'], limit: ids.length }),
      );
      return new Set(results.map((r) => Number(r.id)));
    });
  }

  /** Vectors of this model whose passage exists in storage (a full pass over the ids), and vectors of other models. */
  async stats(): Promise<VectorIndexStats> {
    const ids = await this.idsWhere(this.ofThisModel);
    const alive = await existingPassageIds(this.storage, ids);
    const others = await this.connection.call('counting vectors', () =>
      this.index.search('', { filter: `vector_model EXISTS AND NOT ${this.ofThisModel}`, hitsPerPage: 0, page: 1 }),
    );
    return { backend: this.name, model: this.model, dimensions: this.dimensions, vectors: alive.size, stale: others.totalHits ?? 0 };
  }

  private async idsWhere(filter: string): Promise<number[]> {
    const out: number[] = [];
    for (let offset = 0; ; offset += MAX_TOTAL_HITS) {
      const { results } = await this.connection.call('reading document ids', () => this.index.getDocuments({ filter, fields: ['id'], limit: MAX_TOTAL_HITS, offset }));
      for (const r of results) out.push(Number(r.id));
      if (results.length < MAX_TOTAL_HITS) return out;
    }
  }

  async close(): Promise<void> {}
}
