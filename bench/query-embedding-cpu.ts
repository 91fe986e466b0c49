/**
 * CPU a query embedding costs (issue 28): the bi-encoder's fp32 model and its int8 copy, each loaded as the service
 * loads it (OnnxReranker, one ONNX thread, one query a run), embedding distinct queries in rounds that alternate the
 * two models, then synthetic queries of 1, 6, 14 and 30 words (is the cost the query's length or the model's?).
 *
 *   npx tsx bench/query-embedding-cpu.ts [--queries 400] [--rounds 4] [--workers 0] [--out FILE]
 *
 * --workers 1 runs each model in a worker thread as the service does (0: in this thread); the main thread's own share
 * (tokenizing, the message hops, pooling) is then reported apart, from /proc/thread-self/schedstat (Linux).
 *
 * The models: $NOTARY_SHARED_DIR/models/all-MiniLM-L6-v2 (default ../shared) and its int8 copy (NOTARY_INT8_MODEL, else
 * the copy notary makes at first start, in ~/.cache/notary/models/all-MiniLM-L6-v2-int8).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OnnxReranker } from '../reranker/index.js';
import { BI_ENCODER_NAME, int8ModelDir } from './perf/embedding-models.js';
import { loadAverage, machineInfo } from './perf/machine.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { queries: { type: 'string', default: '400' }, rounds: { type: 'string', default: '4' }, workers: { type: 'string', default: '0' }, out: { type: 'string' } } });
const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '../shared');
const fp32Dir = path.join(sharedDir, 'models', BI_ENCODER_NAME);
const int8Dir = await int8ModelDir(fp32Dir);
const workers = Number(values.workers);
const models = {
  fp32: await OnnxReranker.load(fp32Dir, { threads: 1, workers, batchSize: 1, maxSeqLength: 256, source: 'bench', onnxFile: path.join('onnx', 'model.onnx') }),
  int8: await OnnxReranker.load(int8Dir, { threads: 1, workers, batchSize: 1, maxSeqLength: 256, source: 'bench', onnxFile: path.join('onnx', 'model_int8.onnx') }),
};

// Distinct queries of 3 to 8 words from a database vocabulary (no query repeats within a model's rounds).
const words = 'vacuum dead tuples planner statistics restore base backup standby index write cost replication slot wal archive checkpoint autovacuum freeze transaction isolation lock table partition trigger function'.split(' ');
const count = Number(values.queries);
const rounds = Number(values.rounds);
const queriesOf = (round: number) => Array.from({ length: count }, (_, i) => Array.from({ length: 3 + (i % 6) }, (_, j) => words[(i * 7 + j * 13 + round * 5) % words.length]).join(' ') + ` q${round}-${i}`);

/** CPU nanoseconds this thread has run (exact over a long interval; null where /proc has no schedstat). */
const threadNs = (): number | null => (existsSync('/proc/thread-self/schedstat') ? Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]) : null);
const mainThread: Record<'fp32' | 'int8', number[]> = { fp32: [], int8: [] };

async function cpuMsPerQuery(model: OnnxReranker, queries: readonly string[], main?: number[]): Promise<number> {
  const start = process.cpuUsage();
  const mainStart = threadNs();
  for (const query of queries) await model.embed([query]);
  const used = process.cpuUsage(start);
  const mainEnd = threadNs();
  if (main && mainStart !== null && mainEnd !== null) main.push((mainEnd - mainStart) / 1e6 / queries.length);
  return (used.user + used.system) / 1000 / queries.length;
}

for (const model of Object.values(models)) await cpuMsPerQuery(model, queriesOf(99).slice(0, 30)); // warm-up
const loadBefore = loadAverage();
const distinct: Record<'fp32' | 'int8', number[]> = { fp32: [], int8: [] };
for (let round = 0; round < rounds; round++) {
  for (const name of ['fp32', 'int8'] as const) {
    distinct[name].push(await cpuMsPerQuery(models[name], queriesOf(round * 2 + (name === 'int8' ? 1 : 0)), mainThread[name]));
    process.stderr.write(`[query-embedding] round ${round + 1}: ${name} ${distinct[name].at(-1)?.toFixed(2)} ms CPU a query\n`);
  }
}
// By length: most of these words are one token of the tokenizer (a few are two), plus [CLS] and [SEP].
const byLength: Array<{ words: number; fp32: number; int8: number }> = [];
for (const length of [1, 6, 14, 30]) {
  const queries = Array.from({ length: 100 }, (_, i) => Array.from({ length }, (_, j) => words[(i + j) % words.length]).join(' '));
  byLength.push({ words: length, fp32: await cpuMsPerQuery(models.fp32, queries), int8: await cpuMsPerQuery(models.int8, queries) });
}
const result = {
  date: new Date().toISOString(),
  machine: machineInfo(),
  load_average: { before: loadBefore, after: loadAverage() },
  settings: { threads: 1, workers, queries_per_round: count, rounds, fp32: fp32Dir, int8: int8Dir },
  distinct_cpu_ms_per_query: distinct,
  ...(workers > 0 ? { distinct_main_thread_cpu_ms_per_query: mainThread } : {}),
  by_length_cpu_ms_per_query: byLength,
};
for (const model of Object.values(models)) await model.close();
const json = `${JSON.stringify(result, null, 2)}\n`;
if (values.out) writeFileSync(values.out, json);
process.stdout.write(json);
