/**
 * A whole depth-1 search at a million passages (issue 20): the product's search pipeline — the real query model,
 * FTS5 passages and whole pages, the vector stage (HNSW above embeddings.ann_above), fusion, scoring from stored
 * vectors, snippets — over a data folder of synthetic passages, timed at one connection in process.
 *
 * Passages are Zipf text over a made-up vocabulary (bench/perf/fts-scale.ts), ten to a page, with clustered unit
 * vectors (bench/perf/synthetic-vectors.ts) stored under the real model's id: the vectors do not mean what the text
 * says, so this measures time and memory, not relevance. Queries are 2 or 3 words of middle frequency, and a smaller
 * series of common words (which match a large share of all passages).
 *
 * Whole searches are timed three ways, query by query in rotating order: as shipped (at this size passages are ranked
 * on two read-only connections in worker threads, half of the rows each, and whole pages on a third), with passages
 * ranked on the main thread (whole pages on the page reader), and with both full-text queries on the main thread.
 *
 *   npx tsx bench/million.ts [--passages 1000000] [--queries 200] [--data DIR] [--out FILE]
 *
 * --data DIR keeps the data folder (and reuses it when it already holds the passages): the store phase takes minutes.
 */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { configSchema } from '../core/config.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import { SqlVectorIndex } from '../indexer/sql-vector-index.js';
import type { IndexDoc, PageDoc } from '../indexer/search-index.js';
import { Runtime, silentLog } from '../runtime/index.js';
import { vocabulary, zipfSampler } from './perf/fts-scale.js';
import { gitCommit, loadAverage, machineInfo, memorySample } from './perf/machine.js';
import { perSecond, round2, summarise } from './perf/stats.js';
import { ClusteredCorpus, DEFAULT_CORPUS, seedPassageRows, seededRandom } from '../testkit/synthetic-vectors.js';
import { positiveInt } from './perf/args.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PER_PAGE = 10;
const BATCH = 10_000;
const MB = 1024 * 1024;

const { values: args } = parseArgs({
  options: {
    passages: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '200' },
    data: { type: 'string' },
    out: { type: 'string' },
  },
});
const passages = positiveInt('--passages', args.passages, PER_PAGE);
const timedQueries = positiveInt('--queries', args.queries, 10);
const modelDir = process.env['NOTARY_BENCH_MODEL'] ?? path.join(root, '..', 'shared', 'models', 'all-MiniLM-L6-v2');
const log = (message: string) => process.stderr.write(`[bench:million ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const progress = (what: string, done: number, started: number) => {
  const elapsed = (performance.now() - started) / 1000;
  const rate = done / Math.max(elapsed, 1e-9);
  log(`${what}: ${done.toLocaleString('en')}/${passages.toLocaleString('en')} (${Math.round(rate).toLocaleString('en')}/s, ${Math.round((passages - done) / rate)} s left)`);
};

/** Reads a file start to end (into the page cache); returns its size in bytes. */
function readWholeFile(file: string): number {
  const fd = openSync(file, 'r');
  try {
    const chunk = Buffer.allocUnsafe(8 * MB);
    let total = 0;
    for (let n = readSync(fd, chunk, 0, chunk.length, null); n > 0; n = readSync(fd, chunk, 0, chunk.length, null)) total += n;
    return total;
  } finally {
    closeSync(fd);
  }
}

/** The kernel's page cache in MB (Linux; null elsewhere). */
function pageCacheMb(): number | null {
  try {
    const kb = /^Cached:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : null;
  } catch {
    return null;
  }
}

const kept = args.data !== undefined;
const dir = kept ? path.resolve(args.data!) : mkdtempSync(path.join(tmpdir(), 'notary-million-'));
if (kept) mkdirSync(dir, { recursive: true });
const reused = kept && existsSync(path.join(dir, 'notary.sqlite'));
const config = configSchema.parse({
  data_dir: dir,
  reranker: { model_dir: modelDir, cache_dir: process.env['NOTARY_MODEL_CACHE_DIR'] ?? path.join(homedir(), '.cache', 'notary', 'models'), download: false },
  embeddings: { model: 'reranker' },
  // Every timed query is new: no cache of repeated queries answers it.
  search: { query_vector_cache: 0 },
  indexer: { 'sqlite-fts5': { ranking_cache: 0 } },
});
const runtime = await Runtime.open(config, { log: silentLog });
try {
  const { dense, off } = await runtime.dense();
  if (!dense) throw new Error(`dense retrieval is off: ${off ?? 'unknown reason'}`);
  const raw = runtime.storage.sqlite;
  if (!raw) throw new Error('the embedded SQLite storage is needed');
  log(`machine load ${loadAverage().join(' ')}; ${passages.toLocaleString('en')} passages, model ${dense.embedder.model}`);

  // Text: the same Zipf words as the full-text scale bench, generated on the fly batch by batch.
  const words = vocabulary(50_000);
  const rank = zipfSampler(words.length, seededRandom(99));
  const text = (n: number) => Array.from({ length: n }, () => words[rank()]!).join(' ');
  const corpus = new ClusteredCorpus(DEFAULT_CORPUS);
  const d = corpus.options.dimensions;
  if (dense.embedder.dimensions !== d) throw new Error(`the model has ${dense.embedder.dimensions} dimensions, the synthetic vectors ${d}`);
  const stored = reused ? (raw.prepare('SELECT count(*) AS n FROM passages').get() as { n: number }).n : 0;
  if (reused && stored !== passages) throw new Error(`${dir} holds ${stored} passages, not ${passages}: give another --data folder`);
  let rowsMs = 0;
  let ftsMs = 0;
  let vectorsMs = 0;
  if (!reused) {
    let t = performance.now();
    seedPassageRows(raw, passages, PER_PAGE);
    rowsMs = performance.now() - t;
    t = performance.now();
    for (let start = 0; start < passages; start += BATCH) {
      const docs: IndexDoc[] = [];
      const pages: PageDoc[] = [];
      for (let i = start; i < Math.min(passages, start + BATCH); i++) {
        const pageId = Math.floor(i / PER_PAGE) + 1;
        const url = `http://bench.test/${pageId - 1}`;
        const doc: IndexDoc = { id: i + 1, pageId, url, title: text(6), headingPath: text(2), text: text(60), language: 'en' };
        docs.push(doc);
        const page = pages.at(-1);
        if (page?.pageId === pageId) {
          page.headings += ` ${doc.headingPath}`;
          page.text += ` ${doc.text}`;
        } else {
          pages.push({ pageId, url, title: doc.title, headings: doc.headingPath, text: doc.text, language: 'en' });
        }
      }
      await runtime.index.upsert(docs);
      await runtime.index.upsertPages(pages);
      if ((start / BATCH) % 10 === 9) progress('full text indexed', start + docs.length, t);
    }
    ftsMs = performance.now() - t;

    const writer = new SqlVectorIndex(runtime.storage, { model: dense.embedder.model, dimensions: d });
    t = performance.now();
    const batch = new Float32Array(5000 * d);
    for (let start = 0; start < passages; start += 5000) {
      const items = [];
      for (let i = start; i < Math.min(passages, start + 5000); i++) {
        const row = i - start;
        corpus.passage(i, batch, row);
        items.push({ id: i + 1, pageId: Math.floor(i / PER_PAGE) + 1, vector: batch.subarray(row * d, row * d + d) });
      }
      await writer.upsert(items);
      if ((start / 5000) % 40 === 39) progress('vectors stored', start + items.length, t);
    }
    vectorsMs = performance.now() - t;
    await writer.close();
    raw.pragma('wal_checkpoint(TRUNCATE)');
    log(`stored: rows ${Math.round(rowsMs / 1000)} s, full text ${Math.round(ftsMs / 1000)} s, vectors ${Math.round(vectorsMs / 1000)} s`);
  }
  const sqliteMb = Math.round(statSync(path.join(dir, 'notary.sqlite')).size / MB);
  // The vector index the service opens, told to wait for its graph (the service scans exactly while it builds).
  const vectors = new SqlVectorIndex(runtime.storage, { model: dense.embedder.model, dimensions: d, ann: { above: config.embeddings.ann_above, waitForBuild: true } });
  const reranker = await runtime.reranker();
  const pipeline = runtime.searchPipeline({ reranker, dense: { ...dense, index: vectors } });
  // The settings compared with the shipped one (both readers at this size): whole pages on the page reader only
  // (passages on the main thread), and both full-text queries on the main thread.
  const pageReaderOnly = new Fts5SearchIndex(raw, { rankingCache: 0, pageReader: true });
  const oneThread = new Fts5SearchIndex(raw, { rankingCache: 0 });
  const settings = [
    { name: 'shipped', pipeline },
    { name: 'page_reader_only', pipeline: runtime.searchPipeline({ reranker, dense: { ...dense, index: vectors }, index: pageReaderOnly }) },
    { name: 'main_thread_only', pipeline: runtime.searchPipeline({ reranker, dense: { ...dense, index: vectors }, index: oneThread }) },
  ];
  const queryRandom = seededRandom(7);
  const pick = (from: number, to: number) => words[from + Math.floor(queryRandom() * (to - from))]!;
  const middle = () => Array.from({ length: 2 + Math.floor(queryRandom() * 2) }, () => pick(200, 5000)).join(' ');
  const firstStarted = performance.now();
  await pipeline.search({ query: middle(), depth: 1 });
  const firstSearchMs = performance.now() - firstStarted;
  log(`first search (loads the vectors, builds the graph): ${Math.round(firstSearchMs / 1000)} s`);
  const afterBuild = memorySample();
  // The database file read once before the timed series, as a running service's page cache holds its hot pages: on
  // these machines the kernel gives back page cache during the graph build, and full text then waits on the disk.
  const warmStarted = performance.now();
  const warmedMb = readWholeFile(path.join(dir, 'notary.sqlite')) / MB;
  log(`read the database file (${Math.round(warmedMb)} MB) in ${Math.round(performance.now() - warmStarted)} ms`);

  const series = async (name: string, query: () => string, n: number) => {
    const cacheAtStart = pageCacheMb();
    const whole = new Map<string, number[]>(settings.map((setting) => [setting.name, []]));
    const fullText: number[] = [];
    const vector: number[] = [];
    let results = 0;
    for (let i = 0; i < n + 5; i++) {
      const q = query();
      // The settings in rotating order, so none always comes first (colder caches) or last.
      for (let k = 0; k < settings.length; k++) {
        const setting = settings[(i + k) % settings.length]!;
        const started = performance.now();
        const outcome = await setting.pipeline.search({ query: q, depth: 1 });
        const ms = performance.now() - started;
        if (i < 5) continue;
        whole.get(setting.name)!.push(ms);
        if (setting.name === 'shipped') results += outcome.results.length;
      }
      // The stages alone, after the whole searches.
      let s = performance.now();
      await runtime.index.search(q, { limit: 30, perPageLimit: 3, filter: { excludeNavigation: true } });
      await runtime.index.searchPages(q, { limit: 20, filter: { excludeNavigation: true } });
      const ftsMs = performance.now() - s;
      const [v] = await dense.embedder.embed([q]);
      s = performance.now();
      if (v) await vectors.search(v, { limit: 30, perPageLimit: 3 });
      const vectorMs = performance.now() - s;
      if (i < 5) continue;
      fullText.push(ftsMs);
      vector.push(vectorMs);
    }
    const shipped = summarise(whole.get('shipped')!);
    const row = {
      name,
      queries: n,
      mean_results: round2(results / n),
      whole_search_ms: shipped,
      whole_search_page_reader_only_ms: summarise(whole.get('page_reader_only')!),
      whole_search_both_queries_on_main_thread_ms: summarise(whole.get('main_thread_only')!),
      full_text_ms: summarise(fullText),
      vector_search_ms: summarise(vector),
      searches_per_s_one_connection: round2(1000 / shipped.mean),
      load_average: loadAverage(),
      page_cache_mb: { start: cacheAtStart, end: pageCacheMb() },
    };
    log(
      `${name}: whole search p50 ${row.whole_search_ms.p50} ms, p99 ${row.whole_search_ms.p99} ms ` +
        `(passages on the main thread: p50 ${row.whole_search_page_reader_only_ms.p50}; both full-text queries there: ` +
        `p50 ${row.whole_search_both_queries_on_main_thread_ms.p50}); ` +
        `full text p50 ${row.full_text_ms.p50}, vectors p50 ${row.vector_search_ms.p50}`,
    );
    return row;
  };
  const middleRow = await series('2-3 words of middle frequency (ranks 200..5,000)', middle, timedQueries);
  const commonRow = await series('2 common words (ranks 0..50)', () => `${pick(0, 50)} ${pick(0, 50)}`, Math.max(10, Math.round(timedQueries / 5)));

  const result = {
    benchmark: 'million',
    date: new Date().toISOString(),
    commit: gitCommit(root),
    machine: machineInfo(),
    argv: process.argv.slice(2),
    model: dense.embedder.model,
    corpus: { passages, pages: Math.ceil(passages / PER_PAGE), vocabulary: words.length, words_per_passage: 68, vectors: 'clustered synthetic (bench/perf/synthetic-vectors.ts DEFAULT_CORPUS)' },
    store: {
      reused_data_folder: reused,
      rows_ms: Math.round(rowsMs),
      full_text_ms: Math.round(ftsMs),
      full_text_per_s: perSecond(passages, ftsMs),
      vectors_ms: Math.round(vectorsMs),
      sqlite_mb: sqliteMb,
    },
    ann_above: config.embeddings.ann_above,
    first_search_ms: Math.round(firstSearchMs),
    memory_after_build: afterBuild,
    series: [middleRow, commonRow],
    memory_end: memorySample(),
    notes: ['one connection, in process, every query new (query-vector and ranking caches off); the vectors do not match the text, so relevance is not measured'],
  };
  const out = args.out ?? path.join(root, 'bench', 'results', `million-${result.date.slice(0, 10)}.json`);
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  log(`written: ${out}`);
} finally {
  await runtime.close();
  if (!kept) rmSync(dir, { recursive: true, force: true });
}
