import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { modelRunners, type NotaryConfig } from '../core/config.js';
import { NotaryError, isNotaryError } from '../core/errors.js';
import { LexicalReranker } from './lexical.js';
import { findInt8Copy, forgetDownloadFailure, recentDownloadFailure, rememberDownloadFailure, removeEmptyDirs } from './model-cache.js';
import { PINNED_MODELS, pinnedFileUrl, type PinnedFile, type PinnedModel } from './models.js';
import { detectModelKind, OnnxReranker, readModelConfig } from './onnx-reranker.js';
import type { Reranker } from './reranker.js';
import { sha256File } from './sha256.js';

export type RerankerLog = (level: 'info' | 'warn', msg: string) => void;

export interface LoadRerankerOptions {
  env?: Record<string, string | undefined>;
  log: RerankerLog;
  fetch?: typeof fetch;
  /** Pinned models; the first is the one cached and downloaded. Defaults to PINNED_MODELS. */
  pins?: readonly PinnedModel[];
  /** Time allowed for the hub to answer with headers; short, so an offline machine falls through quickly. */
  connectTimeoutMs?: number;
  /** A download stalled this long without bytes is abandoned. */
  idleTimeoutMs?: number;
  /** .onnx file inside an explicitly named model directory; also NOTARY_RERANKER_ONNX_FILE. */
  onnxFile?: string;
  /** embeddings.precision: int8 loads a bi-encoder's quantised copy when one exists. */
  precision?: 'int8' | 'fp32';
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

export { sha256File };

async function fileMatchesPin(file: string, pin: PinnedFile): Promise<boolean> {
  if (!existsSync(file)) return false;
  if (pin.bytes !== undefined && statSync(file).size !== pin.bytes) return false;
  return (await sha256File(file)) === pin.sha256;
}

/** Whether `<cacheDir>/<name>/` holds every pinned file with its pinned hash. */
export async function isCachedModelComplete(cacheDir: string, model: PinnedModel): Promise<boolean> {
  const dir = path.join(cacheDir, model.name);
  for (const file of model.files) {
    if (!(await fileMatchesPin(path.join(dir, file.path), file))) return false;
  }
  return true;
}

export interface DownloadOptions {
  fetch?: typeof fetch;
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  log: RerankerLog;
}

/**
 * Fetches each pinned file not already cached: streamed into a temp file beside its target while hashing, checked
 * against the pin, then renamed into place. A hash or size mismatch deletes the temp file and throws.
 * Returns the model directory.
 */
export async function downloadPinnedModel(hubUrl: string, cacheDir: string, model: PinnedModel, options: DownloadOptions): Promise<string> {
  const dir = path.join(cacheDir, model.name);
  try {
    for (const file of model.files) {
      const target = path.join(dir, file.path);
      if (await fileMatchesPin(target, file)) continue;
      const url = pinnedFileUrl(hubUrl, model, file);
      options.log('info', `reranker: downloading ${url}${file.bytes ? ` (${(file.bytes / 1e6).toFixed(1)} MB)` : ''}`);
      await downloadFile(url, target, file, options);
    }
  } catch (err) {
    // A failed download leaves no empty folders behind (files already complete stay for the next try).
    for (const file of model.files) removeEmptyDirs(path.dirname(path.join(dir, file.path)), cacheDir);
    throw err;
  }
  return dir;
}

async function downloadFile(url: string, target: string, pin: PinnedFile, options: DownloadOptions): Promise<void> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const controller = new AbortController();
  let timer = setTimeout(() => controller.abort(new Error('no answer within the connect timeout')), options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const resetIdle = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
  };
  await mkdir(path.dirname(target), { recursive: true });
  const temp = `${target}.part-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    let response: Response;
    try {
      response = await fetchImpl(url, { signal: controller.signal, redirect: 'follow' });
    } catch (err) {
      throw new NotaryError('model_unavailable', `cannot reach ${url}: ${describeError(err)}`);
    }
    if (!response.ok || !response.body) {
      throw new NotaryError('model_unavailable', `${url} answered HTTP ${response.status}`);
    }
    resetIdle();
    const hash = createHash('sha256');
    let received = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        resetIdle();
        received += chunk.length;
        if (pin.bytes !== undefined && received > pin.bytes) {
          done(new NotaryError('model_unavailable', `${url} sent more than the pinned ${pin.bytes} bytes`));
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), tap, createWriteStream(temp));
    } catch (err) {
      if (isNotaryError(err)) throw err;
      throw new NotaryError('model_unavailable', `download of ${url} failed: ${describeError(err)}`);
    }
    const digest = hash.digest('hex');
    if (digest !== pin.sha256 || (pin.bytes !== undefined && received !== pin.bytes)) {
      throw new NotaryError(
        'model_unavailable',
        `REFUSED ${url}: sha256 ${digest} (${received} bytes) does not match the pinned sha256 ${pin.sha256}` +
          `${pin.bytes !== undefined ? ` (${pin.bytes} bytes)` : ''}; the file was deleted`,
        { hash_mismatch: true },
      );
    }
    await rename(temp, target);
  } finally {
    clearTimeout(timer);
    await rm(temp, { force: true });
  }
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

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
    const where = resolveModelFiles(explicit.given, { onnxFile, precision: options.precision, cacheDir: cfg.cache_dir, log, origin: `named by ${origin}` });
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
  const pinned = (options.pins ?? PINNED_MODELS)[0];
  const cacheDir = cfg.cache_dir ? path.resolve(cfg.cache_dir) : undefined;
  if (!pinned || !cacheDir) {
    reasons.push(pinned ? 'no reranker.cache_dir' : 'no pinned model');
    return fallback(log, reasons, cfg, undefined);
  }
  const modelDir = path.join(cacheDir, pinned.name);
  const fromPinned = async (source: string): Promise<Reranker | undefined> => {
    try {
      const why = source === 'cache' ? `the pinned ${pinned.name} in ${modelDir}` : `the pinned ${pinned.name}, downloaded from ${cfg.hub_url}`;
      const reranker = await OnnxReranker.load(modelDir, { ...onnxOptions, source, onnxFile: pinned.onnxFile, name: pinned.name, why });
      logLoaded(log, reranker);
      return reranker;
    } catch (err) {
      const reason = `the ${source === 'cache' ? 'cached' : 'downloaded'} model in ${modelDir} does not load: ${describeError(err)}`;
      log('warn', `reranker: ${reason}`);
      reasons.push(reason);
      return undefined;
    }
  };

  if (await isCachedModelComplete(cacheDir, pinned)) {
    const cached = await fromPinned('cache');
    if (cached) return cached;
  } else {
    reasons.push(`no ${pinned.name} in ${modelDir}`);
  }

  const remembered = recentDownloadFailure(cacheDir, pinned.name);
  if (!cfg.download) {
    reasons.push('reranker.download is false');
  } else if (remembered) {
    // Not every command tries the download again: the failure is remembered until retry_after.
    reasons.push(`its download failed at ${remembered.failed_at.slice(0, 16)}Z (${remembered.reason}); next try after ${remembered.retry_after.slice(0, 16)}Z`);
  } else {
    try {
      await downloadPinnedModel(cfg.hub_url, cacheDir, pinned, {
        fetch: options.fetch,
        connectTimeoutMs: options.connectTimeoutMs,
        idleTimeoutMs: options.idleTimeoutMs,
        log,
      });
      forgetDownloadFailure(cacheDir, pinned.name);
      const downloaded = await fromPinned('download');
      if (downloaded) return downloaded;
    } catch (err) {
      const reason = describeError(err);
      const failure = rememberDownloadFailure(cacheDir, { model: pinned.name, hub_url: cfg.hub_url, reason }, (cfg.download_retry_hours ?? 6) * 3_600_000);
      reasons.push(`its download from ${cfg.hub_url} failed (${reason}); next try after ${failure.retry_after.slice(0, 16)}Z`);
    }
  }
  return fallback(log, reasons, cfg, pinned.name);
}

/**
 * The folder and .onnx file to load for a model path: a path naming an .onnx file stands for itself; with precision
 * int8 a bi-encoder folder is swapped for its int8 copy when one exists (else a one-line warning and the fp32 file).
 */
export function resolveModelFiles(
  given: string,
  options: { onnxFile?: string | undefined; precision?: 'int8' | 'fp32' | undefined; cacheDir?: string | undefined; log: RerankerLog; origin: string },
): { dir: string; onnxFile: string | undefined; why: string } {
  const where = splitModelPath(given, options.onnxFile);
  if (options.precision !== 'int8' || where.onnxFile || !isBiEncoderFolder(where.dir)) return { ...where, why: options.origin };
  const copy = findInt8Copy(where.dir, options.cacheDir ? path.resolve(options.cacheDir) : undefined);
  if ('dir' in copy) return { dir: copy.dir, onnxFile: copy.onnxFile, why: `${options.origin}; its int8 copy (embeddings.precision int8)` };
  options.log(
    'warn',
    `embeddings.precision is int8 but ${where.dir} has no int8 copy (looked at ${copy.looked.join(', ')}): using the exact fp32 model, ` +
      `slower to embed. Make one: bash scripts/quantize-minilm.sh --src ${where.dir} --out ${path.join(options.cacheDir ?? '<data>/models', `${path.basename(where.dir)}-int8`)}`,
  );
  return { ...where, why: `${options.origin}; fp32 (no int8 copy found)` };
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
