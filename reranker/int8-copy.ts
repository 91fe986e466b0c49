import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { NotaryError } from '../core/index.js';
import { findInt8Copy } from './model-cache.js';
import { acquireModelLock } from './model-lock.js';
import { OnnxReranker } from './onnx-reranker.js';
import { dot } from './pooling.js';
import { quantizeDynamicInt8 } from './quantize-int8.js';
import { sha256File } from './sha256.js';

/** Making the int8 copy of a bi-encoder, `<cacheDir>/<name>-int8/`, the folder scripts/quantize-minilm.sh writes. */

export type Int8Log = (level: 'info' | 'warn', msg: string) => void;

/** Files of the model folder copied beside the int8 model (as scripts/quantize-minilm.py copies them). */
const COPIED = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt', 'config.json'] as const;
const DEFAULT_LOCK_TIMEOUT_MS = 120_000;

export const INT8_METHOD =
  'notary TypeScript port of onnxruntime.quantization.quantize_dynamic(weight_type=QInt8, per_channel=True, reduce_range=False): ' +
  'MatMul weights int8 per column, symmetric; Gather tables uint8 per tensor';

/** A made copy must give a probe sentence nearly the fp32 model's vector (int8 copies measured 0.98–0.999). */
const MIN_PROBE_COSINE = 0.95;
const PROBE = 'How do I vacuum a PostgreSQL table without locking it?';

/** Loads both models (one thread) and compares their vectors of one sentence: the copy runs and means the same. */
async function probeCosine(srcDir: string, copyDir: string): Promise<number> {
  const options = { threads: 1, batchSize: 1, maxSeqLength: 256, source: 'config' };
  const fp32 = await OnnxReranker.load(srcDir, { ...options, onnxFile: path.join('onnx', 'model.onnx') });
  try {
    const int8 = await OnnxReranker.load(copyDir, { ...options, onnxFile: path.join('onnx', 'model_int8.onnx') });
    try {
      const [a] = await fp32.embed([PROBE]);
      const [b] = await int8.embed([PROBE]);
      return a && b && a.length === b.length ? dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b)) : 0;
    } finally {
      await int8.close();
    }
  } finally {
    await fp32.close();
  }
}

export interface MadeInt8Copy {
  dir: string;
  onnxFile: string;
  /** False when another process had made it (or it was already there). */
  made: boolean;
  ms: number;
}

/**
 * Makes the int8 copy of the fp32 bi-encoder in `srcDir` as `<cacheDir>/<basename>-int8/` unless one exists: under the
 * model lock `<cacheDir>/.<basename>-int8.lock` (two processes starting at once make it once: the second waits, then
 * finds it), written into a temporary folder renamed into place. Throws model_unavailable with the reason on failure.
 */
export async function makeInt8Copy(
  srcDir: string,
  cacheDir: string,
  options: { log: Int8Log; lockTimeoutMs?: number },
): Promise<MadeInt8Copy> {
  const started = Date.now();
  const name = `${path.basename(srcDir)}-int8`;
  const target = path.join(cacheDir, name);
  const present = (): MadeInt8Copy | null => {
    const copy = findInt8Copy(srcDir, cacheDir);
    return 'dir' in copy ? { dir: copy.dir, onnxFile: copy.onnxFile, made: false, ms: Date.now() - started } : null;
  };
  const already = present();
  if (already) return already;
  const source = path.join(srcDir, 'onnx', 'model.onnx');
  if (!existsSync(source)) throw new NotaryError('model_unavailable', `no ${source} to make an int8 copy from`);
  await mkdir(cacheDir, { recursive: true });
  const release = await acquireModelLock(cacheDir, name, {
    timeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
    onWait: (owner) => options.log('info', `embeddings: waiting for ${owner ? `pid ${owner.pid} on ${owner.host}` : 'another process'}, which is making ${name}`),
  });
  const temp = path.join(cacheDir, `.${name}.making-${process.pid}`);
  try {
    const again = present();
    if (again) return again;
    options.log('info', `embeddings: making the int8 copy of ${srcDir} in ${target} (dynamic quantisation, once; a few seconds)`);
    await rm(temp, { recursive: true, force: true });
    await mkdir(path.join(temp, 'onnx'), { recursive: true });
    const fp32 = await readFile(source);
    let { bytes, stats } = quantizeDynamicInt8(fp32);
    await writeFile(path.join(temp, 'onnx', 'model_int8.onnx'), bytes);
    for (const file of COPIED) {
      if (existsSync(path.join(srcDir, file))) await copyFile(path.join(srcDir, file), path.join(temp, file));
    }
    let check: number;
    try {
      check = await probeCosine(srcDir, temp);
    } catch (err) {
      // Shapes this inference got wrong for an unfamiliar graph make onnxruntime refuse it: the copy without them
      // computes the same thing, only without the fusions the shapes allow.
      options.log('warn', `embeddings: the int8 copy with inferred shapes does not load (${err instanceof Error ? err.message : String(err)}); making it without them`);
      ({ bytes, stats } = quantizeDynamicInt8(fp32, { shapes: false }));
      await writeFile(path.join(temp, 'onnx', 'model_int8.onnx'), bytes);
      check = await probeCosine(srcDir, temp);
    }
    if (!(check >= MIN_PROBE_COSINE)) throw new Error(`its vector of a probe sentence has cosine ${check.toFixed(4)} to the fp32 model's (below ${MIN_PROBE_COSINE})`);
    const files: Record<string, { bytes: number; sha256: string }> = {};
    for (const rel of ['config.json', 'onnx/model_int8.onnx', ...COPIED.filter((f) => f !== 'config.json')].sort()) {
      const file = path.join(temp, rel);
      if (existsSync(file)) files[rel] = { bytes: (await stat(file)).size, sha256: await sha256File(file) };
    }
    const report = {
      source: srcDir,
      source_onnx_sha256: await sha256File(source),
      method: INT8_METHOD,
      made_by: 'notary (TypeScript, no Python)',
      made_at: new Date().toISOString(),
      quantized: stats,
      files,
    };
    await writeFile(path.join(temp, 'quantize-report.json'), `${JSON.stringify(report, null, 2)}\n`);
    await rm(target, { recursive: true, force: true });
    await rename(temp, target);
    const ms = Date.now() - started;
    options.log('info', `embeddings: made ${path.join(target, 'onnx', 'model_int8.onnx')} (${(bytes.length / 1e6).toFixed(1)} MB, ${stats.matmuls} MatMul and ${stats.gathers} Gather weights) in ${(ms / 1000).toFixed(1)} s`);
    return { dir: target, onnxFile: path.join('onnx', 'model_int8.onnx'), made: true, ms };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new NotaryError('model_unavailable', `cannot make the int8 copy of ${srcDir} in ${target}: ${reason}`);
  } finally {
    await rm(temp, { recursive: true, force: true });
    release();
  }
}
