/**
 * The serve phase of `npm run bench` (issue 20): depth-1 searches with the real bi-encoder over the benchmark's own
 * index, first stage by stage in process (where a search spends its time), then over HTTP against `notary serve`
 * child processes at 1 and 10 connections, several server settings side by side in one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { configSchema, type NotaryConfig } from '../../core/config.js';
import { Runtime } from '../../runtime/index.js';
import { cachedEmbedder } from '../eval/embedding-cache.js';
import { freePort } from '../../testkit/postgres.js';
import { loadAverage, processTreeCpuMs } from './machine.js';
import { openBaseline, wantsBaseline, type Baseline } from './baseline-backend.js';
import { backendStages, stageRatios, type BackendStageRow, type BackendUnderTest } from './backend-stages.js';
import { round2, summarise, type LatencySummary } from './stats.js';

export interface ServeSetting {
  name: string;
  workers: number;
  queryVectorCache: number;
  /** search.ranking_cache: full-text rankings kept for repeated queries (FTS5). */
  rankingCache: number;
  /** reranker.workers of the server (unset: its default). */
  modelWorkers?: number;
}

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

export interface LoadRow {
  /** The index backend the server searched (indexer.backend). */
  backend: string;
  setting: string;
  workers: number;
  query_vector_cache: number;
  ranking_cache: number;
  /** rotating: the same pool of queries again and again; distinct: no query repeats within the run. */
  queries: 'rotating' | 'distinct';
  connections: number;
  duration_s: number;
  requests: number;
  searches_per_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  errors: number;
  non_2xx: number;
  load_average: [number, number, number];
  /** CPU per search: server processes and threads, and the load generator (same cores). */
  server_cpu_ms_per_search: number | null;
  client_cpu_ms_per_search: number;
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

export interface ServerHandle {
  url: string;
  child: ChildProcess;
  /** CPU time (ms) the server's processes and threads have used so far; null where /proc cannot tell. */
  cpuMs(): number | null;
  stop(): Promise<void>;
}

/** CPU milliseconds per search of a timed run: the server's (every process and thread) and the load generator's. */
export interface CpuPerSearch {
  server_cpu_ms_per_search: number | null;
  client_cpu_ms_per_search: number;
}

/** Runs `work` (a load of `requests()` searches) and says what each search cost in CPU, server and load generator. */
export async function withCpu<T>(server: ServerHandle, work: () => Promise<T>, requests: (result: T) => number): Promise<{ result: T; cpu: CpuPerSearch }> {
  const serverBefore = server.cpuMs();
  const clientBefore = process.cpuUsage();
  const result = await work();
  const client = process.cpuUsage(clientBefore);
  const serverAfter = server.cpuMs();
  const n = Math.max(1, requests(result));
  return {
    result,
    cpu: {
      server_cpu_ms_per_search: serverBefore === null || serverAfter === null ? null : round2((serverAfter - serverBefore) / n),
      client_cpu_ms_per_search: round2((client.user + client.system) / 1000 / n),
    },
  };
}

/** Starts `notary serve` over `dataDir` and waits for both /healthz and, with several processes, every process. */
export async function startServe(repoRoot: string, configFile: string, dataDir: string, workers: number): Promise<ServerHandle> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'notary.js'), '--config', configFile, '--data', dataDir, 'serve', '--no-crawl', '--port', String(port), '--workers', String(workers)], {
    cwd: repoRoot,
    // BENCH_SERVE_NODE_OPTIONS reaches the server (e.g. "--cpu-prof --cpu-prof-dir=DIR" to profile it under load).
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...(process.env['BENCH_SERVE_NODE_OPTIONS'] ? { NODE_OPTIONS: process.env['BENCH_SERVE_NODE_OPTIONS'] } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`notary serve exited with ${child.exitCode}:\n${output.slice(-4000)}`);
    const listening = (output.match(/notary listening on/g) ?? []).length;
    if (listening >= workers) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`notary serve did not start within 180 s:\n${output.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    child,
    cpuMs: () => (child.pid === undefined ? null : processTreeCpuMs(child.pid)),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
      }),
  };
}

/**
 * Queries for runs where none may repeat: `base` without duplicates (and without queries that have no word), then each of them with a content word of
 * another query added, twice over (two other queries), so that a few thousand known-item queries last for several
 * runs of a server answering hundreds a second.
 */
export function distinctQueries(base: readonly string[]): string[] {
  // A query without a letter or digit ("$", "::") is a 400 by design: not a search to time.
  const unique = [...new Set(base.map((q) => q.trim()).filter((q) => /[\p{L}\p{N}]/u.test(q)))];
  const lastWord = (q: string) => q.split(/\s+/).filter((w) => /^\p{L}{4,}$/u.test(w)).at(-1);
  const out = new Set(unique);
  for (const stride of [7, 13]) {
    unique.forEach((q, i) => {
      const word = lastWord(unique[(i * stride + 1) % unique.length]!);
      if (word && !q.split(/\s+/).includes(word)) out.add(`${q} ${word}`);
    });
  }
  return [...out];
}

export async function load(url: string, key: string, queries: readonly string[], connections: number, durationS: number, depth = 1): Promise<autocannon.Result> {
  let next = 0;
  return autocannon({
    url: `${url}/v1/search`,
    connections,
    duration: durationS,
    // A deep search queued behind others may take longer than autocannon's default 10 s: counted, not dropped.
    timeout: 120,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ query: queries[next++ % queries.length], depth }) }),
      },
    ],
  });
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
  /** Runs after the settings with the API key and the distinct queries (the two-model server of issue 28). */
  after?: (key: string, distinct: readonly string[], settings: Record<string, unknown>) => Promise<void>;
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
    search: { ...options.config.search, ranking_cache: 0 },
  });
  const runtime = await Runtime.open(config, { env: {}, log: (level, message) => (level === 'warn' ? note(`warning: ${message}`) : undefined) });
  let baseline: Baseline | null = null;
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

    // As `notary serve` does at its start (the FTS5 index's in-memory copy, below search.memory_ranking_up_to).
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
    const backendRows = await backendStages(underTest, stageQueries, limit);
    for (const r of backendRows) note(`stages: ${r.backend}, ${r.stage}: p50 ${r.p50_ms} ms, mean ${r.mean_ms} ms, ${r.engine_calls} engine calls, engine ${r.engine_ms} ms, round trips ${r.round_trip_ms} ms`);

    // Over HTTP, each setting in its own server process(es), one after the other.
    const keyConfig = path.join(options.dataDir, 'bench-serve-keys.json');
    writeFileSync(keyConfig, JSON.stringify({ tiers: settings.tiers, default_tier: settings.default_tier, indexer: config.indexer, storage: config.storage }));
    const keyOut = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [path.join(options.repoRoot, 'bin', 'notary.js'), '--config', keyConfig, '--data', options.dataDir, 'keys', 'create', '--tenant', 'bench', '--credits', '1000000000', '--tier', 'bench'],
        { cwd: options.repoRoot, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' } },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`keys create exited ${code}: ${err}`))));
    });
    const key = keyOut.trim().split('\n').pop() ?? '';
    const loadRows: LoadRow[] = [];
    const rotating = options.queries.slice(0, 200);
    const distinct = distinctQueries(options.queries.slice(200));
    const servers = [
      ...(baseline ? [{ backend: 'sqlite-fts5', indexer: baseline.config.indexer }] : []),
      { backend: config.indexer.backend, indexer: config.indexer },
    ];
    for (const setting of SERVE_SETTINGS.filter((s) => !options.only?.length || options.only.includes(s.name))) for (const { backend, indexer } of servers) {
      const file = path.join(options.dataDir, `bench-serve-${backend}-${setting.workers}-${setting.queryVectorCache}-${setting.modelWorkers ?? 'default'}.json`);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(
        file,
        JSON.stringify({
          ...settings,
          reranker: { ...settings.reranker, ...(setting.modelWorkers === undefined ? {} : { workers: setting.modelWorkers }) },
          embeddings: { model: 'reranker', precision: config.embeddings.precision },
          indexer,
          storage: config.storage,
          search: { query_vector_cache: setting.queryVectorCache, ranking_cache: setting.rankingCache },
          log_level: 'info',
        }),
      );
      note(`serve phase: ${backend}, ${setting.name}`);
      const server = await startServe(options.repoRoot, file, options.dataDir, setting.workers);
      // Where the next run with distinct queries starts in their list: each run takes queries this server never had.
      let unused = 0;
      try {
        await load(server.url, key, rotating, 2, 3); // warm-up: caches, JIT, connections
        for (const kind of ['rotating', 'distinct'] as const) {
          if (kind === 'distinct' && setting.queryVectorCache === 0 && setting.rankingCache === 0) continue; // the same as rotating without caches
          for (const connections of options.connections) {
            const before = loadAverage();
            // Distinct queries: a fresh slice of the list for each run, never searched before by this server.
            const pool = kind === 'rotating' ? rotating : distinct.slice(unused);
            const { result, cpu } = await withCpu(server, () => load(server.url, key, pool, connections, options.durationS), (x) => x.requests.total);
            if (kind === 'distinct') unused += result.requests.total;
            const r: LoadRow = {
              backend,
              setting: setting.name,
              workers: setting.workers,
              query_vector_cache: setting.queryVectorCache,
              ranking_cache: setting.rankingCache,
              queries: kind,
              connections,
              duration_s: options.durationS,
              requests: result.requests.total,
              searches_per_s: round2(result.requests.total / options.durationS),
              p50_ms: result.latency.p50,
              p90_ms: result.latency.p90,
              p99_ms: result.latency.p99,
              errors: result.errors + result.timeouts,
              non_2xx: result.non2xx,
              load_average: before,
              ...cpu,
            };
            if (kind === 'distinct' && result.requests.total > pool.length) {
              notes.push(`${setting.name}, ${connections} connections: ${result.requests.total} requests over ${pool.length} distinct queries, so some repeated`);
            }
            loadRows.push(r);
            note(`serve phase: ${backend}, ${setting.name}, ${kind}, ${connections} connections: ${r.searches_per_s}/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, CPU ${r.server_cpu_ms_per_search ?? '?'} + ${r.client_cpu_ms_per_search} ms a search (load ${before.join(' ')})`);
          }
        }
      } finally {
        await server.stop();
      }
    }
    await options.after?.(key, distinct, settings);
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
    await baseline?.runtime.close();
    await runtime.close();
  }
}

/**
 * Issue 34's targets for a backend measured beside SQLite (distinct queries, "1 process" as shipped): depth-1 p50 at
 * 1 connection within 2x of SQLite's, and at 10 connections at least half of SQLite's searches per second.
 */
export function backendTargets(rows: readonly LoadRow[]): Array<{ name: string; target: string; actual: number; met: boolean }> {
  const find = (backend: string, connections: number) => rows.find((r) => r.backend === backend && r.setting === '1 process' && r.queries === 'distinct' && r.connections === connections);
  const out: Array<{ name: string; target: string; actual: number; met: boolean }> = [];
  for (const backend of new Set(rows.map((r) => r.backend).filter((b) => b !== 'sqlite-fts5'))) {
    const [base1, base10, one, ten] = [find('sqlite-fts5', 1), find('sqlite-fts5', 10), find(backend, 1), find(backend, 10)];
    if (base1 && one) {
      const ratio = round2(one.p50_ms / Math.max(0.01, base1.p50_ms));
      out.push({ name: `${backend}_p50_over_sqlite_1_connection`, target: '<= 2 (issue 34)', actual: ratio, met: ratio <= 2 });
    }
    if (base10 && ten) {
      const ratio = round2(ten.searches_per_s / Math.max(0.01, base10.searches_per_s));
      out.push({ name: `${backend}_searches_per_s_over_sqlite_10_connections`, target: '>= 0.5 (issue 34)', actual: ratio, met: ratio >= 0.5 });
    }
  }
  return out;
}
