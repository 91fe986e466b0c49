import type { Worker } from 'node:worker_threads';
import { NotaryError, startAddonWorker, type AddonWorker } from '../core/index.js';
import type { AnnReply, AnnRequest, AnnWorkerConfig } from './ann-worker.js';

export interface AnnGraphOptions {
  dimensions: number;
  /** HNSW neighbours per node (M). */
  connectivity?: number;
  /** Candidate list while inserting (efConstruction). */
  expansionAdd?: number;
  /** Candidate list while searching (ef); a search asking for more candidates uses that many instead. */
  expansionSearch?: number;
  /** Threads for a full build; 0 = one per core. */
  buildThreads?: number;
}

export type AnnGraphState = 'empty' | 'building' | 'ready' | 'failed';

/** A graph file as written by `save`: what `load` checks before trusting it. */
export interface AnnGraphFile {
  file: string;
  bytes: number;
  sha256: string;
  /** Vectors in the graph. */
  size: number;
}

/** Tombstone bookkeeping (see `worthRebuilding`), kept with a saved graph so that it survives a restart. */
export interface AnnGraphWear {
  sizeAtBuild: number;
  changedSinceBuild: number;
}

type Pending = { resolve: (reply: AnnReply & { ok: true }) => void; reject: (error: Error) => void };

/** Share of the graph that may be replaced or removed since its build before a fresh build is worth its cost. */
const REBUILD_AFTER_CHANGED_SHARE = 0.25;

/** The options that shape the graph itself (a saved graph must match them), defaults filled in. */
export function graphShape(options: Pick<AnnGraphOptions, 'connectivity' | 'expansionAdd'> = {}): { connectivity: number; expansionAdd: number } {
  // A million calibrated synthetic vectors (bench/ann.ts --corpus calibrated): connectivity 16 and efConstruction
  // 40 gave recall@10 0.751 in a 183 s build; 32 and 128 gave 0.983 in 489 s, search 1.7 ms either way.
  return { connectivity: options.connectivity ?? 32, expansionAdd: options.expansionAdd ?? 128 };
}

function keysOf(ids: ArrayLike<number>, count = ids.length): BigUint64Array<ArrayBuffer> {
  const keys = new BigUint64Array(count);
  for (let i = 0; i < count; i++) keys[i] = BigInt(ids[i]!);
  return keys;
}

/**
 * An approximate nearest-neighbour graph (HNSW, usearch, int8 cosine) of passage vectors, owned by a worker thread
 * so that building it — minutes at a million vectors — never blocks the caller's event loop. Requests are answered
 * in the order they were made: a search sees every upsert and removal requested before it, including those made
 * while a build was still running. Keys are passage ids; it returns candidate ids only, for the caller to rescore
 * with exact vectors.
 */
export class AnnGraph {
  private readonly thread: AddonWorker;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;
  private building = 0;
  private built = false;
  /** Vectors in the graph when it was last built, and replaced or removed since (each leaves a tombstone). */
  private sizeAtBuild = 0;
  private changedSinceBuild = 0;
  /** Milliseconds the last full build took in the worker. */
  lastBuildMs = 0;
  /** Milliseconds the last load from a file took in the worker (hash check included), and the last save. */
  lastLoadMs = 0;
  lastSaveMs = 0;

  constructor(readonly options: AnnGraphOptions) {
    const config: AnnWorkerConfig = {
      dimensions: options.dimensions,
      ...graphShape(options),
      expansionSearch: options.expansionSearch ?? 128,
      buildThreads: options.buildThreads ?? 0,
    };
    this.thread = startAddonWorker(new URL('./ann-worker.ts', import.meta.url), config);
    this.worker = this.thread.worker;
    this.worker.unref();
    this.worker.on('message', (reply: AnnReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      if (reply.ok) waiter.resolve(reply);
      else waiter.reject(new NotaryError('internal_error', `vector graph: ${reply.error}`));
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new NotaryError('internal_error', `vector graph worker exited (code ${code})`)));
  }

  get state(): AnnGraphState {
    if (this.failure) return 'failed';
    if (this.building > 0) return 'building';
    return this.built ? 'ready' : 'empty';
  }

  /** Whether tombstones from replacements and removals have grown enough that a fresh build pays off. */
  get worthRebuilding(): boolean {
    return this.changedSinceBuild > REBUILD_AFTER_CHANGED_SHARE * Math.max(this.sizeAtBuild, 1000);
  }

  private request(message: AnnRequest, transfer: ArrayBuffer[] = []): Promise<AnnReply & { ok: true }> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.set(message.id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage(message, transfer);
    });
  }

  /**
   * Replaces the graph with the first `count` rows of `matrix` (row i has id `ids[i]`). The rows are copied, so the
   * caller may change its arrays at once; changes it requests afterwards are applied after the build, in order.
   */
  async build(ids: ArrayLike<number>, matrix: Float32Array, count: number): Promise<void> {
    const d = this.options.dimensions;
    const keys = keysOf(ids, count);
    const vectors: Float32Array<ArrayBuffer> = matrix.slice(0, count * d);
    this.building++;
    try {
      const reply = await this.request({ id: this.nextId++, op: 'build', keys, vectors }, [keys.buffer, vectors.buffer]);
      this.built = true;
      this.sizeAtBuild = reply.size;
      this.changedSinceBuild = 0;
      this.lastBuildMs = reply.ms ?? 0;
    } finally {
      this.building--;
    }
  }

  get wear(): AnnGraphWear {
    return { sizeAtBuild: this.sizeAtBuild, changedSinceBuild: this.changedSinceBuild };
  }

  /**
   * Replaces the graph with one saved by `save`, after checking the file's length and SHA-256 against `saved`.
   * Rejects when the file is missing, differs or does not load; the graph is empty then until the next build.
   */
  async load(saved: AnnGraphFile, wear: AnnGraphWear): Promise<void> {
    this.building++;
    const changedBefore = this.changedSinceBuild;
    try {
      const reply = await this.request({ id: this.nextId++, op: 'load', ...saved });
      this.built = true;
      this.sizeAtBuild = wear.sizeAtBuild;
      // Changes requested after the load (the diff to the current cache) are applied to the loaded graph.
      this.changedSinceBuild = wear.changedSinceBuild + (this.changedSinceBuild - changedBefore);
      this.lastLoadMs = reply.ms ?? 0;
    } finally {
      this.building--;
    }
  }

  /** Writes the graph, as it stands after every request made before this one, to `file` (atomically). */
  async save(file: string): Promise<AnnGraphFile> {
    const reply = await this.request({ id: this.nextId++, op: 'save', file });
    this.lastSaveMs = reply.ms ?? 0;
    return { file, bytes: reply.bytes ?? 0, sha256: reply.sha256 ?? '', size: reply.size };
  }

  /** Inserts or replaces; `vectors` holds ids.length rows. */
  async upsert(ids: readonly number[], vectors: Float32Array): Promise<void> {
    if (ids.length === 0) return;
    const keys = keysOf(ids);
    const copy: Float32Array<ArrayBuffer> = vectors.slice(0, ids.length * this.options.dimensions);
    this.changedSinceBuild += ids.length; // an upper bound: new ids leave no tombstone
    await this.request({ id: this.nextId++, op: 'upsert', keys, vectors: copy }, [keys.buffer, copy.buffer]);
  }

  async remove(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    const keys = keysOf(ids);
    this.changedSinceBuild += ids.length;
    await this.request({ id: this.nextId++, op: 'remove', keys }, [keys.buffer]);
  }

  /** Up to `k` ids near `query`, roughly best first. */
  async search(query: Float32Array, k: number): Promise<number[]> {
    const reply = await this.request({ id: this.nextId++, op: 'search', query: query.slice(), k: Math.max(1, Math.floor(k)) });
    return Array.from(reply.keys ?? [], Number);
  }

  /** Size of the graph serialised (usearch's own layout: its int8 vectors and links); writes a temporary file. */
  async bytes(): Promise<number> {
    return (await this.request({ id: this.nextId++, op: 'bytes' })).bytes ?? 0;
  }

  async close(): Promise<void> {
    this.failure ??= new NotaryError('internal_error', 'vector graph is closed');
    await this.thread.stop();
  }
}
