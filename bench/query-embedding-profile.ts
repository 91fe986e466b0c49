/**
 * Where a query embedding's CPU goes inside ONNX Runtime (issue 28): the int8 bi-encoder as the service runs it (one
 * ONNX thread, one query a run), at 3 and 8 tokens (a one-word and a six-word query).
 *
 *   npx tsx bench/query-embedding-profile.ts [--runs 300] [--rounds 4] [--out FILE]
 *
 * - the graph ORT runs after its optimisations (saved with optimizedModelFilePath): nodes by operator;
 * - ORT's own profiler (enableProfiling): kernel time by operator (the profiler adds several µs a node, so its
 *   totals are higher than an unprofiled run's; the shares are what it is for);
 * - what a run costs the binding alone (a one-node model fed the same three inputs);
 * - session-option variants and a graph with fixed input shapes (ORT then folds every shape computation), CPU a run
 *   alternating with the shipped session in rounds, and whether each gives bitwise the shipped session's hidden states.
 *
 * The model: NOTARY_INT8_MODEL, else the int8 copy notary makes at first start (see bench/query-embedding-cpu.ts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';
import type * as OnnxProto from 'onnx-proto';
import { onnxSessionOptions } from '../reranker/onnx-reranker.js';
import { BI_ENCODER_NAME, int8ModelDir } from './perf/embedding-models.js';
import { loadAverage, machineInfo } from './perf/machine.js';
import { round2 } from './perf/stats.js';

const { onnx } = createRequire(import.meta.url)('onnx-proto') as typeof OnnxProto;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '300' }, rounds: { type: 'string', default: '4' }, out: { type: 'string' } } });
const runs = Number(values.runs);
const rounds = Number(values.rounds);
const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '../shared');
const modelPath = path.join(await int8ModelDir(path.join(sharedDir, 'models', BI_ENCODER_NAME)), 'onnx', 'model_int8.onnx');
const work = mkdtempSync(path.join(tmpdir(), 'notary-embed-profile-'));
const LENGTHS = [3, 8] as const;
const shipped = onnxSessionOptions({ threads: 1, spinWait: false });

type Feeds = Record<string, ort.Tensor>;
/** [CLS] ids [SEP] of `length` tokens, batch 1; `seed` varies the ids (vocabulary ids 1000–28999). */
function feeds(length: number, seed = 0): Feeds {
  const ids = new BigInt64Array(length);
  for (let i = 1; i < length - 1; i++) ids[i] = BigInt(1000 + ((seed * 7919 + i * 104_729) % 28_000));
  ids[0] = 101n;
  ids[length - 1] = 102n;
  const dims = [1, length];
  return {
    input_ids: new ort.Tensor('int64', ids, dims),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(length).fill(1n), dims),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(length), dims),
  };
}

function opCounts(file: string): { nodes: number; by_op: Record<string, number> } {
  const graph = onnx.ModelProto.decode(readFileSync(file)).graph;
  const byOp: Record<string, number> = {};
  for (const node of graph?.node ?? []) byOp[node.opType ?? '?'] = (byOp[node.opType ?? '?'] ?? 0) + 1;
  return { nodes: graph?.node?.length ?? 0, by_op: Object.fromEntries(Object.entries(byOp).sort((a, b) => b[1] - a[1])) };
}

/** The model with inputs fixed to [1, length] and no stored shapes: what ORT makes of it when every shape is known. */
function fixedShapeModel(length: number): string {
  const model = onnx.ModelProto.decode(readFileSync(modelPath));
  for (const input of model.graph?.input ?? []) {
    const dims = input.type?.tensorType?.shape?.dim;
    if (dims) dims.splice(0, 2, { dimValue: 1 }, { dimValue: length });
  }
  if (model.graph) model.graph.valueInfo = [];
  const file = path.join(work, `fixed-${length}.onnx`);
  writeFileSync(file, onnx.ModelProto.encode(model).finish());
  return file;
}

/** A one-node model (Cast of input_ids) with the bi-encoder's three inputs: the binding's own cost of a run. */
function bindingOnlyModel(): string {
  const info = (name: string, type: number) => ({ name, type: { tensorType: { elemType: type, shape: { dim: [{ dimParam: 'batch' }, { dimParam: 'sequence' }] } } } });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ version: 17 }],
    graph: {
      name: 'binding',
      node: [{ opType: 'Cast', input: ['input_ids'], output: ['last_hidden_state'], attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: 1 }] }],
      input: [info('input_ids', 7), info('attention_mask', 7), info('token_type_ids', 7)],
      output: [info('last_hidden_state', 1)],
    },
  });
  const file = path.join(work, 'binding.onnx');
  writeFileSync(file, onnx.ModelProto.encode(model).finish());
  return file;
}

async function hidden(session: ort.InferenceSession, input: Feeds): Promise<Float32Array> {
  return (await session.run(input, ['last_hidden_state']))['last_hidden_state']?.data as Float32Array;
}

async function cpuMsPerRun(session: ort.InferenceSession, length: number, count: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await hidden(session, feeds(length, i));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / count;
}

// 1. The optimised graph.
const optimizedPath = path.join(work, 'optimized.onnx');
await (await ort.InferenceSession.create(modelPath, { ...shipped, optimizedModelFilePath: optimizedPath })).release();
const graph = { file_nodes: opCounts(modelPath).nodes, optimized: opCounts(optimizedPath) };
process.stderr.write(`[embed-profile] ${graph.file_nodes} nodes in the file, ${graph.optimized.nodes} after ORT's optimisations\n`);

// 2. ORT's profiler.
const profiled = await ort.InferenceSession.create(modelPath, { ...shipped, enableProfiling: true, profileFilePrefix: path.join(work, 'ort-profile') });
for (const length of LENGTHS) for (let i = 0; i < runs + 20; i++) await hidden(profiled, feeds(length, i));
profiled.endProfiling();
await profiled.release();
const profileFile = readdirSync(work).find((name) => name.startsWith('ort-profile') && name.endsWith('.json'));
interface Event { name: string; cat: string; ts: number; dur: number; args?: { op_name?: string } }
const events = profileFile ? (JSON.parse(readFileSync(path.join(work, profileFile), 'utf8')) as Event[]) : [];
const runEvents = events.filter((e) => e.name === 'model_run').sort((a, b) => a.ts - b.ts);
const kernels = events.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time'));
const profile = LENGTHS.map((length, li) => {
  const window = runEvents.slice(li * (runs + 20) + 20, (li + 1) * (runs + 20));
  const from = window[0]?.ts ?? 0;
  const to = (window.at(-1)?.ts ?? 0) + (window.at(-1)?.dur ?? 0);
  const byOp = new Map<string, { us: number; nodes: number }>();
  for (const k of kernels) {
    if (k.ts < from || k.ts > to) continue;
    const entry = byOp.get(k.args?.op_name ?? '?') ?? { us: 0, nodes: 0 };
    entry.us += k.dur;
    entry.nodes++;
    byOp.set(k.args?.op_name ?? '?', entry);
  }
  const n = Math.max(1, window.length);
  const kernelUs = [...byOp.values()].reduce((s, e) => s + e.us, 0) / n;
  return {
    tokens: length,
    model_run_us: round2(window.reduce((s, e) => s + e.dur, 0) / n),
    kernel_us: round2(kernelUs),
    nodes_run: round2([...byOp.values()].reduce((s, e) => s + e.nodes, 0) / n),
    by_op: [...byOp.entries()]
      .sort((a, b) => b[1].us - a[1].us)
      .map(([op, e]) => ({ op, us: round2(e.us / n), share: round2(e.us / n / kernelUs), nodes: round2(e.nodes / n) })),
  };
});

// 3. Variants, alternating with the shipped session; bitwise check against it.
const variants: Record<string, { options: ort.InferenceSession.SessionOptions; model?: (length: number) => string }> = {
  shipped: { options: shipped },
  'memory pattern off': { options: { ...shipped, enableMemPattern: false } },
  'cpu arena off': { options: { ...shipped, enableCpuMemArena: false } },
  'graph extended': { options: { ...shipped, graphOptimizationLevel: 'extended' } },
  'graph basic': { options: { ...shipped, graphOptimizationLevel: 'basic' } },
  'fixed input shapes': { options: shipped, model: (length) => fixedShapeModel(length) },
  'binding only (one Cast node)': { options: shipped, model: () => bindingOnlyModel() },
};
const cpu: Record<string, Record<number, number[]>> = {};
const bitwise: Record<string, boolean | null> = {};
const loadBefore = loadAverage();
for (const length of LENGTHS) {
  const sessions = new Map<string, ort.InferenceSession>();
  for (const [name, v] of Object.entries(variants)) sessions.set(name, await ort.InferenceSession.create(v.model?.(length) ?? modelPath, v.options));
  const reference = sessions.get('shipped') as ort.InferenceSession;
  for (const [name, session] of sessions) {
    if (name === 'shipped' || name.startsWith('binding')) continue;
    let same = true;
    for (let seed = 0; seed < 100 && same; seed++) {
      const a = await hidden(reference, feeds(length, seed));
      const b = await hidden(session, feeds(length, seed));
      same = a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
    }
    bitwise[name] = (bitwise[name] ?? true) && same;
  }
  for (const session of sessions.values()) await cpuMsPerRun(session, length, 30);
  for (let round = 0; round < rounds; round++) {
    for (const [name, session] of sessions) ((cpu[name] ??= {})[length] ??= []).push(round2(await cpuMsPerRun(session, length, runs) * 1000) / 1000);
    process.stderr.write(`[embed-profile] ${length} tokens, round ${round + 1}: ${[...sessions.keys()].map((name) => `${name} ${cpu[name]?.[length]?.at(-1)?.toFixed(3)}`).join(', ')} ms\n`);
  }
  for (const session of sessions.values()) await session.release();
}
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const result = {
  date: new Date().toISOString(),
  machine: machineInfo(),
  load_average: { before: loadBefore, after: loadAverage() },
  settings: { model: modelPath, runs_per_round: runs, rounds, session: 'one ONNX thread, one query a run, graph level all (as notary runs the bi-encoder)' },
  graph,
  ort_profiler: profile,
  cpu_ms_per_run: Object.fromEntries(
    Object.entries(cpu).map(([name, byLength]) => [
      name,
      Object.fromEntries(LENGTHS.map((length) => [`${length}_tokens`, { rounds: byLength[length] ?? [], mean: round2((mean(byLength[length] ?? []) * 1000)) / 1000 }])),
    ]),
  ),
  bitwise_equal_to_shipped: bitwise,
};
rmSync(work, { recursive: true, force: true });
const json = `${JSON.stringify(result, null, 2)}\n`;
if (values.out) writeFileSync(values.out, json);
process.stdout.write(json);
