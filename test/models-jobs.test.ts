import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServeApp } from '../cli/serve.js';
import { collectStatus } from '../cli/status.js';
import { configSchema, type NotaryConfig } from '../core/config.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import type { Reranker } from '../reranker/reranker.js';
import { assignmentLines, Runtime, type ModelAssignment } from '../runtime/index.js';
import { CrossEncoderStage, crossEncoderStageOptions, crossEncoderText } from '../search/cross-encoder.js';
import { fileAvailable, sharedDir } from '../testkit/components.js';
import { htmlPageFetched } from '../storage/pages.js';

/**
 * Two models, two jobs, with the real models of ../shared: the bi-encoder (all-MiniLM-L6-v2, real weights) embeds and
 * scores depth 1; the cross-encoder (ms-marco-MiniLM-L-6-v2's architecture with RANDOM int8 weights: its scores mean
 * nothing, so this checks wiring only) gives rerank_score from search.cross_encoder_from_depth on.
 */
const biDir = path.join(sharedDir, 'models', 'all-MiniLM-L6-v2');
const crossDir = path.join(sharedDir, 'models', 'ms-marco-MiniLM-L-6-v2');
const present = fileAvailable('the bi-encoder', path.join(biDir, 'onnx', 'model.onnx')) && fileAvailable('the cross-encoder', path.join(crossDir, 'tokenizer.json'));

const QUERY = 'how does autovacuum remove dead tuples';
const PAGES: Array<{ slug: string; title: string; paragraphs: string[] }> = [
  {
    slug: 'autovacuum',
    title: 'The Autovacuum Daemon',
    paragraphs: [
      'The autovacuum daemon automates the execution of VACUUM and ANALYZE commands. It checks for tables that have had a large number of inserted, updated or deleted tuples.',
      'Dead tuples left behind by updates and deletes are removed by vacuum so that their space can be reused by new rows in the same table.',
    ],
  },
  {
    slug: 'vacuum',
    title: 'Routine Vacuuming',
    paragraphs: [
      'VACUUM reclaims storage occupied by dead rows. Table bloat grows when dead row versions are not reclaimed often enough.',
      'The visibility map lets vacuum skip pages that hold only rows visible to every transaction, which makes repeated vacuuming cheap.',
    ],
  },
  {
    slug: 'wal',
    title: 'Write-Ahead Logging',
    paragraphs: ['Write-ahead logging makes sure that changes to data files are written only after those changes have been logged and flushed to durable storage.'],
  },
  {
    slug: 'checkpoints',
    title: 'Checkpoints',
    paragraphs: ['A checkpoint is a point in the write-ahead log sequence at which all data files have been updated to reflect the information in the log.'],
  },
  {
    slug: 'indexes',
    title: 'Index Types',
    paragraphs: ['B-tree indexes handle equality and range queries on data that can be sorted. Hash indexes store a hash code of the indexed value.'],
  },
];

/** The real model, recording what it is asked (queries and texts) and what it answered. */
class RecordingReranker implements Reranker {
  readonly calls: Array<{ query: string; passages: string[]; scores: number[] }> = [];
  constructor(private readonly inner: Reranker) {}
  get info() {
    return this.inner.info;
  }
  async score(query: string, passages: readonly string[]): Promise<number[]> {
    const scores = await this.inner.score(query, passages);
    this.calls.push({ query, passages: [...passages], scores });
    return scores;
  }
  async close(): Promise<void> {}
}

let dir: string;
let config: NotaryConfig;
let runtime: Runtime;

beforeAll(async () => {
  if (!present) return;
  dir = mkdtempSync(path.join(tmpdir(), 'notary-models-jobs-'));
  config = configSchema.parse({
    data_dir: dir,
    reranker: { model_dir: crossDir, download: false, workers: 1 },
    embeddings: { model: biDir },
    indexer: { passage_min_words: 10, passage_max_words: 40 },
    search: { max_depth: 3, rerank_top_n: 2 },
  });
  runtime = await Runtime.open(config, { log: () => {}, env: {} });
  for (const page of PAGES) {
    const url = `http://docs.test/${page.slug}`;
    const html = `<html><head><title>${page.title}</title></head><body><h1>${page.title}</h1>${page.paragraphs.map((p) => `<p>${p}</p>`).join('')}</body></html>`;
    await runtime.pages.saveFetched(htmlPageFetched(url, html));
  }
  const { dense } = await runtime.dense();
  await runtime.indexer(dense).runOnce();
}, 120_000);

afterAll(async () => {
  await runtime?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(present)('two models, two jobs (real bi-encoder and cross-encoder from ../shared)', () => {
  it('assigns the bi-encoder to retrieval and depth 1 and the cross-encoder to depth 2 on, and says why', async () => {
    const scorers = await runtime.scorers();
    expect(scorers.passes).toBeInstanceOf(OnnxReranker);
    expect(scorers.passes.info.kind).toBe('bi-encoder');
    expect(scorers.crossEncoder?.model.info.kind).toBe('cross-encoder');
    const a = scorers.assignment;
    expect(a).toMatchObject({ retrieval: 'hybrid', bi_encoder: 'all-MiniLM-L6-v2', cross_encoder: 'ms-marco-MiniLM-L-6-v2' });
    expect(a.depths.map(({ from, to, scorer, model }) => ({ from, to, scorer, model }))).toEqual([
      { from: 1, to: 1, scorer: 'bi-encoder', model: 'all-MiniLM-L6-v2' },
      { from: 2, to: 3, scorer: 'cross-encoder', model: 'ms-marco-MiniLM-L-6-v2' },
    ]);
    expect(a.depths[1]?.why).toMatch(/search\.cross_encoder_from_depth is 2/);
    // Names only: no folder, URL or error text.
    expect(JSON.stringify(a)).not.toContain(sharedDir);
    expect(assignmentLines(a)).toEqual([expect.stringMatching(/^depth 1 +bi-encoder all-MiniLM-L6-v2: /), expect.stringMatching(/^depths 2-3 +cross-encoder ms-marco-MiniLM-L-6-v2: /)]);
  });

  it.runIf(process.platform === 'linux')('the cross-encoder’s worker thread runs at search.cross_encoder_nice, the rest of the process does not', async () => {
    await runtime.scorers();
    const nices = readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command name (in parentheses): nice is the 19th field of the line, the 17th after ")".
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    });
    expect(config.search.cross_encoder_nice).toBe(10);
    // The cross-encoder's threads (one per core, at most 4, whatever reranker.workers says) at 10; the main thread
    // and the bi-encoder's (reranker.workers 1) at the process's own.
    expect(nices.filter((n) => n === 10).length).toBe(Math.min(4, availableParallelism()));
    expect(nices.filter((n) => n !== 10).length).toBeGreaterThan(2);
  });

  it('the live pipeline: depth 1 runs no cross-encoder, depth 2 does', async () => {
    const search = await runtime.search();
    const one = await search.search({ query: QUERY, depth: 1 });
    expect(one.results.length).toBeGreaterThan(0);
    expect(one.timings.cross_encoder).toBeUndefined();
    const two = await search.search({ query: QUERY, depth: 2 });
    expect(two.timings.cross_encoder?.scored).toBeGreaterThan(0);
  });

  it('depth 1 never calls the cross-encoder; from its depth on rerank_score is its score of the original query', async () => {
    const scorers = await runtime.scorers();
    const { dense } = await runtime.dense();
    const cross = new RecordingReranker(scorers.crossEncoder!.model);
    const stage = new CrossEncoderStage(cross, { ...crossEncoderStageOptions(config.search), topN: 50, cacheSize: 0 });
    // Retrieval evidence weighs nothing here, so a judged result's rerank_score is the cross-encoder's own score.
    const pipeline = runtime.searchPipeline({ reranker: scorers.passes, dense, crossEncoder: stage, options: { retrievalWeight: { 'cross-encoder': 0 }, reflection: { window: 50 } } });

    const one = await pipeline.search({ query: QUERY, depth: 1 });
    expect(one.results.length).toBeGreaterThan(0);
    expect(cross.calls).toEqual([]);

    const two = await pipeline.search({ query: QUERY, depth: 2 });
    expect(two.timings.depth_reached).toBe(2);
    expect(two.timings.passes[1]?.reranked).toBeGreaterThan(0);
    expect(cross.calls.length).toBeGreaterThan(0);
    // Every pair is the original query against a passage window, never the reflection's expansion terms.
    for (const call of cross.calls) expect(call.query).toBe(QUERY);
    const judged = cross.calls.flatMap((c) => c.passages);
    // The cross-encoder judged the reflection pass's candidates too: more passages than depth 1 scored (2).
    expect(judged.length).toBeGreaterThan(two.timings.passes[0]!.reranked);
    expect(two.timings.cross_encoder).toMatchObject({ scored: judged.length, cached: 0 });
    const crossScores = new Set(cross.calls.flatMap((c) => c.scores));
    for (const r of two.results) expect(crossScores.has(r.rerank_score)).toBe(true);
    // The bi-encoder's depth-1 scores are not what depth 2 reports.
    const oneScores = new Set(one.results.map((r) => r.rerank_score));
    expect(two.results.some((r) => !oneScores.has(r.rerank_score))).toBe(true);
  });

  it('depth 1 with a cross-encoder configured ranks exactly as without one', async () => {
    const scorers = await runtime.scorers();
    const { dense } = await runtime.dense();
    const withCross = runtime.searchPipeline({ reranker: scorers.passes, dense, crossEncoder: scorers.crossEncoder });
    const without = runtime.searchPipeline({ reranker: scorers.passes, dense });
    for (const query of [QUERY, 'checkpoint write-ahead log', 'hash index']) {
      const a = await withCross.search({ query, depth: 1 });
      const b = await without.search({ query, depth: 1 });
      expect(a.results).toEqual(b.results);
    }
  });

  it('scores a repeated (query, passage) pair from the cache', async () => {
    const scorers = await runtime.scorers();
    const { dense } = await runtime.dense();
    const cross = new RecordingReranker(scorers.crossEncoder!.model);
    const pipeline = runtime.searchPipeline({ reranker: scorers.passes, dense, crossEncoder: new CrossEncoderStage(cross, crossEncoderStageOptions(config.search)) });
    const first = await pipeline.search({ query: QUERY, depth: 2 });
    const calls = cross.calls.length;
    const again = await pipeline.search({ query: QUERY, depth: 2 });
    expect(cross.calls.length).toBe(calls);
    expect(again.timings.cross_encoder).toMatchObject({ scored: first.timings.cross_encoder?.scored, cached: first.timings.cross_encoder?.scored });
    expect(again.results).toEqual(first.results);
  });

  it('from_depth 3: depth 2 keeps the bi-encoder; depth 3 has the cross-encoder', async () => {
    const scorers = await runtime.scorers();
    const { dense } = await runtime.dense();
    const cross = new RecordingReranker(scorers.crossEncoder!.model);
    const stage = new CrossEncoderStage(cross, { ...crossEncoderStageOptions(config.search), fromDepth: 3 });
    const pipeline = runtime.searchPipeline({ reranker: scorers.passes, dense, crossEncoder: stage });
    const two = await pipeline.search({ query: QUERY, depth: 2 });
    expect(two.timings.cross_encoder).toBeUndefined();
    expect(cross.calls).toEqual([]);
    await pipeline.search({ query: `${QUERY} quickly`, depth: 3 });
    expect(cross.calls.length).toBeGreaterThan(0);
  });

  it('GET /healthz and notary status say which model serves which depth, by name only', async () => {
    const { app } = await buildServeApp(runtime);
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { models: ModelAssignment };
      // The public report keeps names, roles and depths; the reasons are the operator's (notary status, the dashboard).
      const { assignment } = await runtime.scorers();
      expect(health.models).toEqual({ ...assignment, depths: assignment.depths.map(({ why: _why, ...rest }) => rest) });
      expect(JSON.stringify(health.models)).not.toMatch(/\/|https?:/);
    } finally {
      await app.close();
    }
    const status = await collectStatus(config);
    expect(status['models']).toMatchObject({ retrieval: 'hybrid', bi_encoder: 'all-MiniLM-L6-v2', cross_encoder: 'ms-marco-MiniLM-L-6-v2' });
  }, 60_000);

  it('without a bi-encoder the cross-encoder still serves only depth 2 on; depth 1 is lexical', async () => {
    const alone = await Runtime.open({ ...config, embeddings: { ...config.embeddings, model: 'reranker' } }, { log: () => {}, env: {} });
    try {
      const { passes, assignment } = await alone.scorers();
      expect(passes.info.kind).toBe('lexical');
      expect(assignment.retrieval).toBe('bm25');
      expect(assignment.depths.map((d) => [d.from, d.scorer])).toEqual([
        [1, 'lexical'],
        [2, 'cross-encoder'],
      ]);
      expect(assignment.depths[0]?.why).toMatch(/NOTARY_EMBEDDING_MODEL/);
      const one = await (await alone.search()).search({ query: QUERY, depth: 1 });
      expect(one.timings.cross_encoder).toBeUndefined();
    } finally {
      await alone.close();
    }
  });

  it('the bi-encoder named as the reranker, no cross-encoder: every depth keeps today’s scores', async () => {
    const bi = await Runtime.open({ ...config, reranker: { ...config.reranker, model_dir: biDir }, embeddings: { ...config.embeddings, model: 'reranker' } }, { log: () => {}, env: {} });
    try {
      const { crossEncoder, assignment } = await bi.scorers();
      expect(crossEncoder).toBeUndefined();
      expect(assignment).toMatchObject({ retrieval: 'hybrid', bi_encoder: 'all-MiniLM-L6-v2', cross_encoder: null });
      expect(assignment.depths).toEqual([expect.objectContaining({ from: 1, to: 3, scorer: 'bi-encoder', why: expect.stringMatching(/no cross-encoder/) })]);
      const two = await (await bi.search()).search({ query: QUERY, depth: 2 });
      expect(two.timings.cross_encoder).toBeUndefined();
    } finally {
      await bi.close();
    }
  });

  it('the cross-encoder reads the query-centred window of a passage', () => {
    const filler = Array.from({ length: 200 }, (_, i) => `filler${i}`).join(' ');
    const text = `${filler} autovacuum removes dead tuples ${filler}`;
    const window = crossEncoderText({ title: 'T', headingPath: 'H', text }, QUERY, 20);
    expect(window.startsWith('T — H. ')).toBe(true);
    expect(window).toContain('autovacuum removes dead tuples');
    expect(window.split(' ').length).toBeLessThanOrEqual(20 + 3);
  });
});
