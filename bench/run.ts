/**
 * notary's performance benchmark (`npm run bench`): crawl -> index -> search on Debian's postgresql-doc-15 HTML served
 * from 127.0.0.1, side by side in one process. Prints a summary table and writes JSON under bench/results/.
 * Flags: see bench/perf/args.ts (--quick, --queries N, --out FILE, ...).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchema, loadConfig, modelRunners, serveWorkers } from '../core/config.js';
import { OnnxReranker } from '../reranker/index.js';
import { Runtime } from '../runtime/index.js';
import { createDatabase, dropDatabase } from '../testkit/postgres.js';
import { dropMeilisearchIndexes } from './perf/backends.js';
import { knownItemQueries, requirePgDocs, sample } from '../testkit/pgdocs.js';
import { BenchArgsError, parseBenchArgs, USAGE, type BenchArgs } from './perf/args.js';
import { embeddingVariants, SHIPPED_EMBEDDING_VARIANT } from './perf/embedding.js';
import { backendTargets, otherCpuMsPerSearch } from './perf/load-runner.js';
import { servePhase, withVectors } from './perf/serve-phase.js';
import { crossEncoderTokens, twoModelPhase, type TwoModelPhase } from './perf/two-models.js';
import { gitCommit, loadAverage, machineInfo, memorySample, type MemorySample } from './perf/machine.js';
import { checkTargets, formatSearchTable, formatTable, formatTargets } from './perf/report.js';
import { round2 } from './perf/stats.js';
import { note } from './perf/note.js';
import { crawlPhase, indexPhase, searchPhase, tokenizerPhase } from './perf/corpus-phases.js';
import { postgresCompanion, type PostgresCompanion } from './perf/postgres-companion.js';
import { BI_ENCODER_NAME, embeddingPhase } from './perf/embedding-models.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RERANK_MODEL_NAME = 'ms-marco-MiniLM-L-6-v2';

function shout(message: string): void {
  const bar = '!'.repeat(Math.min(100, message.length + 4));
  process.stderr.write(`\n${bar}\n! ${message}\n${bar}\n\n`);
}

function today(): string {
  return new Date().toISOString().slice(0, 10);
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
      indexer: withVectors(
        {
          backend: args.backend,
          ...(args.meilisearchUrl ? { meilisearch: { url: args.meilisearchUrl, index: stamp, ...(args.meilisearchKey ? { api_key: args.meilisearchKey } : {}) } } : {}),
        },
        args.vectors[0],
      ),
      ...(databaseUrl ? { storage: { driver: 'postgres', postgres_url: databaseUrl } } : {}),
    },
  });
  note(`index backend: ${args.backend}${databaseUrl ? ' (storage in PostgreSQL)' : ''}`);
  const runtime = await Runtime.open(config, { env: {}, log: (level, message) => (level === 'warn' ? note(`warning: ${message}`) : undefined) });
  let reranker: OnnxReranker | null = null;
  let postgres: PostgresCompanion | null = null;
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

    if (args.withPostgres && args.databaseUrl && args.serveSeconds > 0) {
      postgres = await postgresCompanion({ serverUrl: args.databaseUrl, name: `${stamp}_pg`, dataDir, docsDir, concurrency: args.concurrency, note });
    }

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
            vectors: args.vectors.slice(1),
            companions: postgres ? [postgres] : [],
            after: async (key, distinct, settings, warmUp) => {
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
                warmUp,
                durationS: args.serveSeconds,
                // What a user gets: the shipped process count (server.workers), not one named by hand.
                workers: serveWorkers(configSchema.parse({})),
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
      ...(postgres ? { postgres_beside: { crawl: postgres.crawl, index: postgres.index } } : {}),
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
                ['backend', 'setting', 'queries', 'connections', 'searches/s', 'p50 ms', 'p99 ms', 'errors', 'CPU ms a search: server / machine / other', 'load'],
                serve.load.map((r) => [
                  r.backend,
                  r.setting,
                  r.queries,
                  String(r.connections),
                  String(r.searches_per_s),
                  String(r.p50_ms),
                  String(r.p99_ms),
                  String(r.errors + r.non_2xx),
                  `${r.server_cpu_ms_per_search ?? '-'} / ${r.machine_cpu_ms_per_search ?? '-'} / ${otherCpuMsPerSearch(r) ?? '-'}`,
                  r.load_average.join(' '),
                ]),
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
              `resident memory of the servers after their runs: ${two.rss_mb.map((m) => `${m.workers} API process${m.workers === 1 ? '' : 'es'} ${m.rss_mb ?? '?'} MB`).join(', ')}`,
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
    if (args.keepData) {
      console.log(`kept (--keep-data): data folder ${dataDir}${args.backend === 'sqlite-fts5' ? '' : `, ${args.backend} index or database "${stamp}"`}${postgres ? `, PostgreSQL database "${stamp}_pg"` : ''}`);
    } else {
      rmSync(dataDir, { recursive: true, force: true });
      if (args.backend === 'meilisearch' && args.meilisearchUrl) await dropMeilisearchIndexes(args.meilisearchUrl, args.meilisearchKey, stamp);
      if (databaseUrl && args.databaseUrl) await dropDatabase(args.databaseUrl, stamp);
      await postgres?.drop();
    }
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
