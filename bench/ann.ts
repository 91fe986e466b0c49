/**
 * Vector search at scale (issue 20, item 4): a synthetic corpus of clustered 384-dimension unit vectors (default a
 * million passages) stored through SqlVectorIndex in SQLite, searched exactly and through the HNSW graph
 * (embeddings.ann_above), plus — when the evaluation cache holds them — real all-MiniLM-L6-v2 passage vectors.
 * Reports index time, cache load and graph build time, memory (RSS and the graph's own bytes), search p50/p99 at one
 * connection and in-process QPS, recall@10 against the exact scan. Optional: a synthetic full-text corpus in FTS5.
 *
 *   npm run bench:scale -- [--passages 1000000] [--queries 1000] [--recall-queries 100] [--fts 1000000]
 *     [--corpus clustered|calibrated] [--out FILE]
 *
 * --corpus calibrated: topics that vary along a few directions each, matched to the real vectors' neighbourhood
 * statistics (CALIBRATED_CORPUS); clustered (the default): isotropic noise around each topic, much harder.
 *
 * Writes JSON under bench/results/ (or --out) and prints it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { SqlVectorIndex } from '../indexer/sql-vector-index.js';
import { decodeVector } from '../indexer/vector-encoding.js';
import { evalCacheDir } from './eval/embedding-cache.js';
import { gitCommit, loadAverage, machineInfo, memorySample } from './perf/machine.js';
import { perSecond, round2, summarise } from './perf/stats.js';
import { CALIBRATED_CORPUS, ClusteredCorpus, DEFAULT_CORPUS, neighbourhoodStats, recallAtK, seedPassageRows, seededRandom } from '../testkit/synthetic-vectors.js';
import { runFullTextScale } from './perf/fts-scale.js';
import { positiveInt } from './perf/args.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MB = 1024 * 1024;
const PER_PAGE = 10;
const WRITE_BATCH = 5000;
const K = 10;

const { values: args } = parseArgs({
  options: {
    passages: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '1000' },
    'recall-queries': { type: 'string', default: '100' },
    'ann-above': { type: 'string', default: '50000' },
    fts: { type: 'string', default: '0' },
    'skip-real': { type: 'boolean', default: false },
    corpus: { type: 'string', default: 'clustered' },
    out: { type: 'string' },
  },
});
const passages = positiveInt('--passages', args.passages, 1);
const timedQueries = positiveInt('--queries', args.queries, 1);
const recallQueries = positiveInt('--recall-queries', args['recall-queries'], 1);
const annAbove = positiveInt('--ann-above', args['ann-above'], 1);
const ftsDocs = positiveInt('--fts', args.fts, 0);
const CORPORA = { clustered: DEFAULT_CORPUS, calibrated: CALIBRATED_CORPUS } as const;
if (!(args.corpus in CORPORA)) throw new Error(`--corpus must be one of ${Object.keys(CORPORA).join(', ')}, got ${args.corpus}`);
const corpusOptions = CORPORA[args.corpus as keyof typeof CORPORA];
/** Vectors compared for neighbourhood statistics: the size of the real evaluation set. */
const STATS_VECTORS = 19_417;

const gc = (globalThis as { gc?: () => void }).gc;
const log = (message: string) => process.stderr.write(`[bench:scale ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const progress = (what: string, done: number, total: number, started: number) => {
  const elapsed = (performance.now() - started) / 1000;
  const rate = done / Math.max(elapsed, 1e-9);
  log(`${what}: ${done.toLocaleString('en')}/${total.toLocaleString('en')} (${Math.round(rate).toLocaleString('en')}/s, ${Math.round((total - done) / rate)} s left)`);
};
const load = () => ({ load_average: loadAverage() });
const round3 = (x: number) => Math.round(x * 1000) / 1000;

async function timeSearches(index: SqlVectorIndex, queries: readonly Float32Array[], options: { limit: number; perPageLimit?: number }) {
  const latencies: number[] = [];
  const ids: number[][] = [];
  const started = performance.now();
  for (const query of queries) {
    const t = performance.now();
    const hits = await index.search(query, options);
    latencies.push(performance.now() - t);
    ids.push(hits.map((h) => h.id));
  }
  return { latencies, ids, totalMs: performance.now() - started };
}

async function freshnessCheckMs(storage: Storage, model: string, dimensions: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    await storage.db
      .selectFrom('passage_vectors')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.max('seq').as('m')])
      .where('model', '=', model)
      .where('dimensions', '=', dimensions)
      .executeTakeFirstOrThrow();
    out.push(performance.now() - t);
  }
  return out;
}

async function syntheticVectors(dir: string) {
  const corpus = new ClusteredCorpus(corpusOptions);
  const d = corpus.options.dimensions;
  const model = 'bench-clustered';
  const neighbourhood = neighbourhoodStats(
    Array.from({ length: STATS_VECTORS }, (_, i) => {
      const v = new Float32Array(d);
      corpus.passage(i, v);
      return v;
    }),
  );
  log(`neighbourhoods of the first ${STATS_VECTORS.toLocaleString('en')} synthetic passages: ${JSON.stringify(neighbourhood)}`);
  const file = path.join(dir, 'vectors.sqlite');
  const storage = openSqlite(file);
  await migrateToLatest(storage);
  let t = performance.now();
  seedPassageRows(storage.sqlite!, passages, PER_PAGE);
  const rowsMs = performance.now() - t;
  log(`passage rows: ${passages.toLocaleString('en')} in ${Math.round(rowsMs)} ms`);

  const writer = new SqlVectorIndex(storage, { model, dimensions: d });
  t = performance.now();
  const batch = new Float32Array(WRITE_BATCH * d);
  for (let start = 0; start < passages; start += WRITE_BATCH) {
    const items = [];
    for (let i = start; i < Math.min(passages, start + WRITE_BATCH); i++) {
      const row = i - start;
      corpus.passage(i, batch, row);
      items.push({ id: i + 1, pageId: Math.floor(i / PER_PAGE) + 1, vector: batch.subarray(row * d, row * d + d) });
    }
    await writer.upsert(items);
    if ((start / WRITE_BATCH) % 20 === 19) progress('vectors stored', start + items.length, passages, t);
  }
  const storeMs = performance.now() - t;
  await writer.close();
  const stored = { passages, store_ms: Math.round(storeMs), per_second: perSecond(passages, storeMs), sqlite_mb: Math.round(statSync(file).size / MB), ...load() };
  log(`vectors stored in ${Math.round(storeMs / 1000)} s (${stored.sqlite_mb} MB)`);

  const recallSet = Array.from({ length: recallQueries }, (_, q) => corpus.query(q, passages));
  const timedSet = Array.from({ length: timedQueries }, (_, q) => corpus.query(recallQueries + q, passages));

  // Exact scan first (its own cache), closed before the graph is built so the two caches never coexist.
  const exactIndex = new SqlVectorIndex(storage, { model, dimensions: d });
  t = performance.now();
  await exactIndex.search(recallSet[0]!, { limit: K });
  const exactLoadMs = performance.now() - t;
  log(`exact: cache loaded in ${Math.round(exactLoadMs)} ms; ${recallQueries} exact searches`);
  const exact = await timeSearches(exactIndex, recallSet, { limit: K });
  const exactMemory = memorySample();
  const exactLoad = load();
  await exactIndex.close();
  const freshness = summarise(await freshnessCheckMs(storage, model, d));
  gc?.();

  const annIndex = new SqlVectorIndex(storage, { model, dimensions: d, ann: { above: annAbove, waitForBuild: true } });
  t = performance.now();
  log(`approximate: loading the cache and building the graph`);
  await annIndex.search(recallSet[0]!, { limit: K });
  const firstSearchMs = performance.now() - t;
  const buildMs = annIndex.approximate?.lastBuildMs ?? null;
  gc?.();
  const annMemory = memorySample();
  log(`approximate: first search ${Math.round(firstSearchMs / 1000)} s (graph build ${Math.round((buildMs ?? 0) / 1000)} s); timing ${timedQueries} searches`);
  await timeSearches(annIndex, timedSet.slice(0, Math.min(50, timedSet.length)), { limit: K }); // warm-up
  const timedLoad = load();
  const timed = await timeSearches(annIndex, timedSet, { limit: K });
  const perPage = await timeSearches(annIndex, timedSet.slice(0, Math.min(200, timedSet.length)), { limit: K, perPageLimit: 2 });
  const approx = await timeSearches(annIndex, recallSet, { limit: K });
  // The breadth of the graph search against recall, on the same queries (the default is the row above).
  const byCandidates = [];
  const defaultCandidates = annIndex.approximate!.minCandidates;
  for (const candidates of [50, 100, 200, 400]) {
    annIndex.approximate!.minCandidates = candidates;
    const run = await timeSearches(annIndex, recallSet, { limit: K });
    byCandidates.push({ min_candidates: candidates, recall_at_10: round3(recallAtK(exact.ids, run.ids, K)), search_ms: summarise(run.latencies), ...load() });
  }
  annIndex.approximate!.minCandidates = defaultCandidates;
  const graphBytes = await annIndex.approximate?.graphBytes();
  const answered = annIndex.approximate?.answered ?? 0;
  await annIndex.close();
  await storage.close();
  rmSync(file, { force: true });

  return {
    corpus: { name: args.corpus, ...corpus.options, passages, passages_per_page: PER_PAGE, queries: corpus.options.queries === 'held-out' ? 'held-out passages of the same distribution' : 'each near a random passage (querySpread noise)' },
    neighbourhood_at_real_size: neighbourhood,
    index: stored,
    exact: {
      cache_load_ms: Math.round(exactLoadMs),
      search_ms: summarise(exact.latencies),
      memory: exactMemory,
      ...exactLoad,
    },
    freshness_check_ms: freshness,
    approximate: {
      ann_above: annAbove,
      first_search_ms: Math.round(firstSearchMs),
      graph_build_ms: buildMs === null ? null : Math.round(buildMs),
      memory: annMemory,
      cache_mb: Math.round((passages * d * 4) / MB),
      graph_mb: graphBytes == null ? null : round2(graphBytes / MB),
      search_ms: summarise(timed.latencies),
      qps_one_connection: perSecond(timed.latencies.length, timed.totalMs),
      per_page_limit_2_search_ms: summarise(perPage.latencies),
      searches_answered_by_graph: answered,
      recall_at_10: round3(recallAtK(exact.ids, approx.ids, K)),
      by_candidates: byCandidates,
      recall_queries: recallQueries,
      ...timedLoad,
    },
  };
}

/** Real all-MiniLM-L6-v2 passage vectors from the evaluation cache (bench/eval), if present: recall on real data. */
async function realVectors(dir: string) {
  const cacheFile = path.join(evalCacheDir(), 'embeddings.sqlite');
  if (!existsSync(cacheFile)) return { skipped: `no evaluation embedding cache at ${cacheFile} (run npm run eval:search with the real model first)` };
  const cache = new BetterSqlite3(cacheFile, { readonly: true });
  const models = cache.prepare<[], { model: string; n: number }>('select model, count(*) as n from embeddings group by model order by n desc').all();
  const model = models.find((m) => m.model.startsWith('all-MiniLM-L6-v2'))?.model;
  if (!model) {
    cache.close();
    return { skipped: `the evaluation cache holds no all-MiniLM-L6-v2 vectors (${models.map((m) => m.model).join(', ')})` };
  }
  const rows = cache.prepare<[string], { vector: Buffer }>('select vector from embeddings where model = ? order by text_sha256').all(model);
  cache.close();
  const d = 384;
  const vectors = rows.map((r) => decodeVector(r.vector, d));
  // Hold out 500 (a seeded choice) as queries; the rest is the corpus.
  const random = seededRandom(7);
  const order = vectors.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const queries = order.slice(0, 500).map((i) => vectors[i]!);
  const corpus = order.slice(500).map((i) => vectors[i]!);
  const file = path.join(dir, 'real.sqlite');
  const storage = openSqlite(file);
  await migrateToLatest(storage);
  seedPassageRows(storage.sqlite!, corpus.length, PER_PAGE);
  const writer = new SqlVectorIndex(storage, { model, dimensions: d });
  await writer.upsert(corpus.map((vector, i) => ({ id: i + 1, pageId: Math.floor(i / PER_PAGE) + 1, vector })));
  await writer.close();
  const exactIndex = new SqlVectorIndex(storage, { model, dimensions: d });
  await exactIndex.search(queries[0]!, { limit: K });
  const exact = await timeSearches(exactIndex, queries, { limit: K });
  await exactIndex.close();
  const annIndex = new SqlVectorIndex(storage, { model, dimensions: d, ann: { above: 1, waitForBuild: true } });
  await annIndex.search(queries[0]!, { limit: K });
  const approx = await timeSearches(annIndex, queries, { limit: K });
  const buildMs = annIndex.approximate?.lastBuildMs ?? null;
  await annIndex.close();
  await storage.close();
  return {
    source: `${cacheFile}: ${model}`,
    passages: corpus.length,
    neighbourhood: neighbourhoodStats(vectors),
    queries: `${queries.length} held-out passage vectors`,
    graph_build_ms: buildMs === null ? null : Math.round(buildMs),
    exact_search_ms: summarise(exact.latencies),
    approximate_search_ms: summarise(approx.latencies),
    recall_at_10: round3(recallAtK(exact.ids, approx.ids, K)),
    ...load(),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-bench-scale-'));
  const started = new Date();
  try {
    log(`machine load ${loadAverage().join(' ')}; ${passages.toLocaleString('en')} synthetic passages`);
    const real = args['skip-real'] ? { skipped: '--skip-real' } : await realVectors(dir);
    log(`real vectors: ${JSON.stringify(real)}`);
    const synthetic = await syntheticVectors(dir);
    log(`synthetic vectors: ${JSON.stringify(synthetic)}`);
    const out = args.out ?? path.join(root, 'bench', 'results', `scale-${started.toISOString().slice(0, 10)}.json`);
    const write = (fullText: unknown) => {
      const result = {
        benchmark: 'scale',
        date: started.toISOString().slice(0, 10),
        commit: gitCommit(root),
        machine: machineInfo(),
        argv: process.argv.slice(2),
        real_vectors: real,
        synthetic_vectors: synthetic,
        full_text: fullText,
        peak_rss_mb: memorySample().max_rss_mb,
      };
      mkdirSync(path.dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
      return result;
    };
    // Written now too, so the vector results survive a full-text phase that is cut short.
    write({ pending: true });
    const fullText = ftsDocs > 0 ? await runFullTextScale(dir, ftsDocs, log) : { skipped: 'pass --fts N to index N synthetic documents in FTS5' };
    console.log(JSON.stringify(write(fullText), null, 2));
    log(`written ${path.relative(root, out)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
