/**
 * The serve phase of `npm run bench` (issue 20): depth-1 searches with the real bi-encoder over the benchmark's own
 * index, first stage by stage in process (where a search spends its time), then over HTTP against `notary serve`
 * child processes at 1 and 10 connections, several server settings side by side in one run. The servers are started
 * by serve-server.ts, the load runs by load-runner.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { configSchema, type NotaryConfig } from '../../core/config.js';
import { Runtime } from '../../runtime/index.js';
import { cachedEmbedder } from '../eval/embedding-cache.js';
import { openBaseline, wantsBaseline, type Baseline } from './baseline-backend.js';
import type { Companion } from './postgres-companion.js';
import { backendStages, stageRatios, type BackendStageRow, type BackendUnderTest } from './backend-stages.js';
import { distinctQueries, runLoads, warmUpQueries, type LoadRow, type ServeSetting } from './load-runner.js';
import { createBenchKey, startServe } from './serve-server.js';
import { round2, summarise, type LatencySummary } from './stats.js';

/** Before: one process, every query embedded and ranked; after: the caches of repeated queries, then two API processes. */
export const SERVE_SETTINGS: readonly ServeSetting[] = [
  { name: '1 process, no caches', workers: 1, queryVectorCache: 0, rankingCache: 0 },
  { name: '1 process', workers: 1, queryVectorCache: 10_000, rankingCache: 10_000 },
  { name: '2 processes', workers: 2, queryVectorCache: 10_000, rankingCache: 10_000 },
  { name: '2 processes, model in thread', workers: 2, queryVectorCache: 10_000, rankingCache: 10_000, modelWorkers: 0 },
];

export interface StageRow {
  stage: string;
  p50_ms: number;
  p95_ms: number;
  mean_ms: number;
}

export interface ServePhase {
  model: string;
  embedding_model_dir: string;
  passages: number;
  vectors: number;
  embed_s: number;
  embedding_cache_hits: number;
  stages: { queries: number; rows: StageRow[] };
  /** Depth 1 stage by stage for each backend (SQLite first, as the baseline), same queries interleaved (issue 34). */
  backend_stages: { queries: number; rows: BackendStageRow[]; ratios: ReturnType<typeof stageRatios> };
  load: LoadRow[];
  notes: string[];
}

function row(stage: string, s: LatencySummary): StageRow {
  return { stage, p50_ms: s.p50, p95_ms: s.p95, mean_ms: s.mean };
}

export async function servePhase(options: {
  repoRoot: string;
  dataDir: string;
  /** The bench's own config (index backend, storage): the phase adds the model and its settings. */
  config: NotaryConfig;
  modelDir: string;
  queries: readonly string[];
  stageQueries: number;
  durationS: number;
  connections: readonly number[];
  /** Server settings to run by name (SERVE_SETTINGS); empty: all. */
  only?: readonly string[];
  /** More values of `indexer.<backend>.vectors`, each measured beside the run's own (issue 34). */
  vectors?: readonly string[];
  /** Other backends over storage of their own (postgres-companion.ts), each measured beside the run's own (issue 34). */
  companions?: readonly Companion[];
  /** Runs after the settings with the API key and the distinct queries (the two-model server of issue 28). */
  after?: (key: string, distinct: readonly string[], settings: Record<string, unknown>, warmUp: readonly string[]) => Promise<void>;
  note: (message: string) => void;
}): Promise<ServePhase> {
  const { note } = options;
  const notes: string[] = [];
  const modelCache = process.env['NOTARY_MODEL_CACHE_DIR'] ?? path.join(homedir(), '.cache', 'notary', 'models');
  const settings = {
    reranker: { model_dir: options.modelDir, cache_dir: modelCache, download: false },
    tiers: { bench: { requests_per_minute: 1_000_000, burst: 1_000_000, monthly_credits: 0 } },
    default_tier: 'bench',
  };
  // Stage by stage, every query is new to the model and ranked afresh (no caches of repeated queries).
  const config: NotaryConfig = configSchema.parse({
    ...options.config,
    ...settings,
    embeddings: { ...options.config.embeddings, model: 'reranker' },
    indexer: withRankingCache(options.config.indexer, 0),
  });
  const runtime = await Runtime.open(config, { env: {}, log: (level, message) => (level === 'warn' ? note(`warning: ${message}`) : undefined) });
  let baseline: Baseline | null = null;
  const others: Array<{ backend: string; runtime: Runtime; indexer: NotaryConfig['indexer']; storage?: NotaryConfig['storage']; dataDir?: string }> = [];
  try {
    const { dense, off } = await runtime.dense();
    if (!dense) throw new Error(`the serve phase needs dense retrieval: ${off ?? 'unknown reason'}`);
    // Passage vectors through the indexer (the real path), each text's vector remembered between runs by model.
    const cache = cachedEmbedder(dense.embedder);
    const started = performance.now();
    await runtime.indexer({ ...dense, embedder: cache }).embedPending((p) => {
      if (p.embedded % 1024 === 0) note(`serve phase: embedded ${p.embedded} passages`);
    });
    const embedS = (performance.now() - started) / 1000;
    const hits = cache.hits();
    cache.close();
    const vectors = (await dense.index.stats()).vectors;
    const passages = (await runtime.pages.counts()).passages;
    note(`serve phase: ${vectors} vectors of ${dense.embedder.model} (${hits} from the embedding cache), ${embedS.toFixed(1)} s`);

    // As `notary serve` does at its start (the FTS5 index's in-memory copy, below indexer.sqlite-fts5.memory_ranking_up_to).
    await runtime.index.warm?.();
    const pipeline = runtime.searchPipeline({ reranker: await runtime.reranker(), dense, search: { query_vector_cache: 0 } });
    const cfg = config.search;
    const limit = Math.max(cfg.rerank_top_n, cfg.max_results * 3);
    const stageQueries = options.queries.slice(0, options.stageQueries);
    const t: Record<string, number[]> = { embed: [], fts: [], pages: [], vectors: [], total: [], serialise: [] };
    for (const [i, query] of stageQueries.entries()) {
      const warm = i < 5;
      let s = performance.now();
      const [vector] = await dense.embedder.embed([query]);
      const embedMs = performance.now() - s;
      s = performance.now();
      await runtime.index.search(query, { limit, perPageLimit: 3, filter: { excludeNavigation: true } });
      const ftsMs = performance.now() - s;
      s = performance.now();
      await runtime.index.searchPages(query, { limit: 20, filter: { excludeNavigation: true } });
      const pagesMs = performance.now() - s;
      s = performance.now();
      if (vector) await dense.index.search(vector, { limit, perPageLimit: 3 });
      const vectorMs = performance.now() - s;
      s = performance.now();
      const outcome = await pipeline.search({ query, depth: 1 });
      const totalMs = performance.now() - s;
      s = performance.now();
      JSON.stringify({ query, depth: 1, results: outcome.results });
      const serialiseMs = performance.now() - s;
      if (warm) continue;
      t['embed']!.push(embedMs);
      t['fts']!.push(ftsMs);
      t['pages']!.push(pagesMs);
      t['vectors']!.push(vectorMs);
      t['total']!.push(totalMs);
      t['serialise']!.push(serialiseMs);
    }
    const sum = (k: string) => summarise(t[k] ?? []);
    // A search embeds its query while full text runs, so the stages overlap: the longer of the two counts.
    const parts = Math.max(sum('embed').mean, sum('fts').mean + sum('pages').mean) + sum('vectors').mean;
    const rows: StageRow[] = [
      row('query embedding (model, batch 1)', sum('embed')),
      row('full text: passages (bm25, best 3 a page)', sum('fts')),
      row('full text: whole pages', sum('pages')),
      row('vector scan (exact, every passage)', sum('vectors')),
      row('search in process (all of the above + fusion, scores, snippets)', sum('total')),
      row('JSON of the response', sum('serialise')),
    ];
    rows.push({ stage: 'fusion, scoring from stored vectors, snippets (total mean - max(embedding, full text) - vectors)', p50_ms: Number.NaN, p95_ms: Number.NaN, mean_ms: round2(sum('total').mean - parts) });

    // Another backend is measured beside SQLite FTS5 over the same storage: stage by stage, then over HTTP.
    if (wantsBaseline(config)) baseline = await openBaseline(config, note);
    const underTest: BackendUnderTest[] = [
      ...(baseline ? [{ backend: 'sqlite-fts5', index: baseline.runtime.index, dense: baseline.dense, pipeline: baseline.runtime.searchPipeline({ reranker: await baseline.runtime.reranker(), dense: baseline.dense, search: { query_vector_cache: 0 } }) }] : []),
      { backend: config.indexer.backend, index: runtime.index, dense, pipeline },
    ];
    // The same backend with its vectors elsewhere: vectors through the indexer as above (the cache has them all).
    for (const value of options.vectors ?? []) {
      const indexer = withVectors(config.indexer, value);
      const other = await Runtime.open(configSchema.parse({ ...config, indexer }), { env: {}, log: (level, message) => (level === 'warn' ? note(`warning (vectors ${value}): ${message}`) : undefined) });
      const backend = `${config.indexer.backend}, vectors ${value}`;
      others.push({ backend, runtime: other, indexer });
      const opened = await other.dense();
      if (!opened.dense) throw new Error(`${backend}: no dense retrieval (${opened.off ?? 'unknown reason'})`);
      const cached = cachedEmbedder(opened.dense.embedder);
      await other.indexer({ ...opened.dense, embedder: cached }).embedPending();
      cached.close();
      underTest.push({ backend, index: other.index, dense: opened.dense, pipeline: other.searchPipeline({ reranker: await other.reranker(), dense: opened.dense, search: { query_vector_cache: 0 } }) });
      note(`${backend}: ${(await opened.dense.index.stats()).vectors} vectors in ${opened.dense.index.name}`);
    }
    // Another backend over storage of its own (the corpus crawled into it by the caller), its passage vectors likewise.
    for (const companion of options.companions ?? []) {
      const indexer = withRankingCache(companion.config.indexer, 0);
      const other = await Runtime.open(configSchema.parse({ ...companion.config, ...settings, embeddings: { ...companion.config.embeddings, model: 'reranker' }, indexer }), {
        env: {},
        log: (level, message) => (level === 'warn' ? note(`warning (${companion.backend}): ${message}`) : undefined),
      });
      others.push({ backend: companion.backend, runtime: other, indexer: companion.config.indexer, storage: companion.config.storage, dataDir: companion.config.data_dir });
      const opened = await other.dense();
      if (!opened.dense) throw new Error(`${companion.backend}: no dense retrieval (${opened.off ?? 'unknown reason'})`);
      const cached = cachedEmbedder(opened.dense.embedder);
      const began = performance.now();
      await other.indexer({ ...opened.dense, embedder: cached }).embedPending();
      cached.close();
      await other.index.warm?.();
      underTest.push({ backend: companion.backend, index: other.index, dense: opened.dense, pipeline: other.searchPipeline({ reranker: await other.reranker(), dense: opened.dense, search: { query_vector_cache: 0 } }) });
      note(`${companion.backend}: ${(await opened.dense.index.stats()).vectors} vectors in ${opened.dense.index.name} (${((performance.now() - began) / 1000).toFixed(1)} s)`);
    }
    const backendRows = await backendStages(underTest, stageQueries, limit);
    for (const r of backendRows) note(`stages: ${r.backend}, ${r.stage}: p50 ${r.p50_ms} ms, mean ${r.mean_ms} ms, ${r.engine_calls} engine calls, engine ${r.engine_ms} ms, round trips ${r.round_trip_ms} ms`);

    // Over HTTP, each setting in its own server process(es), one after the other.
    // An API key in each storage the servers use (a companion's storage is its own).
    const keys = new Map<string, Promise<string>>();
    const keyFor = (indexer: NotaryConfig['indexer'], storage: NotaryConfig['storage'], dataDir: string): Promise<string> => {
      const id = JSON.stringify(storage);
      let key = keys.get(id);
      if (!key) {
        const keyConfig = path.join(options.dataDir, `bench-serve-keys-${keys.size}.json`);
        writeFileSync(keyConfig, JSON.stringify({ tiers: settings.tiers, default_tier: settings.default_tier, indexer, storage }));
        key = createBenchKey(options.repoRoot, keyConfig, dataDir);
        keys.set(id, key);
      }
      return key;
    };
    const key = await keyFor(config.indexer, config.storage, options.dataDir);
    const loadRows: LoadRow[] = [];
    const rotating = options.queries.slice(0, 200);
    const distinct = distinctQueries(options.queries.slice(200));
    const servers: Array<{ backend: string; indexer: NotaryConfig['indexer']; storage?: NotaryConfig['storage'] | undefined; dataDir?: string | undefined }> = [
      ...(baseline ? [{ backend: 'sqlite-fts5', indexer: baseline.config.indexer }] : []),
      { backend: config.indexer.backend, indexer: config.indexer },
      ...others.map(({ backend, indexer, storage, dataDir }) => ({ backend, indexer, storage, dataDir })),
    ];
    for (const setting of SERVE_SETTINGS.filter((s) => !options.only?.length || options.only.includes(s.name))) for (const { backend, indexer, storage, dataDir } of servers) {
      const file = path.join(options.dataDir, `bench-serve-${backend}-${setting.workers}-${setting.queryVectorCache}-${setting.modelWorkers ?? 'default'}.json`);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(
        file,
        JSON.stringify({
          ...settings,
          reranker: { ...settings.reranker, ...(setting.modelWorkers === undefined ? {} : { workers: setting.modelWorkers }) },
          embeddings: { model: 'reranker', precision: config.embeddings.precision },
          indexer: withRankingCache(indexer, setting.rankingCache),
          storage: storage ?? config.storage,
          search: { query_vector_cache: setting.queryVectorCache },
          log_level: 'info',
        }),
      );
      note(`serve phase: ${backend}, ${setting.name}`);
      const serverData = dataDir ?? options.dataDir;
      const serverKey = storage ? await keyFor(indexer, storage, serverData) : key;
      const server = await startServe(options.repoRoot, file, serverData, setting.workers);
      try {
        loadRows.push(...(await runLoads(server, { backend, setting, key: serverKey, rotating, distinct, connections: options.connections, durationS: options.durationS, note, notes })));
      } finally {
        await server.stop();
      }
    }
    await options.after?.(key, distinct, settings, warmUpQueries(options.queries.slice(200)));
    notes.push('the load generator (autocannon) runs in the benchmark process on the same cores as the server');
    return {
      model: dense.embedder.model,
      embedding_model_dir: options.modelDir,
      passages,
      vectors,
      embed_s: round2(embedS),
      embedding_cache_hits: hits,
      stages: { queries: t['total']!.length, rows },
      backend_stages: { queries: Math.max(0, stageQueries.length - 5), rows: backendRows, ratios: stageRatios(backendRows) },
      load: loadRows,
      notes,
    };
  } finally {
    for (const other of others) await other.runtime.close();
    await baseline?.runtime.close();
    await runtime.close();
  }
}

/** An indexer section with the embedded FTS5 index's ranking cache (indexer.sqlite-fts5.ranking_cache) set. */
function withRankingCache(indexer: NotaryConfig['indexer'], rankingCache: number): Record<string, unknown> {
  const fts5 = (indexer as Record<string, unknown>)['sqlite-fts5'];
  return { ...indexer, 'sqlite-fts5': { ...(typeof fts5 === 'object' ? fts5 : {}), ranking_cache: rankingCache } };
}

/** An indexer section with the backend's `vectors` setting (indexer.<backend>.vectors) set; undefined leaves it. */
export function withVectors<T extends { backend: string }>(indexer: T, vectors: string | undefined): T {
  if (vectors === undefined) return indexer;
  const own = (indexer as Record<string, unknown>)[indexer.backend];
  return { ...indexer, [indexer.backend]: { ...(typeof own === 'object' ? own : {}), vectors } };
}
