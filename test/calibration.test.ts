/**
 * Calibrated rerank_score with the real-weight bi-encoder (../shared/models/all-MiniLM-L6-v2) and the calibration the
 * product ships (search/calibrations.json, found by the model's .onnx sha256): over a small corpus of database pages,
 * an answerable question's answer scores at or above CALIBRATED_THRESHOLD and an aerodynamics question's best result
 * below it; the order of a list is the fused order, whatever the calibration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema, type NotaryConfig } from '../core/config.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import { Indexer } from '../indexer/indexer.js';
import { SqlVectorIndex } from '../indexer/sql-vector-index.js';
import type { Embedder } from '../reranker/embedder.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { htmlPageFetched, PageStore } from '../storage/pages.js';
import { CALIBRATED_THRESHOLD, calibrationFor } from '../search/calibration.js';
import { SearchPipeline } from '../search/pipeline.js';
import { fileAvailable } from '../testkit/components.js';
import { biEncoderDir } from '../testkit/models.js';

const PAGES: Record<string, string> = {
  vacuum:
    'VACUUM reclaims storage occupied by dead tuples. In normal PostgreSQL operation, tuples that are deleted or obsoleted by an update are not physically removed from their table; they remain present until a VACUUM is done. Therefore it is necessary to do VACUUM periodically, especially on frequently-updated tables.',
  checkpoint:
    'A checkpoint is a point in the write-ahead log sequence at which all data files have been updated to reflect the information in the log. All data files will be flushed to disk. The checkpoint_timeout and max_wal_size settings control how often checkpoints happen.',
  replication:
    'Streaming replication allows a standby server to stay more up-to-date than is possible with file-based log shipping. The standby connects to the primary, which streams WAL records to the standby as they are generated, without waiting for the WAL file to be filled.',
  index:
    'CREATE INDEX constructs an index on the specified column(s) of the specified relation, which can be a table or a materialized view. Indexes are primarily used to enhance database performance. B-tree, hash, GiST, SP-GiST, GIN and BRIN index methods are available.',
  roles:
    'PostgreSQL manages database access permissions using the concept of roles. A role can be thought of as either a database user, or a group of database users. Roles can own database objects and can assign privileges on those objects to other roles with GRANT.',
  json:
    'PostgreSQL offers two types for storing JSON data: json and jsonb. The json data type stores an exact copy of the input text, while jsonb data is stored in a decomposed binary format that makes it slightly slower to input but significantly faster to process.',
};

/** A Cranfield-style question: a few of its words are in the corpus (data, table, index...), its subject is not. */
const OFF_TOPIC = 'what data are available on the heat transfer in a flow of gas through tubes at high pressure';

const modelPresent = fileAvailable('the real-weight bi-encoder (../shared/models/all-MiniLM-L6-v2)', path.join(biEncoderDir, 'onnx', 'model.onnx'));

describe.runIf(modelPresent)('calibrated rerank_score with the real bi-encoder', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-calibration-it-'));
  let storage: Storage;
  let index: Fts5SearchIndex;
  let vectors: SqlVectorIndex;
  let model: OnnxReranker;
  let embedder: Embedder;
  const search: NotaryConfig['search'] = { ...configSchema.parse({}).search, max_results: 10 };

  beforeAll(async () => {
    storage = openSqlite(path.join(dir, 'storage.sqlite'));
    await migrateToLatest(storage);
    const pages = new PageStore(storage.db);
    index = new Fts5SearchIndex(storage.sqlite!);
    model = await OnnxReranker.load(biEncoderDir, { threads: 1, batchSize: 8, maxSeqLength: 256, source: 'test' });
    embedder = await model.embedder();
    vectors = new SqlVectorIndex(storage, { model: embedder.model, dimensions: embedder.dimensions });
    for (const [name, text] of Object.entries(PAGES)) {
      const html = `<html><head><title>PostgreSQL: ${name}</title></head><body><h1>${name}</h1><p>${text}</p></body></html>`;
      await pages.saveFetched(htmlPageFetched(`http://docs.test/${name}.html`, html));
    }
    await new Indexer({ pages, index, config: { backend: 'sqlite-fts5', passage_min_words: 10, passage_max_words: 120 }, vectors: { index: vectors, embedder } }).runOnce();
  });
  afterAll(async () => {
    await vectors?.close();
    await model?.close();
    await index?.close();
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const pipeline = (calibrated: boolean): SearchPipeline =>
    new SearchPipeline({
      index,
      reranker: model,
      config: search,
      dense: { index: vectors, embedder, scoresFromVectors: true },
      ...(calibrated ? {} : { calibration: async () => null }),
    });

  it('ships a calibration for this model', async () => {
    expect(await calibrationFor(model)).not.toBeNull();
  });

  it('scores an answer above the threshold and an out-of-corpus question\'s best result below it, in the fused order', async () => {
    const served = pipeline(true);
    const answer = await served.search({ query: 'how does vacuum reclaim storage from dead tuples', depth: 1 });
    expect(answer.results[0]?.url).toBe('http://docs.test/vacuum.html');
    expect(answer.results[0]!.rerank_score).toBeGreaterThanOrEqual(CALIBRATED_THRESHOLD);

    const offTopic = await served.search({ query: OFF_TOPIC, depth: 1 });
    expect(offTopic.results.length).toBeGreaterThan(0);
    expect(offTopic.results[0]!.rerank_score).toBeLessThan(CALIBRATED_THRESHOLD);

    for (const outcome of [answer, offTopic]) {
      const scores = outcome.results.map((r) => r.rerank_score);
      for (const s of scores) expect(s >= 0 && s <= 1).toBe(true);
      for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeLessThanOrEqual(scores[i - 1]!);
    }
  });

  it('changes no order: the uncalibrated pipeline returns the same URLs in the same order', async () => {
    for (const query of ['how does vacuum reclaim storage from dead tuples', OFF_TOPIC, 'jsonb binary format']) {
      const a = await pipeline(true).search({ query, depth: 1 });
      const b = await pipeline(false).search({ query, depth: 1 });
      expect(a.results.map((r) => r.url)).toEqual(b.results.map((r) => r.url));
      expect(b.scoring?.calibrated).toBe(false);
      expect(a.scoring?.calibrated).toBe(true);
    }
    // Uncalibrated (before issue 29 item 3), the off-topic question's best result looked like an answer.
    const before = await pipeline(false).search({ query: OFF_TOPIC, depth: 1 });
    expect(before.results[0]!.rerank_score).toBeGreaterThanOrEqual(CALIBRATED_THRESHOLD);
  });
});

describe('an operator calibration file (NOTARY_CALIBRATION_FILE)', () => {
  it('that cannot be read stops the start with invalid_config naming the variable, before any search', async () => {
    const { writeFileSync } = await import('node:fs');
    const { Runtime } = await import('../runtime/index.js');
    const folder = mkdtempSync(path.join(tmpdir(), 'notary-calibration-start-'));
    try {
      const bad = path.join(folder, 'calibrations.json');
      writeFileSync(bad, '{"calibrations": [{"model": "x"}]}');
      const config = configSchema.parse({ data_dir: folder, reranker: { download: false }, embeddings: { model: 'off' } });
      await expect(Runtime.open(config, { env: { NOTARY_CALIBRATION_FILE: bad } })).rejects.toThrow(/NOTARY_CALIBRATION_FILE/);
      await expect(Runtime.open(config, { env: { NOTARY_CALIBRATION_FILE: path.join(folder, 'missing.json') } })).rejects.toMatchObject({ code: 'invalid_config' });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
