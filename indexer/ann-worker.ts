/**
 * The worker thread that owns an HNSW graph (usearch). Loaded by indexer/ann-graph.ts as a Worker; Node runs this
 * file with its built-in type stripping, so it uses erasable TypeScript only and imports nothing of ours.
 * Messages are handled one at a time in arrival order, so a search sees every change posted before it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { Index, MetricKind, ScalarKind } from 'usearch';

export interface AnnWorkerConfig {
  dimensions: number;
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
  /** Threads for building; 0 = one per core. */
  buildThreads: number;
}

export type AnnRequest =
  | { id: number; op: 'build'; keys: BigUint64Array; vectors: Float32Array }
  | { id: number; op: 'upsert'; keys: BigUint64Array; vectors: Float32Array }
  | { id: number; op: 'remove'; keys: BigUint64Array }
  | { id: number; op: 'search'; query: Float32Array; k: number }
  | { id: number; op: 'bytes' }
  /** Writes the graph to `file` atomically (a temporary file renamed over it once complete and synced). */
  | { id: number; op: 'save'; file: string }
  /** Replaces the graph with the one saved in `file`, refusing a file whose length or SHA-256 differ from these. */
  | { id: number; op: 'load'; file: string; bytes: number; sha256: string; size: number };

export type AnnReply =
  | { id: number; ok: true; size: number; keys?: BigUint64Array; bytes?: number; sha256?: string; ms?: number }
  | { id: number; ok: false; error: string };

const config = workerData as AnnWorkerConfig;
// usearch loaded its addon when imported: core/addon-worker.ts may terminate this thread from now on.
const loaded = new Int32Array((workerData as { addonLoaded: SharedArrayBuffer }).addonLoaded);
Atomics.store(loaded, 0, 1);
Atomics.notify(loaded, 0);
let index: Index | null = null;

function fresh(): Index {
  // i8 cosine: a quarter of float32's memory and about twice as fast to build; the caller rescores candidates with
  // the exact float32 vectors, so the quantisation costs ranking nothing beyond which candidates come back.
  return new Index({
    dimensions: config.dimensions,
    metric: MetricKind.Cos,
    quantization: ScalarKind.I8,
    connectivity: config.connectivity,
    expansion_add: config.expansionAdd,
    expansion_search: config.expansionSearch,
    multi: false,
  });
}

function current(): Index {
  index ??= fresh();
  return index;
}

function serializedBytes(graph: Index): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-ann-'));
  try {
    const file = path.join(dir, 'graph.usearch');
    graph.save(file);
    return statSync(file).size;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Length and SHA-256 of a file, read in chunks; `sync` also flushes it to disk. */
function digest(file: string, sync: boolean): { bytes: number; sha256: string } {
  const fd = openSync(file, 'r');
  try {
    const hash = createHash('sha256');
    const chunk = Buffer.allocUnsafe(8 << 20);
    let bytes = 0;
    for (let n; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0; bytes += n) hash.update(chunk.subarray(0, n));
    if (sync) fsyncSync(fd);
    return { bytes, sha256: hash.digest('hex') };
  } finally {
    closeSync(fd);
  }
}

function saveAtomically(graph: Index, file: string): { bytes: number; sha256: string } {
  const temporary = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    graph.save(temporary);
    const written = digest(temporary, true);
    renameSync(temporary, file);
    return written;
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function loadVerified(message: { file: string; bytes: number; sha256: string; size: number }): Index {
  const found = digest(message.file, false);
  if (found.bytes !== message.bytes || found.sha256 !== message.sha256) {
    throw new Error(`${message.file} is not the graph its manifest describes (${found.bytes} bytes, expected ${message.bytes})`);
  }
  const graph = fresh();
  graph.load(message.file);
  if (graph.size() !== message.size || graph.dimensions() !== config.dimensions || graph.connectivity() !== config.connectivity) {
    throw new Error(`${message.file} holds ${graph.size()} vectors of ${graph.dimensions()} dimensions, expected ${message.size} of ${config.dimensions}`);
  }
  return graph;
}

function handle(message: AnnRequest): AnnReply {
  const started = performance.now();
  switch (message.op) {
    case 'build': {
      const next = fresh();
      if (message.keys.length > 0) next.add(message.keys, message.vectors, config.buildThreads);
      index = next;
      return { id: message.id, ok: true, size: next.size(), ms: performance.now() - started };
    }
    case 'upsert': {
      const graph = current();
      if (message.keys.length === 0) return { id: message.id, ok: true, size: graph.size() };
      const present = graph.contains(message.keys);
      const existing = message.keys.filter((_, i) => (Array.isArray(present) ? present[i] : present));
      if (existing.length > 0) graph.remove(existing);
      graph.add(message.keys, message.vectors, 1);
      return { id: message.id, ok: true, size: graph.size() };
    }
    case 'remove': {
      const graph = current();
      if (message.keys.length > 0) graph.remove(message.keys);
      return { id: message.id, ok: true, size: graph.size() };
    }
    case 'search': {
      const graph = current();
      if (graph.size() === 0) return { id: message.id, ok: true, size: 0, keys: new BigUint64Array(0) };
      const found = graph.search(message.query, message.k, 1);
      return { id: message.id, ok: true, size: graph.size(), keys: found.keys };
    }
    case 'bytes': {
      const graph = current();
      return { id: message.id, ok: true, size: graph.size(), bytes: serializedBytes(graph) };
    }
    case 'save': {
      const graph = current();
      const { bytes, sha256 } = saveAtomically(graph, message.file);
      return { id: message.id, ok: true, size: graph.size(), bytes, sha256, ms: performance.now() - started };
    }
    case 'load': {
      // On failure the graph is left empty: the caller rebuilds it, and requests queued before then apply harmlessly.
      index = null;
      index = loadVerified(message);
      return { id: message.id, ok: true, size: index.size(), ms: performance.now() - started };
    }
  }
}

parentPort?.on('message', (message: AnnRequest) => {
  let reply: AnnReply;
  try {
    reply = handle(message);
  } catch (error) {
    reply = { id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(reply);
});
