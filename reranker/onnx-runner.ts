import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { NotaryError } from '../core/index.js';
import type { OnnxWorkerConfig, OnnxWorkerNice, OnnxWorkerReply, OnnxWorkerRequest } from './onnx-worker.js';

/** One int64 input of a run: row-major data and its shape. */
export interface OnnxFeed {
  data: BigInt64Array;
  dims: number[];
}

export interface OnnxOutput {
  data: Float32Array;
  dims: readonly number[];
}

/** Runs one ONNX model: in the calling thread, or spread over worker threads that each own a session. */
export interface OnnxRunner {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Runs that can proceed at once. */
  readonly parallelism: number;
  /** `feeds`' buffers may be handed to another thread: the caller must not use them afterwards. */
  run(feeds: Record<string, OnnxFeed>, output: string): Promise<OnnxOutput>;
  /** Waits for the runs under way, then frees the sessions. */
  release(): Promise<void>;
  /**
   * Lowers the CPU priority of the worker threads to nice `value` (0..19), so that other work of the machine (another
   * model's searches) goes first; whether every worker took it. In-process runners do not (false).
   */
  lowerPriority?(value: number): Promise<boolean>;
  /** Worker pools: starts worker threads (each with its own session) until there are `count`. */
  growTo?(count: number): Promise<void>;
}

/**
 * A runner for `onnxPath`: `workers` 0 runs in this thread (one run at a time: concurrent runs would only fight over
 * the same intra-op threads), otherwise that many worker threads, each with its own session of `sessionOptions`.
 */
export async function openOnnxRunner(onnxPath: string, sessionOptions: ort.InferenceSession.SessionOptions, workers: number): Promise<OnnxRunner> {
  try {
    if (workers <= 0) return new InProcessRunner(await ort.InferenceSession.create(onnxPath, sessionOptions));
    return await WorkerPoolRunner.open({ onnxPath, sessionOptions }, workers);
  } catch (err) {
    if (err instanceof NotaryError) throw err;
    throw new NotaryError('model_unavailable', `cannot load ONNX model ${onnxPath}: ${(err as Error).message}`);
  }
}

function inferenceFailed(message: string): NotaryError {
  return new NotaryError('internal_error', `reranker inference failed: ${message}`);
}

class InProcessRunner implements OnnxRunner {
  readonly parallelism = 1;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly session: ort.InferenceSession) {}

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }

  run(feeds: Record<string, OnnxFeed>, output: string): Promise<OnnxOutput> {
    const task = async (): Promise<OnnxOutput> => {
      const tensors: Record<string, ort.Tensor> = {};
      for (const [name, feed] of Object.entries(feeds)) tensors[name] = new ort.Tensor('int64', feed.data, feed.dims);
      let results: ort.InferenceSession.OnnxValueMapType;
      try {
        results = await this.session.run(tensors, [output]);
      } catch (err) {
        throw inferenceFailed((err as Error).message);
      }
      const tensor = results[output];
      if (!tensor || tensor.type !== 'float32') throw inferenceFailed(`output ${output} is not float32`);
      return { data: tensor.data as Float32Array, dims: tensor.dims };
    };
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async release(): Promise<void> {
    await this.queue;
    await this.session.release();
  }
}

interface Task {
  request: OnnxWorkerRequest;
  resolve: (output: OnnxOutput) => void;
  reject: (error: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  task: Task | null;
}

class WorkerPoolRunner implements OnnxRunner {
  private readonly waiting: Task[] = [];
  private nextId = 1;
  private failure: Error | null = null;
  private drained: (() => void) | null = null;

  /** The nice value the workers were given (new ones get it too). */
  private nice = 0;

  private constructor(
    private readonly workers: PoolWorker[],
    readonly inputNames: readonly string[],
    readonly outputNames: readonly string[],
    private readonly config: OnnxWorkerConfig,
  ) {
    for (const slot of workers) this.listen(slot);
  }

  private listen(slot: PoolWorker): void {
    slot.worker.on('message', (reply: OnnxWorkerReply) => this.settle(slot, reply));
    const fail = (error: Error) => this.fail(error);
    slot.worker.on('error', fail);
    slot.worker.on('exit', (code) => fail(inferenceFailed(`model worker thread exited (code ${code})`)));
  }

  async growTo(count: number): Promise<void> {
    const more = count - this.workers.length;
    if (more <= 0 || this.failure) return;
    const started = Array.from({ length: more }, () => new Worker(new URL('./onnx-worker.ts', import.meta.url), { workerData: this.config }));
    const replies = await Promise.allSettled(started.map((worker) => firstReply(worker)));
    const failed = replies.find((reply) => reply.status === 'rejected');
    if (failed) {
      await Promise.all(started.map((worker) => worker.terminate()));
      throw failed.reason instanceof Error ? failed.reason : new Error('a model worker did not start');
    }
    const slots = started.map((worker) => ({ worker, task: null }));
    for (const slot of slots) {
      slot.worker.unref();
      if (this.nice > 0) await this.niceOne(slot, this.nice);
      this.listen(slot);
      this.workers.push(slot);
    }
    this.dispatch();
  }

  static async open(config: OnnxWorkerConfig, count: number): Promise<WorkerPoolRunner> {
    const started = Array.from({ length: count }, () => new Worker(new URL('./onnx-worker.ts', import.meta.url), { workerData: config }));
    // Every worker is heard from before any is stopped: terminating a thread inside ONNX Runtime's session creation
    // can abort the whole process.
    const replies = await Promise.allSettled(started.map((worker) => firstReply(worker)));
    const failed = replies.find((reply) => reply.status === 'rejected');
    const first = replies[0];
    if (failed || !first || first.status !== 'fulfilled') {
      await Promise.all(started.map((worker) => worker.terminate()));
      throw failed?.reason instanceof Error ? failed.reason : new Error('no model worker started');
    }
    for (const worker of started) worker.unref();
    return new WorkerPoolRunner(
      started.map((worker) => ({ worker, task: null })),
      first.value.inputNames,
      first.value.outputNames,
      config,
    );
  }

  get parallelism(): number {
    return this.workers.length;
  }

  async lowerPriority(value: number): Promise<boolean> {
    this.nice = value;
    return (await Promise.all(this.workers.map((slot) => this.niceOne(slot, value)))).every(Boolean);
  }

  private niceOne(slot: PoolWorker, value: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 5_000);
      const onReply = (reply: OnnxWorkerReply) => {
        if (reply.kind !== 'niced') return;
        slot.worker.off('message', onReply);
        clearTimeout(timer);
        resolve(reply.ok);
      };
      slot.worker.on('message', onReply);
      slot.worker.postMessage({ kind: 'nice', value } satisfies OnnxWorkerNice);
    });
  }

  run(feeds: Record<string, OnnxFeed>, output: string): Promise<OnnxOutput> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({ request: { id: this.nextId++, feeds, output }, resolve, reject });
      this.dispatch();
    });
  }

  async release(): Promise<void> {
    if (this.busy()) await new Promise<void>((resolve) => (this.drained = resolve));
    this.failure ??= new NotaryError('service_unavailable', 'the model has been released');
    await Promise.all(this.workers.map((slot) => slot.worker.terminate()));
  }

  private busy(): boolean {
    return this.waiting.length > 0 || this.workers.some((slot) => slot.task !== null);
  }

  private dispatch(): void {
    for (const slot of this.workers) {
      if (slot.task) continue;
      const task = this.waiting.shift();
      if (!task) break;
      slot.task = task;
      slot.worker.ref();
      const buffers = Object.values(task.request.feeds).map((feed) => feed.data.buffer as ArrayBuffer);
      slot.worker.postMessage(task.request, buffers);
    }
  }

  private settle(slot: PoolWorker, reply: OnnxWorkerReply): void {
    const task = slot.task;
    if (!task || (reply.kind !== 'result' && reply.kind !== 'run_failed') || reply.id !== task.request.id) return;
    slot.task = null;
    slot.worker.unref();
    if (reply.kind === 'result') task.resolve({ data: reply.data, dims: reply.dims });
    else task.reject(inferenceFailed(reply.error));
    this.dispatch();
    if (!this.busy() && this.drained) {
      this.drained();
      this.drained = null;
    }
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    const pending = [...this.waiting, ...this.workers.flatMap((slot) => (slot.task ? [slot.task] : []))];
    this.waiting.length = 0;
    for (const slot of this.workers) slot.task = null;
    for (const task of pending) task.reject(error);
    this.drained?.();
    this.drained = null;
  }
}

/** A new worker's first message: ready with the session's names, or why it could not load the model. */
function firstReply(worker: Worker): Promise<{ inputNames: string[]; outputNames: string[] }> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`model worker thread exited while loading (code ${code})`));
    worker.once('error', reject);
    worker.once('exit', onExit);
    worker.once('message', (reply: OnnxWorkerReply) => {
      worker.off('error', reject);
      worker.off('exit', onExit);
      if (reply.kind === 'ready') resolve({ inputNames: reply.inputNames, outputNames: reply.outputNames });
      else reject(new Error(reply.kind === 'load_failed' ? reply.error : `unexpected first message ${reply.kind}`));
    });
  });
}
