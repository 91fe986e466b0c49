/**
 * A worker thread that owns one ONNX Runtime session. Loaded by reranker/onnx-runner.ts as a Worker; Node runs this
 * file with its built-in type stripping, so it uses erasable TypeScript only and imports nothing of ours.
 * onnxruntime-node runs a session on the thread that calls it, so a model in the main thread blocks its event loop
 * for the whole run; here it blocks only this thread, and several workers run on several cores at once.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

export interface OnnxWorkerConfig {
  onnxPath: string;
  sessionOptions: ort.InferenceSession.SessionOptions;
}

export interface OnnxWorkerFeed {
  data: BigInt64Array;
  dims: number[];
}

export type OnnxWorkerRequest = { id: number; feeds: Record<string, OnnxWorkerFeed>; output: string };

/** Lowers this thread's CPU priority (Linux: the nice value of the thread alone); answered with `niced`. */
export type OnnxWorkerNice = { kind: 'nice'; value: number };

export type OnnxWorkerReply =
  | { kind: 'ready'; inputNames: string[]; outputNames: string[] }
  | { kind: 'load_failed'; error: string }
  | { kind: 'result'; id: number; data: Float32Array; dims: number[] }
  | { kind: 'run_failed'; id: number; error: string }
  | { kind: 'niced'; ok: boolean };

const config = workerData as OnnxWorkerConfig;
const port = parentPort;

async function main(): Promise<void> {
  if (!port) return;
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(config.onnxPath, config.sessionOptions);
  } catch (err) {
    port.postMessage({ kind: 'load_failed', error: (err as Error).message } satisfies OnnxWorkerReply);
    return;
  }
  port.on('message', (request: OnnxWorkerRequest | OnnxWorkerNice) => {
    if ('kind' in request) {
      let ok = true;
      try {
        setPriority(0, request.value);
      } catch {
        ok = false;
      }
      port.postMessage({ kind: 'niced', ok } satisfies OnnxWorkerReply);
      return;
    }
    void run(session, request).then(
      (reply) => port.postMessage(reply, reply.kind === 'result' ? [reply.data.buffer as ArrayBuffer] : []),
      (err: unknown) => port.postMessage({ kind: 'run_failed', id: request.id, error: (err as Error).message } satisfies OnnxWorkerReply),
    );
  });
  port.postMessage({ kind: 'ready', inputNames: [...session.inputNames], outputNames: [...session.outputNames] } satisfies OnnxWorkerReply);
}

async function run(session: ort.InferenceSession, request: OnnxWorkerRequest): Promise<OnnxWorkerReply> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const [name, feed] of Object.entries(request.feeds)) feeds[name] = new ort.Tensor('int64', feed.data, feed.dims);
  const results = await session.run(feeds, [request.output]);
  const output = results[request.output];
  if (!output || output.type !== 'float32') return { kind: 'run_failed', id: request.id, error: `output ${request.output} is not float32` };
  return { kind: 'result', id: request.id, data: output.data as Float32Array, dims: [...output.dims] };
}

void main();
