/**
 * Restarting with a saved HNSW graph (embeddings.ann_persist) against building it again: a SQLite data folder of
 * clustered synthetic vectors (bench/perf/synthetic-vectors.ts DEFAULT_CORPUS, 384 dimensions), one build that is
 * saved, then fresh SqlVectorIndex instances on fresh connections — what a restarted process opens — timed to their
 * first search answered by the graph, loading the saved graph and building it in alternating order. A last restart
 * follows writes by another instance since the save (the diff path). Recall@10 of each graph against the exact scan.
 *
 *   npx tsx bench/ann-restart.ts [--vectors 200000] [--rounds 2] [--changed 4000] [--data DIR] [--out FILE]
 *
 * --data DIR keeps the data folder (and reuses its vectors when it holds as many). Every run here reads the SQLite
 * file from the page cache warm, both ways alike.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SqlVectorIndex, type SqlVectorIndexOptions } from '../indexer/sql-vector-index.js';
import { migrateToLatest, openSqlite } from '../storage/db.js';
import { gitCommit, loadAverage, machineInfo, memorySample } from './perf/machine.js';
import { round2 } from './perf/stats.js';
import { ClusteredCorpus, DEFAULT_CORPUS, recallAtK, seedPassageRows } from '../testkit/synthetic-vectors.js';
import { positiveInt } from './perf/args.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PER_PAGE = 10;
const BATCH = 5000;
const MODEL = 'bench-synthetic';
const MB = 1024 * 1024;

const { values: args } = parseArgs({
  options: {
    vectors: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '2' },
    changed: { type: 'string', default: '4000' },
    queries: { type: 'string', default: '50' },
    data: { type: 'string' },
    out: { type: 'string' },
  },
});
const vectors = positiveInt('--vectors', args.vectors, 1000);
const rounds = positiveInt('--rounds', args.rounds, 1);
const changed = positiveInt('--changed', args.changed, 0);
const queryCount = positiveInt('--queries', args.queries, 1);
const log = (message: string) => process.stderr.write(`[bench:ann-restart ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const d = DEFAULT_CORPUS.dimensions;
const corpus = new ClusteredCorpus(DEFAULT_CORPUS);
const dir = args.data ?? mkdtempSync(path.join(tmpdir(), 'notary-ann-restart-'));
const file = path.join(dir, 'notary.sqlite');
const graphDirectory = `${file}.hnsw`;
const queries = Array.from({ length: queryCount }, (_, q) => corpus.query(q, vectors));
const ann = (directory?: string): SqlVectorIndexOptions['ann'] => ({ above: 50_000, waitForBuild: true, ...(directory ? { directory } : {}) });

async function storeVectors(): Promise<void> {
  const storage = openSqlite(file);
  await migrateToLatest(storage);
  const stored = (storage.sqlite!.prepare('SELECT count(*) AS n FROM passage_vectors').get() as { n: number }).n;
  if (stored === vectors) {
    log(`reusing ${vectors} vectors in ${file}`);
    await storage.close();
    return;
  }
  if (stored !== 0) throw new Error(`${file} holds ${stored} vectors, not ${vectors}: give another --data folder`);
  seedPassageRows(storage.sqlite!, vectors, PER_PAGE);
  const writer = new SqlVectorIndex(storage, { model: MODEL, dimensions: d });
  const batch = new Float32Array(BATCH * d);
  const started = performance.now();
  for (let start = 0; start < vectors; start += BATCH) {
    const items = [];
    for (let i = start; i < Math.min(vectors, start + BATCH); i++) {
      corpus.passage(i, batch, i - start);
      items.push({ id: i + 1, pageId: Math.floor(i / PER_PAGE) + 1, vector: batch.subarray((i - start) * d, (i - start + 1) * d) });
    }
    await writer.upsert(items);
  }
  await writer.close();
  storage.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
  await storage.close();
  log(`stored ${vectors} vectors in ${Math.round((performance.now() - started) / 1000)} s`);
}

interface Restart {
  mode: 'saved graph' | 'build' | 'exact only' | 'saved graph + diff';
  first_search_ms: number;
  builds: number;
  restores: number;
  graph_load_ms: number | null;
  graph_build_ms: number | null;
  restore_skipped: string | null;
  recall_at_10: number | null;
  answered_by_graph: number;
  load_1m: number;
}

/** A fresh connection and index, as a restarted process opens them; timed to its first search. */
async function restart(mode: Restart['mode'], exact: number[][] | null): Promise<{ row: Restart; answers: number[][] }> {
  const storage = openSqlite(file);
  const options = mode === 'exact only' ? undefined : ann(mode === 'build' ? undefined : graphDirectory);
  const index = new SqlVectorIndex(storage, { model: MODEL, dimensions: d, ...(options ? { ann: options } : {}) });
  const started = performance.now();
  const first = await index.search(queries[0]!, { limit: 10 });
  const firstMs = performance.now() - started;
  const answers = [first.map((h) => h.id)];
  for (const query of queries.slice(1)) answers.push((await index.search(query, { limit: 10 })).map((h) => h.id));
  const approximate = index.approximate;
  const row: Restart = {
    mode,
    first_search_ms: Math.round(firstMs),
    builds: approximate?.builds ?? 0,
    restores: approximate?.restores ?? 0,
    graph_load_ms: approximate?.lastLoadMs === null || !approximate ? null : Math.round(approximate.lastLoadMs),
    graph_build_ms: approximate?.lastBuildMs === null || !approximate ? null : Math.round(approximate.lastBuildMs),
    restore_skipped: approximate?.restoreSkipped ?? null,
    recall_at_10: exact ? round2(recallAtK(exact, answers, 10)) : null,
    answered_by_graph: approximate?.answered ?? 0,
    load_1m: loadAverage()[0],
  };
  await approximate?.settled();
  await index.close();
  await storage.close();
  log(`${mode}: first search ${row.first_search_ms} ms (builds ${row.builds}, restores ${row.restores}, recall@10 ${row.recall_at_10 ?? '-'})`);
  return { row, answers };
}

function graphFiles(): { name: string; mb: number }[] {
  if (!existsSync(graphDirectory)) return [];
  return readdirSync(graphDirectory).map((name) => ({ name, mb: round2(statSync(path.join(graphDirectory, name)).size / MB) }));
}

try {
  await storeVectors();
  rmSync(graphDirectory, { recursive: true, force: true });
  const { row: exactRow, answers: exact } = await restart('exact only', null);

  // The first build, saved: what a process pays once.
  const storage = openSqlite(file);
  const first = new SqlVectorIndex(storage, { model: MODEL, dimensions: d, ann: ann(graphDirectory) });
  const t = performance.now();
  await first.search(queries[0]!, { limit: 10 });
  const firstBuildMs = performance.now() - t;
  await first.approximate!.settled();
  const saveMs = first.approximate!.lastSaveMs ?? Number.NaN;
  const memoryAfterBuild = memorySample();
  await first.close();
  await storage.close();
  const files = graphFiles();
  log(`first build ${Math.round(firstBuildMs / 1000)} s, then saved in ${Math.round(saveMs)} ms: ${files.map((f) => `${f.name} ${f.mb} MB`).join(', ')}`);

  const restarts: Restart[] = [exactRow];
  for (let round = 0; round < rounds; round++) {
    const order: Restart['mode'][] = round % 2 === 0 ? ['saved graph', 'build'] : ['build', 'saved graph'];
    for (const mode of order) restarts.push((await restart(mode, exact)).row);
  }

  // Another instance writes while none serves: `changed` vectors replaced; the restart applies them as a diff.
  if (changed > 0) {
    const writerStorage = openSqlite(file);
    const writer = new SqlVectorIndex(writerStorage, { model: MODEL, dimensions: d });
    const batch = new Float32Array(changed * d);
    const items = [];
    for (let i = 0; i < changed; i++) {
      const id = 1 + Math.floor((i * vectors) / changed);
      corpus.passage(id - 1, batch, i); // the same vectors under a new write seq: the diff reinserts them all
      items.push({ id, pageId: Math.floor((id - 1) / PER_PAGE) + 1, vector: batch.subarray(i * d, (i + 1) * d) });
    }
    await writer.upsert(items);
    await writer.close();
    await writerStorage.close();
    restarts.push((await restart('saved graph + diff', exact)).row);
  }

  const median = (mode: Restart['mode']) => {
    const values = restarts.filter((r) => r.mode === mode).map((r) => r.first_search_ms).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? null;
  };
  const savedMs = median('saved graph');
  const buildMs = median('build');
  const result = {
    benchmark: 'ann-restart',
    date: new Date().toISOString(),
    commit: gitCommit(root),
    machine: machineInfo(),
    argv: process.argv.slice(2),
    corpus: { vectors, dimensions: d, vectors_from: 'clustered synthetic (bench/perf/synthetic-vectors.ts DEFAULT_CORPUS)' },
    graph: { connectivity: 32, expansion_add: 128, quantization: 'i8', files },
    first_build_ms: Math.round(firstBuildMs),
    save_after_build_ms: Math.round(saveMs),
    memory_after_first_build: memoryAfterBuild,
    restarts,
    first_search_median_ms: { saved_graph: savedMs, build: buildMs, exact_only: exactRow.first_search_ms },
    build_over_saved: savedMs && buildMs ? round2(buildMs / savedMs) : null,
    notes: [
      'first_search_ms: from opening a fresh index (a restarted process) to its first search, which loads the float32 cache from SQLite and waits for the graph (the service would scan exactly meanwhile)',
      '"exact only" is the cache load plus one exact scan: the part of a restart the graph does not change',
      'graph_load_ms includes the SHA-256 check of the graph file; save_after_build_ms is the worker writing the graph file (SHA-256 and fsync included), which the first search after the build waits behind here',
    ],
  };
  const out = args.out ?? path.join(root, 'bench', 'results', `ann-restart-${result.date.slice(0, 10)}.json`);
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  log(`written: ${out}`);
} finally {
  if (!args.data) rmSync(dir, { recursive: true, force: true });
}
