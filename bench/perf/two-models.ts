/**
 * The two-model server of issue 28 in the serve phase of `npm run bench`: `notary serve` with the bi-encoder
 * (embeddings.model) for retrieval and depth 1 and the cross-encoder (reranker.model_dir) from
 * search.cross_encoder_from_depth on, measured over HTTP with queries it never had: depth 1 at 1 and 10 connections,
 * depth 2 at 1 and 10 connections, and depth 1 at 1 connection while depth 2 runs at 10 (does depth 2 starve it?).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type autocannon from 'autocannon';
import { configSchema, type NotaryConfig } from '../../core/config.js';
import type { IndexHit, SearchIndex } from '../../indexer/search-index.js';
import { BertPairTokenizer } from '../../reranker/tokenizer.js';
import { crossEncoderText } from '../../search/cross-encoder.js';
import { loadAverage, processTreeRssMb } from './machine.js';
import { load, withCpu, type CpuPerSearch } from './load-runner.js';
import { startServe } from './serve-server.js';
import { round2 } from './stats.js';

export interface TwoModelRow {
  run: string;
  depth: number;
  connections: number;
  duration_s: number;
  requests: number;
  searches_per_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  errors: number;
  non_2xx: number;
  /** 1, 5 and 15 minute load averages when the run began and when it ended. */
  load_before: [number, number, number];
  /** CPU per search (server and load generator); null beside another load (the two share the server). */
  server_cpu_ms_per_search: number | null;
  client_cpu_ms_per_search: number | null;
  load_after: [number, number, number];
}

export interface TwoModelPhase {
  bi_encoder_dir: string;
  cross_encoder_dir: string;
  /** What the server said it runs (GET /healthz models). */
  models: unknown;
  workers: number;
  /** Resident memory of each server's processes (the main server's `workers`, and the other process count's) after its runs. */
  rss_mb: Array<{ workers: number; rss_mb: number | null }>;
  search: Pick<
    NotaryConfig['search'],
    'cross_encoder_from_depth' | 'cross_encoder_top_n' | 'cross_encoder_window_words' | 'cross_encoder_pair_tokens' | 'cross_encoder_cache' | 'cross_encoder_nice' | 'cross_encoder_batch_wait_ms' | 'cross_encoder_batch_pairs'
  >;
  rows: TwoModelRow[];
  targets: Array<{ name: string; target: string; actual: number; met: boolean }>;
  /** Depth 2 with other search settings, each on a server of its own started after the main one (same queries pool). */
  variants: Array<{ search: Record<string, number>; rows: TwoModelRow[] }>;
  /** Tokens per pair the cross-encoder reads, by window size (measured on this corpus in process). */
  tokens?: WindowTokens[];
  notes: string[];
}

function toRow(run: string, depth: number, connections: number, durationS: number, r: autocannon.Result, before: [number, number, number], cpu?: CpuPerSearch): TwoModelRow {
  return {
    server_cpu_ms_per_search: cpu?.server_cpu_ms_per_search ?? null,
    client_cpu_ms_per_search: cpu?.client_cpu_ms_per_search ?? null,
    run,
    depth,
    connections,
    duration_s: durationS,
    requests: r.requests.total,
    searches_per_s: round2(r.requests.total / durationS),
    p50_ms: r.latency.p50,
    p90_ms: r.latency.p90,
    p99_ms: r.latency.p99,
    errors: r.errors + r.timeouts,
    non_2xx: r.non2xx,
    load_before: before,
    load_after: loadAverage(),
  };
}

/** The first run of the two-model server: depth 1 at 10 connections from its start, on the warm-up queries. */
export const WARM_UP_RUN = 'depth 1, 10 connections, the first seconds after start (warm-up queries)';

/** The same server with another process count than the phase's (one API process more, or the default of one), after the same warm-up. */
export function otherProcessesRun(workers: number): string {
  return workers === 1
    ? 'one API process (server.workers 1, the default), depth 1, 10 connections'
    : `${workers} API processes (serve --workers ${workers}, named by hand), depth 1, 10 connections`;
}

export async function twoModelPhase(options: {
  repoRoot: string;
  dataDir: string;
  config: NotaryConfig;
  /** The serve phase's settings (model cache, bench tier). */
  settings: Record<string, unknown>;
  biDir: string;
  crossDir: string;
  key: string;
  /** Queries none of which this server has seen: each run takes the next ones. */
  distinct: readonly string[];
  /** Queries to warm the server with first (warmUpQueries: none of them timed later). */
  warmUp: readonly string[];
  durationS: number;
  workers: number;
  /** Search settings over the defaults, one server each: depth 2 at 1 and 10 connections beside the main server's. */
  variants?: ReadonlyArray<Record<string, number>>;
  note: (message: string) => void;
}): Promise<TwoModelPhase> {
  const { note, durationS } = options;
  // The shipped defaults, written out so the results say what ran.
  const d = configSchema.parse({}).search;
  const search = {
    cross_encoder_from_depth: d.cross_encoder_from_depth,
    cross_encoder_top_n: d.cross_encoder_top_n,
    cross_encoder_window_words: d.cross_encoder_window_words,
    cross_encoder_pair_tokens: d.cross_encoder_pair_tokens,
    cross_encoder_cache: d.cross_encoder_cache,
    cross_encoder_nice: d.cross_encoder_nice,
    cross_encoder_batch_wait_ms: d.cross_encoder_batch_wait_ms,
    cross_encoder_batch_pairs: d.cross_encoder_batch_pairs,
  };
  const writeConfig = (name: string, overrides: Record<string, number>): string => {
    const file = path.join(options.dataDir, `${name}.json`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(
      file,
      JSON.stringify({
        ...options.settings,
        reranker: { ...(options.settings['reranker'] as object), model_dir: options.crossDir },
        embeddings: { model: options.biDir, precision: options.config.embeddings.precision },
        indexer: options.config.indexer,
        storage: options.config.storage,
        search: { ...search, ...overrides },
        log_level: 'info',
      }),
    );
    return file;
  };
  const file = writeConfig('bench-serve-two-models', {});
  note(`serve phase: two models (${path.basename(options.biDir)} for depth 1, ${path.basename(options.crossDir)} from depth 2), ${options.workers} API processes`);
  const server = await startServe(options.repoRoot, file, options.dataDir, options.workers);
  const rows: TwoModelRow[] = [];
  const notes: string[] = [];
  const rss: TwoModelPhase['rss_mb'] = [];
  let models: unknown = null;
  let unused = 0;
  const fresh = (): string[] => options.distinct.slice(unused);
  try {
    models = ((await (await fetch(`${server.url}/healthz`)).json()) as { models?: unknown }).models ?? null;
    const run = async (name: string, depth: number, connections: number, queries?: readonly string[]): Promise<TwoModelRow> => {
      const before = loadAverage();
      const pool = queries ?? fresh();
      const { result: r, cpu } = await withCpu(server, () => load(server.url, options.key, pool, connections, durationS, depth), (x) => x.requests.total);
      if (r.requests.total > pool.length) notes.push(`${name}: ran out of distinct queries (${pool.length} for ${r.requests.total} requests): the rest repeated`);
      if (!queries) unused += r.requests.total;
      const row = toRow(name, depth, connections, durationS, r, before, cpu);
      rows.push(row);
      note(`serve phase: two models, ${name}: ${row.searches_per_s}/s, p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms, CPU ${row.server_cpu_ms_per_search ?? '?'} + ${row.client_cpu_ms_per_search ?? '?'} ms a search (load ${before.join(' ')})`);
      return row;
    };
    // A server's first few thousand searches run while V8 is still compiling its code (and the process fills its
    // caches of the corpus): measured first, on warm-up queries of their own, then every timed run below is of a
    // server in service. Depth 2 is warmed briefly too (its queries are never timed).
    await run(WARM_UP_RUN, 1, 10, options.warmUp);
    await load(server.url, options.key, options.distinct.slice(-200), 2, 3, 2);
    await run('depth 1, 1 connection', 1, 1);
    await run('depth 1, 10 connections', 1, 10);
    await run('depth 2, 1 connection', 2, 1);
    await run('depth 2, 10 connections', 2, 10);
    // Depth 1 at one connection while depth 2 keeps ten busy: two load generators at once, on their own queries.
    const before = loadAverage();
    const deepPool = fresh();
    const shallowPool = deepPool.slice(Math.floor(deepPool.length / 2));
    const [deep, shallow] = await Promise.all([
      load(server.url, options.key, deepPool, 10, durationS, 2),
      load(server.url, options.key, shallowPool, 1, durationS, 1),
    ]);
    if (deep.requests.total > deepPool.length - shallowPool.length) notes.push('depth 2 beside depth 1: the depth-2 queries ran into the depth-1 ones (some repeated)');
    for (const [name, depth, connections, r] of [
      ['depth 2, 10 connections, beside depth 1', 2, 10, deep],
      ['depth 1, 1 connection, beside depth 2 at 10', 1, 1, shallow],
    ] as const) {
      const row = toRow(name, depth, connections, durationS, r, before);
      rows.push(row);
      note(`serve phase: two models, ${name}: ${row.searches_per_s}/s, p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms (load ${before.join(' ')})`);
    }
    rss.push({ workers: options.workers, rss_mb: server.child.pid === undefined ? null : processTreeRssMb(server.child.pid) });
  } finally {
    await server.stop();
  }
  const variants: TwoModelPhase['variants'] = [];
  for (const [k, overrides] of (options.variants ?? []).entries()) {
    const label = Object.entries(overrides).map(([key, value]) => `${key} ${value}`).join(', ');
    const variant = await startServe(options.repoRoot, writeConfig(`bench-serve-two-models-variant-${k}`, overrides), options.dataDir, options.workers);
    const variantRows: TwoModelRow[] = [];
    try {
      await load(variant.url, options.key, options.distinct.slice(-200), 2, 3, 2);
      for (const connections of [1, 10]) {
        const before = loadAverage();
        const { result: r, cpu } = await withCpu(variant, () => load(variant.url, options.key, fresh(), connections, durationS, 2), (x) => x.requests.total);
        unused += r.requests.total;
        const row = toRow(`depth 2, ${connections} connection${connections === 1 ? '' : 's'}`, 2, connections, durationS, r, before, cpu);
        variantRows.push(row);
        note(`serve phase: two models with ${label}, ${row.run}: ${row.searches_per_s}/s, p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms, CPU ${row.server_cpu_ms_per_search ?? '?'} + ${row.client_cpu_ms_per_search ?? '?'} ms a search (load ${before.join(' ')})`);
      }
    } finally {
      await variant.stop();
    }
    variants.push({ search: overrides, rows: variantRows });
  }
  // The same server with the other process count (the phase runs what a user gets without naming one: one API
  // process; two processes named by hand are compared), warmed the same way, on queries from the start of the pool
  // (new to this server).
  {
    const otherWorkers = options.workers === 1 ? 2 : 1;
    const otherRun = otherProcessesRun(otherWorkers);
    const other = await startServe(options.repoRoot, file, options.dataDir, otherWorkers);
    try {
      await load(other.url, options.key, options.warmUp, 10, durationS, 1);
      const before = loadAverage();
      const { result: r, cpu } = await withCpu(other, () => load(other.url, options.key, options.distinct, 10, durationS, 1), (x) => x.requests.total);
      const row = toRow(otherRun, 1, 10, durationS, r, before, cpu);
      rows.push(row);
      rss.push({ workers: otherWorkers, rss_mb: other.child.pid === undefined ? null : processTreeRssMb(other.child.pid) });
      note(`serve phase: two models, ${otherRun}: ${row.searches_per_s}/s, p50 ${row.p50_ms} ms, CPU ${row.server_cpu_ms_per_search ?? '?'} + ${row.client_cpu_ms_per_search ?? '?'} ms a search (load ${before.join(' ')})`);
    } finally {
      await other.stop();
    }
  }
  const find = (name: string) => rows.find((r) => r.run === name);
  const targets: TwoModelPhase['targets'] = [];
  const add = (name: string, target: string, row: TwoModelRow | undefined, value: (r: TwoModelRow) => number, met: (v: number) => boolean) => {
    if (row) targets.push({ name, target, actual: value(row), met: met(value(row)) && row.errors + row.non_2xx === 0 });
  };
  add('two_models_depth1_searches_per_s_10_connections', '>= 200 (issue 28)', find('depth 1, 10 connections'), (r) => r.searches_per_s, (v) => v >= 200);
  add('two_models_depth1_p50_ms_1_connection', '<= 15 (issue 28)', find('depth 1, 1 connection'), (r) => r.p50_ms, (v) => v <= 15);
  add('two_models_depth2_p50_ms_1_connection', '<= 400 (issue 28)', find('depth 2, 1 connection'), (r) => r.p50_ms, (v) => v <= 400);
  add('two_models_depth2_searches_per_s_10_connections', '>= 5 (issue 28)', find('depth 2, 10 connections'), (r) => r.searches_per_s, (v) => v >= 5);
  add('two_models_depth1_p50_ms_beside_depth2', '< 30 (issue 28)', find('depth 1, 1 connection, beside depth 2 at 10'), (r) => r.p50_ms, (v) => v < 30);
  notes.push(
    'the cross-encoder of ../shared has the real architecture and tokenizer with RANDOM int8 weights: speed and wiring only, its scores mean nothing',
    'queries are never repeated within the server (each run takes queries it never had), so neither the query-vector, ranking nor cross-encoder score cache answers',
  );
  return { bi_encoder_dir: options.biDir, cross_encoder_dir: options.crossDir, models, workers: options.workers, rss_mb: rss, search, rows, targets, variants, notes };
}

export interface WindowTokens {
  window_words: number;
  pairs: number;
  /** Tokens of one (query, passage) pair as the cross-encoder reads it: special tokens included, cut at 256. */
  mean_tokens: number;
  p90_tokens: number;
  /** Of those, the "where" in front of the window (title, headings). */
  mean_where_tokens: number;
}

/**
 * The tokens the cross-encoder is actually fed, by window size: each query's best `topN` passages by BM25 (a stand-in
 * for the passes' best), cut to the query-centred window the stage would send (search/cross-encoder.ts).
 */
export async function crossEncoderTokens(
  index: SearchIndex,
  crossDir: string,
  queries: readonly string[],
  windows: readonly number[],
  topN: number,
): Promise<WindowTokens[]> {
  const tokenizer = BertPairTokenizer.fromDir(crossDir);
  const hits: Array<{ query: string; docs: IndexHit[] }> = [];
  for (const query of queries) hits.push({ query, docs: await index.search(query, { limit: topN }) });
  return windows.map((window) => {
    const counts: number[] = [];
    let where = 0;
    for (const { query, docs } of hits) {
      for (const doc of docs) {
        const text = crossEncoderText(doc, query, window);
        counts.push(tokenizer.encodePair(query, text, 256).inputIds.length);
        where += tokenizer.tokenIds(text.slice(0, text.length - crossEncoderText({ ...doc, title: '', headingPath: '' }, query, window).length + 2)).length;
      }
    }
    counts.sort((a, b) => a - b);
    const mean = counts.reduce((s, c) => s + c, 0) / Math.max(1, counts.length);
    return {
      window_words: window,
      pairs: counts.length,
      mean_tokens: round2(mean),
      p90_tokens: counts[Math.floor(counts.length * 0.9)] ?? 0,
      mean_where_tokens: round2(where / Math.max(1, counts.length)),
    };
  });
}
