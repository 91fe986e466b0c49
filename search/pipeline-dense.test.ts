import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema, type NotaryConfig } from '../core/config.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import { Indexer } from '../indexer/indexer.js';
import { passageModelText } from '../indexer/search-index.js';
import { SqlVectorIndex } from '../indexer/sql-vector-index.js';
import type { Embedder } from '../reranker/embedder.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { cosineToUnit, dot } from '../reranker/pooling.js';
import type { Reranker } from '../reranker/reranker.js';
import { tinyModelDir } from '../testkit/models.js';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { htmlPageFetched, PageStore } from '../storage/pages.js';
import { SearchPipeline } from './pipeline.js';
import { rocchio } from './reflection-pass.js';
import type { DenseRetrieval } from './request-state.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-pipeline-dense-'));
let storage: Storage;
let index: Fts5SearchIndex;
let vectors: SqlVectorIndex;
let model: OnnxReranker;
let embedder: Embedder;

/** The real model, counting the passages it is asked to score. */
class CountingReranker implements Reranker {
  scoredPassages = 0;
  constructor(private readonly inner: OnnxReranker) {}
  get info() {
    return this.inner.info;
  }
  async score(query: string, passages: readonly string[]): Promise<number[]> {
    this.scoredPassages += passages.length;
    return this.inner.score(query, passages);
  }
  async close(): Promise<void> {}
}

const TOPICS = ['autovacuum', 'checkpoint', 'replication', 'tablespace', 'collation', 'sequence', 'trigger', 'partition'];

beforeAll(async () => {
  storage = openSqlite(path.join(dir, 'storage.sqlite'));
  await migrateToLatest(storage);
  const pages = new PageStore(storage.db);
  index = new Fts5SearchIndex(storage.sqlite!);
  model = await OnnxReranker.load(tinyModelDir('bi-encoder', dir), { threads: 1, batchSize: 8, maxSeqLength: 128, source: 'test' });
  embedder = await model.embedder();
  vectors = new SqlVectorIndex(storage, { model: embedder.model, dimensions: embedder.dimensions });
  for (const [i, topic] of TOPICS.entries()) {
    const body = Array.from({ length: 40 }, (_, w) => (w % 6 === 0 ? topic : `filler${(w * (i + 3)) % 17}`)).join(' ');
    const html = `<html><head><title>${topic} guide</title></head><body><h1>${topic} guide</h1><p>${body}.</p></body></html>`;
    const url = `http://d.test/${topic}`;
    await pages.saveFetched(htmlPageFetched(url, html));
  }
  await new Indexer({
    pages,
    index,
    config: { backend: 'sqlite-fts5', passage_min_words: 10, passage_max_words: 80 },
    vectors: { index: vectors, embedder },
  }).runOnce();
});
afterAll(async () => {
  await vectors.close();
  await model.close();
  await index.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

const searchConfig = (over: Partial<NotaryConfig['search']> = {}): NotaryConfig['search'] => ({ ...configSchema.parse({}).search, max_results: 20, ...over });
const dense = (scoresFromVectors: boolean): DenseRetrieval => ({ index: vectors, embedder, scoresFromVectors });

describe('SearchPipeline with dense retrieval (real SQLite, FTS5, vectors and ONNX bi-encoder)', () => {
  it('finds passages by vector alone when no query word is in the index', async () => {
    const reranker = new CountingReranker(model);
    const query = 'zzyzx quokka';
    const bm25 = new SearchPipeline({ index, reranker, config: searchConfig() });
    expect((await bm25.search({ query, depth: 1 })).results).toEqual([]);
    const hybrid = new SearchPipeline({ index, reranker, config: searchConfig(), dense: dense(true) });
    expect(hybrid.retrieval).toBe(`hybrid (bm25 + ${embedder.model})`);
    const outcome = await hybrid.search({ query, depth: 1 });
    expect(outcome.results.length).toBe(TOPICS.length);
    // Without full-text evidence the order is the vectors' order.
    const [queryVector] = await embedder.embed([query]);
    const nearest = await vectors.search(queryVector!, { limit: 1 });
    const [doc] = await index.get([nearest[0]!.id]);
    expect(outcome.results[0]?.url).toBe(doc?.url);
  });

  it('embeds a repeated query once (search.query_vector_cache), and every time with the cache off', async () => {
    const counted = (): Embedder & { texts: number } => {
      const wrapper = {
        model: embedder.model,
        dimensions: embedder.dimensions,
        texts: 0,
        embed: async (texts: readonly string[]) => {
          wrapper.texts += texts.length;
          return embedder.embed(texts);
        },
      };
      return wrapper;
    };
    const reranker = new CountingReranker(model);
    const cachedEmbedder = counted();
    const cached = new SearchPipeline({ index, reranker, config: searchConfig(), dense: { index: vectors, embedder: cachedEmbedder, scoresFromVectors: true } });
    const first = await cached.search({ query: 'replication guide', depth: 1 });
    const again = await cached.search({ query: 'replication guide', depth: 1 });
    await cached.search({ query: 'collation guide', depth: 1 });
    expect(cachedEmbedder.texts).toBe(2);
    expect(again.results).toEqual(first.results);
    const uncachedEmbedder = counted();
    const uncached = new SearchPipeline({
      index,
      reranker,
      config: searchConfig({ query_vector_cache: 0 }),
      dense: { index: vectors, embedder: uncachedEmbedder, scoresFromVectors: true },
    });
    await uncached.search({ query: 'replication guide', depth: 1 });
    await uncached.search({ query: 'replication guide', depth: 1 });
    expect(uncachedEmbedder.texts).toBe(2);
  });

  it('scores candidates from stored vectors without running the model per passage, with the model\'s own scores', async () => {
    const query = 'checkpoint guide';
    const fromVectors = new CountingReranker(model);
    const stored = await new SearchPipeline({ index, reranker: fromVectors, config: searchConfig(), dense: dense(true) }).search({ query, depth: 1 });
    expect(stored.timings.reranked).toBeGreaterThan(0);
    expect(fromVectors.scoredPassages).toBe(0);

    const byModel = new CountingReranker(model);
    const modelRun = await new SearchPipeline({ index, reranker: byModel, config: searchConfig(), dense: dense(false) }).search({ query, depth: 1 });
    expect(byModel.scoredPassages).toBe(modelRun.timings.reranked);
    expect(modelRun.results.map((r) => r.url)).toEqual(stored.results.map((r) => r.url));
    stored.results.forEach((r, i) => expect(r.rerank_score).toBeCloseTo(modelRun.results[i]?.rerank_score ?? -1, 5));
  });

  it('a stored vector scores what the model scores for the passage text', async () => {
    const [hit] = await index.search('trigger', { limit: 1 });
    const [queryVector] = await embedder.embed(['trigger guide']);
    const stored = (await vectors.vectors([hit!.id])).get(hit!.id)!;
    const [modelScore] = await model.score('trigger guide', [passageModelText(hit!)]);
    expect(cosineToUnit(dot(queryVector!, stored))).toBeCloseTo(modelScore!, 5);
  });

  it('depth 2 searches the vectors again with a query moved towards the feedback passages', async () => {
    const reranker = new CountingReranker(model);
    const pipeline = new SearchPipeline({ index, reranker, config: searchConfig({ rerank_top_n: 3 }), dense: dense(true) });
    const outcome = await pipeline.search({ query: 'replication guide', depth: 2 });
    expect(outcome.timings.passes).toHaveLength(2);
    expect(outcome.timings.passes[1]).toMatchObject({ depth: 2, dense_feedback: true });
    // One vector search with the refined query (the full-text queries of the first pass are cached).
    expect(outcome.timings.passes[1]?.queries).toBeGreaterThanOrEqual(1);
    const scores = outcome.results.map((r) => r.rerank_score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));

    const off = new SearchPipeline({
      index,
      reranker,
      config: searchConfig({ rerank_top_n: 3 }),
      dense: dense(true),
      options: { reflection: { denseFeedbackWeight: 0 } },
    });
    expect((await off.search({ query: 'replication guide', depth: 2 })).timings.passes[1]?.dense_feedback).toBe(false);
  });

  it('drops vector hits whose passage is no longer in the full-text index', async () => {
    const [hit] = await index.search('partition', { limit: 1 });
    const [doc] = await index.get([hit!.id]);
    await index.delete([hit!.id]);
    try {
      const outcome = await new SearchPipeline({ index, reranker: new CountingReranker(model), config: searchConfig(), dense: dense(true) }).search({
        query: 'partition guide',
        depth: 1,
      });
      // The page had this one passage, and its vector is still stored.
      expect((await vectors.vectors([hit!.id])).size).toBe(1);
      expect(outcome.results.map((r) => r.url)).not.toContain(doc?.url);
      expect(outcome.results.length).toBe(TOPICS.length - 1);
      expect(outcome.timings.passes[0]?.reranked).toBeGreaterThan(0);
    } finally {
      await index.upsert([doc!]);
    }
  });
});

describe('rocchio', () => {
  const unit = (...xs: number[]) => Float32Array.from(xs.map((x) => x / Math.hypot(...xs)));
  it('moves the query towards the weighted mean of the feedback and stays unit length', () => {
    const moved = rocchio(unit(1, 0), [{ vector: unit(0, 1), weight: 1 }], 1)!;
    expect(Math.hypot(...moved)).toBeCloseTo(1, 6);
    expect(moved[0]).toBeCloseTo(Math.SQRT1_2, 6);
    expect(moved[1]).toBeCloseTo(Math.SQRT1_2, 6);
    const weighted = rocchio(unit(1, 0), [{ vector: unit(0, 1), weight: 3 }, { vector: unit(0, -1), weight: 1 }], 0.5)!;
    expect(weighted[1]).toBeGreaterThan(0);
    expect(weighted[0]).toBeGreaterThan(weighted[1]!);
  });
  it('returns null without positive feedback weight', () => {
    expect(rocchio(unit(1, 0), [], 1)).toBeNull();
    expect(rocchio(unit(1, 0), [{ vector: unit(0, 1), weight: 0 }], 1)).toBeNull();
  });
});
