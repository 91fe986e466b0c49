/**
 * Relevance regression with the real-weight model from ../shared (all-MiniLM-L6-v2, fp32): Cranfield 1400 indexed the
 * way web pages are, every passage embedded, all 225 queries through the search pipeline as shipped (hybrid retrieval,
 * page-level evidence), beside the two BM25 references. Floors sit a little under what was measured on 2026-11-23
 * (bench/results/eval-search-2026-11-23-minilm-cranfield*.json), so a change that hurts ranking fails here. Embedding the
 * 1,400 documents is most of its time (about a minute on 2 quiet cores).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../core/config.js';
import { buildCranfieldIndex, cranfieldDir, judgmentsFor, loadCranfield, type CranfieldIndex } from '../bench/eval/cranfield.js';
import { pageBm25Ranker, storedPageDocuments } from '../bench/eval/page-bm25.js';
import { bm25Ranker, evalSearchConfig, evaluateRankers, pipelineRanker, type RankedRow } from '../bench/eval/run.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { fileAvailable } from '../testkit/components.js';
import { biEncoderDir } from '../testkit/models.js';

/** Measured nDCG@10 / MRR@10 on 2026-11-23 (bm25 0.372/0.531, page_bm25 0.369/0.530, depth 1 0.424/0.569, depth 2 0.437/0.560) minus a margin. */
const FLOORS = {
  bm25: { ndcg_10: 0.36, mrr_10: 0.515 },
  page_bm25: { ndcg_10: 0.355, mrr_10: 0.515 },
  depth1: { ndcg_10: 0.41, mrr_10: 0.55 },
  depth2: { ndcg_10: 0.42, mrr_10: 0.54 },
};

const modelPresent = fileAvailable('the real-weight bi-encoder (../shared/models/all-MiniLM-L6-v2)', path.join(biEncoderDir, 'onnx', 'model.onnx'));

describe.runIf(modelPresent)('Cranfield 1400 with the real-weight model', () => {
  let built: CranfieldIndex;
  let model: OnnxReranker;
  let rows: Map<'bm25' | 'page_bm25' | 'depth1' | 'depth2', RankedRow>;
  const config = configSchema.parse({});

  beforeAll(async () => {
    model = await OnnxReranker.load(biEncoderDir, { threads: 2, batchSize: 32, maxSeqLength: config.reranker.max_seq_length, source: 'test' });
    const embedder = await model.embedder();
    const collection = loadCranfield(cranfieldDir());
    built = await buildCranfieldIndex(collection.docs, config.indexer, { dense: { embedder, scoresFromVectors: true } });
    const pipeline = built.runtime.searchPipeline({ reranker: model, search: evalSearchConfig(config.search), dense: built.dense });
    const queries = collection.queries.map((q) => ({ id: String(q.id), text: q.text, judgments: judgmentsFor(collection, q.id) }));
    rows = await evaluateRankers(
      queries,
      [
        { name: 'bm25' as const, ranker: bm25Ranker(built.index) },
        { name: 'page_bm25' as const, ranker: pageBm25Ranker(await storedPageDocuments(built.storage.db)) },
        { name: 'depth1' as const, ranker: pipelineRanker(pipeline, 1) },
        { name: 'depth2' as const, ranker: pipelineRanker(pipeline, 2) },
      ],
      (url) => url,
      { warmup: 0 },
    );
  });

  afterAll(async () => {
    await built?.close();
    await model?.close();
  });

  it('embeds every passage', async () => {
    expect(built.dense).toBeDefined();
    expect((await built.dense!.index.stats()).vectors).toBe(built.passages);
  });

  it('keeps every row above its floors, and the model above both BM25 references', () => {
    const summary = Object.fromEntries([...rows].map(([name, row]) => [name, { ndcg_10: row.metrics.ndcg_10, mrr_10: row.metrics.mrr_10 }]));
    console.info(`cranfield with the model: ${JSON.stringify(summary)}`);
    for (const [name, floor] of Object.entries(FLOORS) as Array<[keyof typeof FLOORS, { ndcg_10: number; mrr_10: number }]>) {
      const row = rows.get(name);
      expect(row?.queries).toBe(225);
      expect(row?.metrics.ndcg_10, `${name} nDCG@10`).toBeGreaterThanOrEqual(floor.ndcg_10);
      expect(row?.metrics.mrr_10, `${name} MRR@10`).toBeGreaterThanOrEqual(floor.mrr_10);
    }
    expect(rows.get('depth1')!.metrics.ndcg_10).toBeGreaterThan(rows.get('page_bm25')!.metrics.ndcg_10);
    expect(rows.get('depth1')!.metrics.ndcg_10).toBeGreaterThan(rows.get('bm25')!.metrics.ndcg_10);
  });
});
