import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { modelRunners, type NotaryConfig, NotaryError } from '../core/index.js';
import { describeError, downloadPinnedModel, isCachedModelComplete, type DownloadOptions, type DownloadProgress } from './download.js';
import { ensurePinnedModels, type PinnedStatus } from './ensure.js';
import { LexicalReranker } from './lexical.js';
import { makeInt8Copy } from './int8-copy.js';
import { findInt8Copy } from './model-cache.js';
import { pinnedModel, type PinnedModel } from './models.js';
import { activePins } from './pins.js';
import { detectModelKind, readModelConfig } from './model-folder.js';
import { OnnxReranker } from './onnx-reranker.js';
import type { Reranker } from './reranker.js';
import { sha256File } from './sha256.js';

export type RerankerLog = (level: 'info' | 'warn', msg: string) => void;

export interface LoadRerankerOptions {
  env?: Record<string, string | undefined>;
  log: RerankerLog;
  fetch?: typeof fetch;
  /** Pinned models (their cross-encoder is the one cached and downloaded). Default: activePins(env). */
  pins?: readonly PinnedModel[];
  /** The start-up check of the pinned models already ran (and warned): its result, instead of checking again. */
  ensured?: readonly PinnedStatus[];
  /** Download progress; default: info log lines. */
  onProgress?: (progress: DownloadProgress) => void;
  /** Time allowed for the hub to answer with headers; short, so an offline machine falls through quickly. */
  connectTimeoutMs?: number;
  /** A download stalled this long without bytes is abandoned. */
  idleTimeoutMs?: number;
  /** Longest wait for another process fetching the same model. */
  lockTimeoutMs?: number;
  /** .onnx file inside an explicitly named model directory; also NOTARY_RERANKER_ONNX_FILE. */
  onnxFile?: string;
  /** embeddings.precision: int8 loads a bi-encoder's quantised copy when one exists. */
  precision?: 'int8' | 'fp32';
}

export { sha256File, downloadPinnedModel, isCachedModelComplete, type DownloadOptions };

/** A path naming an .onnx file stands for its model directory (the parent of `onnx/` when it sits there). */
function splitModelPath(given: string, onnxFile: string | undefined): { dir: string; onnxFile: string | undefined } {
  const resolved = path.resolve(given);
  if (resolved.endsWith('.onnx') && existsSync(resolved) && statSync(resolved).isFile()) {
    const parent = path.dirname(resolved);
    const dir = path.basename(parent) === 'onnx' ? path.dirname(parent) : parent;
    return { dir, onnxFile: path.relative(dir, resolved) };
  }
  return { dir: resolved, onnxFile };
}

/**
 * Picks the reranker: (a) NOTARY_RERANKER_MODEL, (b) cfg.model_dir, (c) the pinned model in the cache folder when
 * its hashes match, (d) a download of the pinned model when cfg.download, (e) the lexical fallback with a loud
 * warning. A model named explicitly in (a) or (b) that cannot be loaded is an error, not a fallback.
 */
export async function loadReranker(cfg: NotaryConfig['reranker'], options: LoadRerankerOptions): Promise<Reranker> {
  const env = options.env ?? process.env;
  const log = options.log;
  const onnxOptions = { ...modelRunners(cfg), batchSize: cfg.batch_size, maxSeqLength: cfg.max_seq_length, spinWait: cfg.spin_wait };
  const onnxFile = options.onnxFile ?? (env['NOTARY_RERANKER_ONNX_FILE'] || undefined);

  const envModel = env['NOTARY_RERANKER_MODEL'];
  const explicit = envModel ? { given: envModel, source: 'env' } : cfg.model_dir ? { given: cfg.model_dir, source: 'config' } : undefined;
  if (explicit) {
    const origin = explicit.source === 'env' ? 'NOTARY_RERANKER_MODEL' : 'reranker.model_dir';
    const where = await resolveModelFiles(explicit.given, { onnxFile, precision: options.precision, cacheDir: cfg.cache_dir, log, origin: `named by ${origin}` });
    const why = where.why;
    try {
      const reranker = await OnnxReranker.load(where.dir, { ...onnxOptions, source: explicit.source, onnxFile: where.onnxFile, why });
      logLoaded(log, reranker);
      return reranker;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new NotaryError('model_unavailable', `reranker model named by ${origin} (${explicit.given}) cannot be loaded: ${reason}`);
    }
  }

  const reasons: string[] = [];
  const pinned = pinnedModel(options.pins ?? activePins(env), 'cross-encoder');
  const cacheDir = cfg.cache_dir ? path.resolve(cfg.cache_dir) : undefined;
  if (!pinned || !cacheDir) {
    reasons.push(pinned ? 'no reranker.cache_dir' : 'no pinned model');
    return fallback(log, reasons, cfg, undefined);
  }
  const status =
    options.ensured?.find((s) => s.model.name === pinned.name) ??
    (
      await ensurePinnedModels(cfg, [pinned], {
        fetch: options.fetch,
        connectTimeoutMs: options.connectTimeoutMs,
        idleTimeoutMs: options.idleTimeoutMs,
        lockTimeoutMs: options.lockTimeoutMs,
        onProgress: options.onProgress,
        log,
      })
    )[0];
  if (!status?.present) {
    // Already said in the one warning line of the check.
    return new LexicalReranker('fallback', `no neural model: ${status?.why ?? `no ${pinned.name}`}`);
  }
  const source = status.fetched ? 'download' : 'cache';
  try {
    const why = source === 'cache' ? `the pinned ${pinned.name} in ${status.dir}` : `the pinned ${pinned.name}, downloaded from ${cfg.hub_url}`;
    const reranker = await OnnxReranker.load(status.dir, { ...onnxOptions, source, onnxFile: pinned.onnxFile, name: pinned.name, why });
    logLoaded(log, reranker);
    return reranker;
  } catch (err) {
    reasons.push(`the ${source === 'cache' ? 'cached' : 'downloaded'} model in ${status.dir} does not load: ${describeError(err)}`);
  }
  return fallback(log, reasons, cfg, pinned.name);
}

/**
 * The folder and .onnx file to load for a model path: a path naming an .onnx file stands for itself; with precision
 * int8 a bi-encoder folder is swapped for its int8 copy, made once (in TypeScript, under the model lock) into
 * `<cacheDir>/<name>-int8/` when there is none; if that fails, a one-line warning and the fp32 file.
 */
export async function resolveModelFiles(
  given: string,
  options: { onnxFile?: string | undefined; precision?: 'int8' | 'fp32' | undefined; cacheDir?: string | undefined; log: RerankerLog; origin: string },
): Promise<{ dir: string; onnxFile: string | undefined; why: string }> {
  const where = splitModelPath(given, options.onnxFile);
  if (options.precision !== 'int8' || where.onnxFile || !isBiEncoderFolder(where.dir)) return { ...where, why: options.origin };
  const cacheDir = options.cacheDir ? path.resolve(options.cacheDir) : undefined;
  const copy = findInt8Copy(where.dir, cacheDir);
  if ('dir' in copy) return { dir: copy.dir, onnxFile: copy.onnxFile, why: `${options.origin}; its int8 copy (embeddings.precision int8)` };
  let reason = `no int8 copy (looked at ${copy.looked.join(', ')}) and no reranker.cache_dir to make one in`;
  if (cacheDir) {
    try {
      const made = await makeInt8Copy(where.dir, cacheDir, { log: options.log });
      const how = made.made ? `made now in ${(made.ms / 1000).toFixed(1)} s` : 'made by another process';
      return { dir: made.dir, onnxFile: made.onnxFile, why: `${options.origin}; its int8 copy (embeddings.precision int8, ${how})` };
    } catch (err) {
      reason = err instanceof Error ? err.message : String(err);
    }
  }
  options.log(
    'warn',
    `embeddings.precision is int8 but ${where.dir} has no int8 copy: ${reason}. Using the exact fp32 model, slower to embed. ` +
      `Fix: set embeddings.precision to fp32 (NOTARY_EMBEDDING_PRECISION=fp32) to keep fp32 without this warning, or make the copy with ` +
      `bash scripts/quantize-minilm.sh --src ${where.dir} --out ${path.join(cacheDir ?? '<data>/models', `${path.basename(where.dir)}-int8`)}`,
  );
  return { ...where, why: `${options.origin}; fp32 (no int8 copy: it could not be made)` };
}

/** Whether a folder's config.json names a bi-encoder (an unreadable one is left for the loader to report). */
function isBiEncoderFolder(dir: string): boolean {
  try {
    return detectModelKind(readModelConfig(dir)) === 'bi-encoder';
  } catch {
    return false;
  }
}

function logLoaded(log: RerankerLog, reranker: OnnxReranker): void {
  const batching = reranker.quantized
    ? `one pair per run (int8 dynamic quantisation: batching would make scores depend on batch neighbours)`
    : `batches of ${reranker.batchSize}`;
  log('info', `reranker: ${reranker.info.kind} ${reranker.info.model} from ${reranker.info.source}, ${batching}, max ${reranker.maxSeqLength} tokens`);
}

/** One line: no neural model, why, and the remedy that applies (never advice that is already the setting). */
function fallback(log: RerankerLog, reasons: readonly string[], cfg: NotaryConfig['reranker'], pinnedName: string | undefined): Reranker {
  const why = `no neural model: ${reasons.join('; ')}`;
  const remedies = [
    `notary models install <dir>${pinnedName ? ` --name ${pinnedName}` : ''} (a folder with tokenizer.json, config.json and an .onnx file)`,
    'or NOTARY_RERANKER_MODEL=<dir>',
  ];
  if (!cfg.download) remedies.push('or NOTARY_MODEL_DOWNLOAD=true');
  log('warn', `reranker: LEXICAL FALLBACK, ranking is term overlap only (${why}). Fix: ${remedies.join(' ')}`);
  return new LexicalReranker('fallback', why);
}
