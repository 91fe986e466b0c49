/**
 * notary's performance benchmark (`npm run bench`): crawl -> index -> search on Debian's postgresql-doc-15 HTML served
 * from 127.0.0.1, side by side in one process. Prints a summary table and writes JSON under bench/results/.
 * Flags: see bench/perf/args.ts (--quick, --queries N, --out FILE, ...).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadConfig, modelRunners, type NotaryConfig } from '../core/config.js';
import { runCrawl } from '../crawler/index.js';
import { BertPairTokenizer, OnnxReranker } from '../reranker/index.js';
import { Runtime } from '../runtime/index.js';
import type { SearchPipeline } from '../search/pipeline.js';
import { serveDirectory } from '../testkit/serve-static.js';
import { createDatabase, dropDatabase } from '../testkit/postgres.js';
import { dropMeilisearchIndexes } from './perf/backends.js';
import { measureRerankerThroughput, type BenchPair } from './perf/reranker-throughput.js';
import { knownItemQueries, requirePgDocs, sample, type KnownItemQuery } from '../testkit/pgdocs.js';
import { BenchArgsError, parseBenchArgs, USAGE, type BenchArgs } from './perf/args.js';
import { embeddingVariants, measureEmbedding, SHIPPED_EMBEDDING_VARIANT, type EmbeddingBench, type EmbeddingVariant } from './perf/embedding.js';
import { backendTargets, servePhase } from './perf/serve-phase.js';
import { crossEncoderTokens, twoModelPhase, type TwoModelPhase } from './perf/two-models.js';
import { passageModelText } from '../indexer/index.js';
import { gitCommit, loadAverage, machineInfo, memorySample, type MemorySample } from './perf/machine.js';
import { checkTargets, formatSearchTable, formatTable, formatTargets, type SearchSeries } from './perf/report.js';
import { perSecond, round2, summarise } from './perf/stats.js';
import { TimedReranker } from './perf/timed-reranker.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RERANK_MODEL_NAME = 'ms-marco-MiniLM-L-6-v2';

function note(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

function shout(message: string): void {
  const bar = '!'.repeat(Math.min(100, message.length + 4));
  process.stderr.write(`\n${bar}\n! ${message}\n${bar}\n\n`);
}

function cpuMsSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

interface CrawlPhase {
  pages_stored: number;
  html_files: number;
  fetched: number;
  duplicates: number;
  skipped: number;
  failed: number;
  http_requests: number;
  wall_s: number;
  /** Pages stored over the wall time of runCrawl (sitemap discovery included). */
  pages_per_s: number;
  /** The crawler's own rate: finished page requests per second. */
  crawler_reported_pages_per_s: number;
  concurrency: number;
  /** CPU time of this process (user + system) during the crawl: load-independent cost. */
  cpu_s: number;
  pages_per_cpu_s: number;
}

async function crawlPhase(runtime: Runtime, docsDir: string, concurrency: number): Promise<CrawlPhase> {
  const { config, pages } = runtime;
  const htmlFiles = readdirSync(docsDir).filter((f) => f.endsWith('.html')).length;
  const server = await serveDirectory(docsDir);
  try {
    const crawlerConfig: NotaryConfig['crawler'] = {
      ...config.crawler,
      seeds: [`${server.url}/index.html`],
      per_host_delay_ms: 0,
      max_concurrency: concurrency,
      per_host_concurrency: concurrency,
    };
    note(`crawl: ${docsDir} (${htmlFiles} .html files) from ${server.url}, concurrency ${concurrency}, politeness off`);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const summary = await runCrawl({
      config: crawlerConfig,
      pages,
      runs: runtime.runs,
      frontier: runtime.frontier,
      log: (level, msg) => {
        if (level === 'warn') note(`crawl warning: ${msg}`);
      },
    });
    const wallMs = performance.now() - started;
    const cpuMs = cpuMsSince(cpuBefore);
    const counts = await pages.counts();
    return {
      pages_stored: counts.pages,
      html_files: htmlFiles,
      fetched: summary.fetched,
      duplicates: summary.duplicates,
      skipped: summary.skipped.total,
      failed: summary.failed,
      http_requests: server.requests.length,
      wall_s: round2(wallMs / 1000),
      pages_per_s: perSecond(counts.pages, wallMs),
      crawler_reported_pages_per_s: summary.pagesPerSecond,
      concurrency,
      cpu_s: round2(cpuMs / 1000),
      pages_per_cpu_s: perSecond(counts.pages, cpuMs),
    };
  } finally {
    await server.close();
  }
}

interface IndexPhase {
  pages: number;
  passages: number;
  failed: number;
  wall_s: number;
  passages_per_s: number;
  pages_per_s: number;
  index_bytes: number | null;
  cpu_s: number;
  passages_per_cpu_s: number;
}

async function indexPhase(runtime: Runtime): Promise<IndexPhase> {
  const indexer = runtime.indexer();
  const index = runtime.index;
  note('index: extracting, cutting and indexing every stored page');
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const run = await indexer.runOnce({ batchSize: 100 });
  const wallMs = performance.now() - started;
  const cpuMs = cpuMsSince(cpuBefore);
  const stats = await index.stats();
  return {
    pages: run.indexedPages,
    passages: run.passages,
    failed: run.failed,
    wall_s: round2(wallMs / 1000),
    passages_per_s: perSecond(run.passages, wallMs),
    pages_per_s: perSecond(run.indexedPages, wallMs),
    index_bytes: stats.bytes,
    cpu_s: round2(cpuMs / 1000),
    passages_per_cpu_s: perSecond(run.passages, cpuMs),
  };
}

/** Tokenizer cost alone: query and 200-word passage pairs at the reranker's sequence length (was a timed unit test). */
function tokenizerPhase(modelDir: string, queries: readonly string[]): { pairs: number; us_per_pair_p50: number; us_per_pair_mean: number } {
  const tokenizer = BertPairTokenizer.fromDir(modelDir);
  const words = 'vacuum reclaims storage occupied by dead tuples in tables and indexes so that the space can be reused by later rows of the same table'.split(' ');
  const passage = Array.from({ length: 200 }, (_, i) => words[i % words.length]).join(' ');
  const perPairUs: number[] = [];
  for (let i = 0; i < 300; i++) {
    const started = performance.now();
    tokenizer.encodePair(queries[i % Math.max(1, queries.length)] ?? 'vacuum', `${passage} ${i}`, 256);
    perPairUs.push((performance.now() - started) * 1000);
  }
  const stats = summarise(perPairUs);
  note(`tokenizer: ${stats.p50} us per 200-word pair (p50)`);
  return { pairs: perPairUs.length, us_per_pair_p50: stats.p50, us_per_pair_mean: stats.mean };
}

function isHit(urls: readonly string[], targets: readonly string[]): boolean {
  return urls.slice(0, 10).some((url) => targets.includes(path.posix.basename(new URL(url).pathname)));
}

interface SeriesRecorder {
  topN: number;
  timed: TimedReranker;
  pipeline: SearchPipeline;
  total: number[];
  outside: number[];
  retrieve: number[];
  rerank: number[];
  reranked: number;
  hits: number;
}

/**
 * Every query runs once per rerank setting, the settings interleaved query by query (their order rotating), so a
 * shared machine's changing load falls on all settings alike instead of on whichever series ran last.
 */
async function searchPhase(input: {
  runtime: Runtime;
  reranker: OnnxReranker;
  topNs: readonly number[];
  queries: readonly KnownItemQuery[];
  warmUp: readonly KnownItemQuery[];
  throughputQueries: number;
}): Promise<SearchSeries[]> {
  const recorders: SeriesRecorder[] = input.topNs.map((topN) => {
    const timed = new TimedReranker(input.reranker);
    const pipeline = input.runtime.searchPipeline({ reranker: timed, search: { rerank_top_n: topN } });
    return { topN, timed, pipeline, total: [], outside: [], retrieve: [], rerank: [], reranked: 0, hits: 0 };
  });
  for (const q of input.warmUp) for (const r of recorders) await r.pipeline.search({ query: q.query, depth: 1 });
  for (const r of recorders) r.timed.reset();
  note(`search: ${input.queries.length} queries at depth 1, rerank_top_n ${input.topNs.join('/')} interleaved`);

  let done = 0;
  for (const q of input.queries) {
    for (let k = 0; k < recorders.length; k++) {
      const r = recorders[(done + k) % recorders.length] as SeriesRecorder;
      const { results, timings } = await r.pipeline.search({ query: q.query, depth: 1 });
      r.total.push(timings.total_ms);
      r.outside.push(timings.total_ms - timings.rerank_ms);
      r.retrieve.push(timings.retrieve_ms);
      r.rerank.push(timings.rerank_ms);
      r.reranked += timings.reranked;
      if (isHit(results.map((x) => x.url), q.targets)) r.hits++;
    }
    done++;
    if (done % 25 === 0) note(`search: ${done}/${input.queries.length} queries`);
  }

  const series: SearchSeries[] = [];
  for (const r of recorders) {
    let inSearch: number | null = null;
    let isolated: SearchSeries['reranker_isolated'] = null;
    if (r.timed.calls.length > 0) {
      const pairs = r.timed.calls.reduce((acc, call) => acc + call.passages.length, 0);
      const ms = r.timed.calls.reduce((acc, call) => acc + call.ms, 0);
      inSearch = perSecond(pairs, ms);
      const calls = r.timed.calls.slice(0, input.throughputQueries);
      const benchPairs: BenchPair[] = calls.flatMap((call) => call.passages.map((passage) => ({ query: call.query, passage })));
      note(`reranker alone: the same ${benchPairs.length} pairs of ${calls.length} queries, in batches of ${r.topN}`);
      const throughput = await measureRerankerThroughput(input.reranker, benchPairs, r.topN);
      isolated = {
        queries: calls.length,
        pairs: benchPairs.length,
        pairs_per_s: round2(throughput.pairs_per_s),
        ms_per_batch_p50: round2(throughput.ms_per_batch_p50),
      };
    }
    const n = Math.max(1, r.total.length);
    series.push({
      rerank_top_n: r.topN,
      queries: r.total.length,
      reranked_mean: round2(r.reranked / n),
      total_ms: summarise(r.total),
      outside_reranker_ms: summarise(r.outside),
      retrieve_ms: summarise(r.retrieve),
      rerank_ms: summarise(r.rerank),
      known_item_hit_at_10: round2(r.hits / n),
      reranker_in_search_pairs_per_s: inSearch,
      reranker_isolated: isolated,
    });
  }
  return series;
}

const BI_ENCODER_NAME = 'all-MiniLM-L6-v2';

/**
 * The int8 copy of the shared bi-encoder: NOTARY_INT8_MODEL, else ~/.cache/notary/models/all-MiniLM-L6-v2-int8,
 * made there by scripts/quantize-minilm.sh (onnxruntime's quantisation tooling in a venv outside the repository)
 * when missing.
 */
function int8ModelDir(fp32Dir: string): string {
  const dir = process.env['NOTARY_INT8_MODEL'] ?? path.join(homedir(), '.cache', 'notary', 'models', `${BI_ENCODER_NAME}-int8`);
  if (existsSync(path.join(dir, 'onnx', 'model_int8.onnx'))) return dir;
  note(`embedding: no int8 model in ${dir}; making it with scripts/quantize-minilm.sh`);
  const made = spawnSync('bash', [path.join(repoRoot, 'scripts', 'quantize-minilm.sh'), '--src', fp32Dir, '--out', dir], { stdio: 'inherit' });
  if (made.status !== 0) throw new Error(`scripts/quantize-minilm.sh failed (exit ${made.status})`);
  return dir;
}

/**
 * Model folders of the measured variants derived from the fp32 model (quantisation variants, offline fusion): made
 * once by scripts/quantize-minilm.sh into ~/.cache/notary/models/bench/ (NOTARY_BENCH_MODELS elsewhere), never into
 * the repository.
 */
function derivedModelDirs(fp32Dir: string, variants: readonly EmbeddingVariant[]): Map<string, string> {
  const root = process.env['NOTARY_BENCH_MODELS'] ?? path.join(homedir(), '.cache', 'notary', 'models', 'bench');
  const dirs = new Map<string, string>();
  for (const { derived } of variants) {
    if (!derived || dirs.has(derived.tag)) continue;
    const dir = path.join(root, `${BI_ENCODER_NAME}-${derived.tag}`);
    if (!existsSync(path.join(dir, 'quantize-report.json'))) {
      note(`embedding: making ${dir} (scripts/quantize-minilm.sh ${derived.flags.join(' ')})`);
      const made = spawnSync('bash', [path.join(repoRoot, 'scripts', 'quantize-minilm.sh'), '--src', fp32Dir, '--out', dir, ...derived.flags], { stdio: 'inherit' });
      if (made.status !== 0) throw new Error(`scripts/quantize-minilm.sh ${derived.flags.join(' ')} failed (exit ${made.status})`);
    }
    dirs.set(derived.tag, dir);
  }
  return dirs;
}

async function embeddingPhase(runtime: Runtime, sharedDir: string, args: BenchArgs): Promise<EmbeddingBench> {
  const fp32Dir = path.join(sharedDir, 'models', BI_ENCODER_NAME);
  const int8Dir = int8ModelDir(fp32Dir);
  const rows = await runtime.storage.db.selectFrom('passages').select(['title', 'heading_path', 'text']).orderBy('id').execute();
  // Evenly spaced over the corpus, in index order (as the indexer meets them: runs of passages of one page).
  const step = Math.max(1, Math.floor(rows.length / args.embedPassages));
  const texts = rows
    .filter((_, i) => i % step === 0)
    .slice(0, args.embedPassages)
    .map((r) => passageModelText({ title: r.title, headingPath: r.heading_path, text: r.text }));
  const variants = embeddingVariants(args.embedSettings);
  note(`embedding: ${texts.length} passages x ${variants.length} settings, interleaved in rounds of ${args.embedRound} (fp32 ${fp32Dir}, int8 ${int8Dir})`);
  const derivedDirs = derivedModelDirs(fp32Dir, variants);
  return measureEmbedding({ fp32Dir, int8Dir, derivedDirs, texts, variants, roundSize: args.embedRound, log: note });
}

async function main(args: BenchArgs): Promise<number> {
  const startedAt = new Date();
  const loadAverages: Record<string, [number, number, number]> = { start: loadAverage() };
  const memory: Record<string, MemorySample> = { start: memorySample() };
  const docsDir = requirePgDocs();
  const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '../shared');
  const modelDir = path.join(sharedDir, 'models', RERANK_MODEL_NAME);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-bench-'));
  // No environment: a stray NOTARY_* variable must not change what is measured.
  const stamp = `notary_bench_${process.pid}_${Date.now().toString(36)}`;
  const databaseUrl = args.backend === 'postgres' && args.databaseUrl ? await createDatabase(args.databaseUrl, stamp) : null;
  const config = loadConfig({
    env: {},
    overrides: {
      data_dir: dataDir,
      embeddings: { model: 'off' },
      indexer: {
        backend: args.backend,
        ...(args.meilisearchUrl ? { meilisearch: { url: args.meilisearchUrl, index: stamp, ...(args.meilisearchKey ? { api_key: args.meilisearchKey } : {}) } } : {}),
      },
      ...(databaseUrl ? { storage: { driver: 'postgres', postgres_url: databaseUrl } } : {}),
    },
  });
  note(`index backend: ${args.backend}${databaseUrl ? ' (storage in PostgreSQL)' : ''}`);
  const runtime = await Runtime.open(config, { env: {}, log: (level, message) => (level === 'warn' ? note(`warning: ${message}`) : undefined) });
  let reranker: OnnxReranker | null = null;
  try {
    const crawl = await crawlPhase(runtime, docsDir, args.concurrency);
    memory['after_crawl'] = memorySample();
    loadAverages['after_crawl'] = loadAverage();
    note(`crawl: ${crawl.pages_stored} pages stored in ${crawl.wall_s} s (${crawl.pages_per_s} pages/s)`);
    const expectedPages = Math.max(crawl.html_files, docsDir === '/usr/share/doc/postgresql-doc-15/html' ? 1169 : 0);
    const crawlComplete = crawl.pages_stored >= expectedPages;
    if (!crawlComplete) {
      shout(`CRAWL INCOMPLETE: ${crawl.pages_stored} pages stored, expected at least ${expectedPages} (${docsDir})`);
    }

    const indexed = await indexPhase(runtime);
    memory['after_index'] = memorySample();
    loadAverages['after_index'] = loadAverage();
    note(`index: ${indexed.passages} passages from ${indexed.pages} pages in ${indexed.wall_s} s (${indexed.passages_per_s} passages/s)`);

    const embedding = args.embedPassages > 0 ? await embeddingPhase(runtime, sharedDir, args) : null;
    memory['after_embedding'] = memorySample();
    loadAverages['after_embedding'] = loadAverage();

    const allQueries = knownItemQueries(docsDir);
    const picked = sample(allQueries, args.queries + args.warmUp);
    const queries = picked.slice(0, args.queries);
    const warmUp = picked.slice(args.queries);
    reranker = await OnnxReranker.load(modelDir, {
      ...modelRunners(config.reranker),
      batchSize: config.reranker.batch_size,
      maxSeqLength: config.reranker.max_seq_length,
      source: 'bench',
    });
    memory['after_reranker_load'] = memorySample();
    const tokenizer = tokenizerPhase(modelDir, queries.map((q) => q.query));
    const search = args.skipSearch ? [] : await searchPhase({
      runtime,
      reranker,
      topNs: args.rerankTopN,
      queries,
      warmUp,
      throughputQueries: args.throughputQueries,
    });
    memory['after_search'] = memorySample();
    loadAverages['after_search'] = loadAverage();
    const crossDir = path.join(sharedDir, 'models', RERANK_MODEL_NAME);
    const wantTwoModels = args.serveSettings.length === 0 || args.serveSettings.includes('two models');
    let twoModels: TwoModelPhase | null = null;
    const serve =
      args.serveSeconds > 0
        ? await servePhase({
            only: args.serveSettings,
            after: async (key, distinct, settings) => {
              if (!wantTwoModels) return;
              if (!existsSync(path.join(crossDir, 'tokenizer.json'))) {
                shout(`NO CROSS-ENCODER in ${crossDir}: the two-model server (issue 28) is not measured`);
                return;
              }
              twoModels = await twoModelPhase({
                repoRoot,
                dataDir,
                config,
                settings,
                biDir: path.join(sharedDir, 'models', BI_ENCODER_NAME),
                crossDir,
                key,
                distinct,
                durationS: args.serveSeconds,
                workers: 2,
                variants: args.twoModelVariants,
                note,
              });
            },
            repoRoot,
            dataDir,
            config,
            modelDir: path.join(sharedDir, 'models', BI_ENCODER_NAME),
            queries: sample(allQueries, allQueries.length).map((q) => q.query),
            stageQueries: Math.min(args.queries, 200),
            durationS: args.serveSeconds,
            connections: [1, 10],
            note,
          })
        : null;
    if (twoModels) {
      const phase = twoModels as TwoModelPhase;
      const windows = [...new Set([0, phase.search.cross_encoder_window_words, 40, 30, ...args.twoModelVariants.flatMap((v) => (v['cross_encoder_window_words'] === undefined ? [] : [v['cross_encoder_window_words']]))])];
      phase.tokens = await crossEncoderTokens(runtime.index, crossDir, queries.map((q) => q.query), windows, phase.search.cross_encoder_top_n);
      note(`cross-encoder tokens per pair: ${phase.tokens.map((t) => `window ${t.window_words || 'whole'}: mean ${t.mean_tokens} (p90 ${t.p90_tokens}, where ${t.mean_where_tokens})`).join('; ')}`);
    }
    memory['after_serve'] = memorySample();
    loadAverages['after_serve'] = loadAverage();
    memory['end'] = memorySample();
    loadAverages['end'] = loadAverage();

    const targets = checkTargets({ crawlPagesPerS: crawl.pages_per_s, indexPassagesPerS: indexed.passages_per_s, search });
    targets.unshift({ name: 'crawl_pages_stored', target: `>= ${expectedPages}`, actual: crawl.pages_stored, met: crawlComplete });
    const shipped = embedding?.variants.find((v) => v.name === SHIPPED_EMBEDDING_VARIANT);
    if (shipped) {
      targets.push({ name: 'embedding_speedup_int8', target: '>= 2x the fp32 baseline (issue 12; aim 4x)', actual: shipped.speedup, met: shipped.speedup >= 2 });
    }
    if (serve) {
      const best = (connections: number, queries: 'rotating' | 'distinct') =>
        serve.load.find((r) => r.workers === 2 && r.connections === connections && r.queries === queries);
      for (const queries of ['rotating', 'distinct'] as const) {
        const ten = best(10, queries);
        const one = best(1, queries);
        if (ten) targets.push({ name: `serve_searches_per_s_10_connections_${queries}`, target: '>= 200 (issue 20)', actual: ten.searches_per_s, met: ten.searches_per_s >= 200 });
        if (one) targets.push({ name: `serve_p50_ms_1_connection_${queries}`, target: '<= 15 (issue 20)', actual: one.p50_ms, met: one.p50_ms <= 15 });
      }
    }
    if (serve) targets.push(...backendTargets(serve.load));
    const two = twoModels as TwoModelPhase | null;
    if (two) targets.push(...two.targets);
    const peakRssMb = memorySample().max_rss_mb;
    const result = {
      date: startedAt.toISOString(),
      duration_s: round2((Date.now() - startedAt.getTime()) / 1000),
      machine: machineInfo(),
      git_commit: gitCommit(repoRoot),
      load_average: loadAverages,
      args: { ...args, meilisearchKey: args.meilisearchKey ? '(given)' : null },
      index_backend: args.backend,
      corpus: { dir: docsDir, html_files: crawl.html_files, known_item_queries_available: allQueries.length, query_seed: 20261122 },
      crawl,
      index: indexed,
      reranker: {
        model_dir: modelDir,
        onnx_file: reranker.onnxPath,
        kind: reranker.kind,
        quantized: reranker.quantized,
        pairs_per_session_run: reranker.batchSize,
        ...modelRunners(config.reranker),
        max_seq_length: reranker.maxSeqLength,
        tokenizer,
        note: 'random-weight model: speed equals the real one, scores (and so reranked hit@10) mean nothing',
      },
      embedding,
      search,
      serve,
      two_models: two,
      memory: { ...memory, peak_rss_mb: peakRssMb },
      targets,
      all_targets_met: targets.every((t) => t.met),
    };

    const out = path.resolve(args.out ?? path.join(repoRoot, 'bench', 'results', `bench-${today()}${args.quick ? '-quick' : ''}.json`));
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);

    const sizeMb = indexed.index_bytes === null ? '-' : `${(indexed.index_bytes / 1024 / 1024).toFixed(1)} MB`;
    process.stdout.write(
      [
        '',
        `notary benchmark ${result.date} on ${result.machine.cpu} x${result.machine.cores}, node ${result.machine.node}, load ${loadAverages['start']?.join(' ')}`,
        '',
        formatTable(
          ['phase', 'count', 'wall s', 'cpu s', 'rate', 'per cpu-second'],
          [
            ['crawl (pages stored)', String(crawl.pages_stored), crawl.wall_s.toFixed(2), crawl.cpu_s.toFixed(2), `${crawl.pages_per_s} pages/s`, `${crawl.pages_per_cpu_s} pages`],
            [
              'index (passages)',
              String(indexed.passages),
              indexed.wall_s.toFixed(2),
              indexed.cpu_s.toFixed(2),
              `${indexed.passages_per_s} passages/s, ${indexed.pages_per_s} pages/s`,
              `${indexed.passages_per_cpu_s} passages`,
            ],
          ],
        ),
        `index size ${sizeMb}`,
        '',
        ...(embedding
          ? [
              `embedding: ${embedding.passages} passages per setting, ${embedding.rounds} interleaved rounds, load ${embedding.load_average.start.join(' ')} -> ${embedding.load_average.end.join(' ')}`,
              formatTable(
                ['setting', 'passages/s', 'x before', 'padding', 'cos min', 'cos mean', 'lever'],
                embedding.variants.map((v) => [
                  v.name,
                  v.passages_per_s.toFixed(1),
                  v.speedup.toFixed(2),
                  String(v.padding_factor ?? '-'),
                  v.cosine_vs_baseline.min.toFixed(4),
                  v.cosine_vs_baseline.mean.toFixed(4),
                  v.lever,
                ]),
              ),
              '',
            ]
          : []),
        ...(search.length > 0 ? [formatSearchTable(search), ''] : []),
        ...(serve
          ? [
              `serve phase: ${serve.vectors} vectors of ${serve.model}; depth 1 stage by stage in process (${serve.stages.queries} queries, each new to the model)`,
              formatTable(['stage', 'p50 ms', 'p95 ms', 'mean ms'], serve.stages.rows.map((r) => [r.stage, Number.isNaN(r.p50_ms) ? '-' : String(r.p50_ms), Number.isNaN(r.p95_ms) ? '-' : String(r.p95_ms), String(r.mean_ms)])),
              '',
              `index backends stage by stage (${serve.backend_stages.queries} queries, the same for each, interleaved; engine: its own processingTimeMs)`,
              formatTable(
                ['backend', 'stage', 'p50 ms', 'mean ms', 'engine calls', 'engine ms', 'round trips ms'],
                serve.backend_stages.rows.map((r) => [r.backend, r.stage, Number.isNaN(r.p50_ms) ? '-' : String(r.p50_ms), String(r.mean_ms), String(r.engine_calls), String(r.engine_ms), String(r.round_trip_ms)]),
              ),
              '',
              formatTable(
                ['backend', 'setting', 'queries', 'connections', 'searches/s', 'p50 ms', 'p99 ms', 'errors', 'load'],
                serve.load.map((r) => [r.backend, r.setting, r.queries, String(r.connections), String(r.searches_per_s), String(r.p50_ms), String(r.p99_ms), String(r.errors + r.non_2xx), r.load_average.join(' ')]),
              ),
              ...serve.notes,
              '',
            ]
          : []),
        ...(two
          ? [
              `two models (issue 28): ${path.basename(two.bi_encoder_dir)} for depth 1, ${path.basename(two.cross_encoder_dir)} from depth 2 (best ${two.search.cross_encoder_top_n}, windows of ${two.search.cross_encoder_window_words} words), ${two.workers} API processes`,
              formatTable(
                ['run', 'searches/s', 'p50 ms', 'p90 ms', 'p99 ms', 'errors', 'load before', 'load after'],
                [...two.rows.map((r) => ({ r, label: r.run })), ...two.variants.flatMap((v) => v.rows.map((r) => ({ r, label: `${r.run} (${Object.entries(v.search).map(([k, x]) => `${k} ${x}`).join(', ')})` })))].map(({ r, label }) => [
                  label,
                  String(r.searches_per_s),
                  String(r.p50_ms),
                  String(r.p90_ms),
                  String(r.p99_ms),
                  String(r.errors + r.non_2xx),
                  r.load_before.join(' '),
                  r.load_after.join(' '),
                ]),
              ),
              ...two.notes,
              '',
            ]
          : []),
        formatTable(
          ['memory', 'rss MB', 'peak rss MB'],
          Object.entries(memory).map(([phase, m]) => [phase, String(m.rss_mb), String(m.max_rss_mb)]),
        ),
        `peak RSS ${peakRssMb} MB`,
        '',
        formatTargets(targets),
        '',
        `written: ${out}`,
        '',
      ].join('\n'),
    );
    return crawlComplete ? 0 : 2;
  } finally {
    await reranker?.close();
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (args.backend === 'meilisearch' && args.meilisearchUrl) await dropMeilisearchIndexes(args.meilisearchUrl, args.meilisearchKey, stamp);
    if (databaseUrl && args.databaseUrl) await dropDatabase(args.databaseUrl, stamp);
  }
}

let args: BenchArgs;
try {
  args = parseBenchArgs(process.argv.slice(2));
  embeddingVariants(args.embedSettings); // unknown setting names fail here, before the crawl
} catch (err) {
  if (err instanceof BenchArgsError) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exit(64);
  }
  throw err;
}
main(args).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    shout(`BENCHMARK FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  },
);
