import { createWriteStream, existsSync, statSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { NotaryError, isNotaryError } from '../core/index.js';
import { removeEmptyDirs } from './model-cache.js';
import { acquireModelLock } from './model-lock.js';
import { pinnedFileUrl, type PinnedFile, type PinnedModel } from './models.js';
import { sha256File } from './sha256.js';

export type DownloadLog = (level: 'info' | 'warn', msg: string) => void;

/** Where a transfer stands; `bytesPerSec` and `secondsLeft` are absent until there is a rate to speak of. */
export interface DownloadProgress {
  model: string;
  file: string;
  received: number;
  total: number | undefined;
  /** Bytes that were already on disk from an interrupted transfer when this one started. */
  resumedFrom: number;
  bytesPerSec?: number;
  secondsLeft?: number;
  /** Seconds this transfer took, once done. */
  seconds?: number;
  done: boolean;
}

export interface DownloadOptions {
  fetch?: typeof fetch;
  /** Time allowed for the hub to answer with headers; short, so an offline machine falls through quickly. */
  connectTimeoutMs?: number;
  /** A transfer stalled this long without bytes is abandoned (its partial file stays, to be resumed). */
  idleTimeoutMs?: number;
  /** Longest wait for another process fetching the same model. */
  lockTimeoutMs?: number;
  /** Longest time one file's transfer may take, however it trickles (resumed by the next try). */
  transferTimeoutMs?: number;
  log: DownloadLog;
  /** Progress reports, at most every `progressEveryMs` and once at the end of each file; default: info log lines. */
  onProgress?: (progress: DownloadProgress) => void;
  progressEveryMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
export const DEFAULT_LOCK_TIMEOUT_MS = 15 * 60_000;
export const DEFAULT_TRANSFER_TIMEOUT_MS = 30 * 60_000;

/** The partial file a transfer writes to; it stays after an interruption and the next transfer resumes it. */
export function partialFile(target: string): string {
  return `${target}.partial`;
}

export async function fileMatchesPin(file: string, pin: PinnedFile): Promise<boolean> {
  if (!existsSync(file)) return false;
  if (pin.bytes !== undefined && statSync(file).size !== pin.bytes) return false;
  return (await sha256File(file)) === pin.sha256;
}

/** Whether `<cacheDir>/<name>/` holds every pinned file with its pinned hash. */
export async function isCachedModelComplete(cacheDir: string, model: PinnedModel): Promise<boolean> {
  return (await pinDifferences(path.join(cacheDir, model.name), model)).length === 0;
}

/** What keeps the folder from matching the pins, one phrase per file (empty: it matches). */
export async function pinDifferences(dir: string, model: PinnedModel): Promise<string[]> {
  const differences: string[] = [];
  for (const pin of model.files) {
    const file = path.join(dir, pin.path);
    if (!existsSync(file)) {
      differences.push(`${pin.path} missing`);
      continue;
    }
    const size = statSync(file).size;
    if (pin.bytes !== undefined && size !== pin.bytes) {
      differences.push(`${pin.path} has ${size} bytes, the pin ${pin.bytes}`);
      continue;
    }
    const digest = await sha256File(file);
    if (digest !== pin.sha256) differences.push(`${pin.path} sha256 ${digest.slice(0, 12)}…, the pin ${pin.sha256.slice(0, 12)}…`);
  }
  return differences;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** `model file: 45.2 of 90.4 MB (50%), 12.3 MB/s, 4 s left` (no rate before there is one). */
export function describeProgress(p: DownloadProgress): string {
  const amount = p.total ? `${mb(p.received)} of ${mb(p.total)} (${Math.floor((p.received / p.total) * 100)}%)` : mb(p.received);
  const parts = [`${p.model} ${p.file}: ${amount}`];
  if (p.resumedFrom > 0) parts.push(`resumed at ${mb(p.resumedFrom)}`);
  if (p.done) parts.push(`done${p.seconds !== undefined ? ` in ${p.seconds.toFixed(1)} s` : ''}${p.bytesPerSec !== undefined ? ` (${mb(p.bytesPerSec)}/s)` : ''}`);
  else if (p.bytesPerSec !== undefined) {
    parts.push(`${mb(p.bytesPerSec)}/s`);
    if (p.secondsLeft !== undefined) parts.push(`${Math.ceil(p.secondsLeft)} s left`);
  }
  return parts.join(', ');
}

/**
 * Fetches each pinned file not already in `<cacheDir>/<name>/`, holding the model's lock file so that processes
 * starting at once fetch it once. A file is streamed into `<file>.partial` (resumed with an HTTP Range request when
 * an earlier transfer was interrupted), checked against its pin, then renamed into place; a hash or size mismatch
 * deletes it and throws. Returns the model directory.
 */
export async function downloadPinnedModel(hubUrl: string, cacheDir: string, model: PinnedModel, options: DownloadOptions): Promise<string> {
  const dir = path.join(cacheDir, model.name);
  await mkdir(cacheDir, { recursive: true });
  const release = await acquireModelLock(cacheDir, model.name, {
    timeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
    onWait: (owner) => options.log('info', `models: waiting for ${owner ? `pid ${owner.pid} on ${owner.host}` : 'another process'}, which is fetching ${model.name}`),
  });
  try {
    for (const file of model.files) {
      const target = path.join(dir, file.path);
      if (await fileMatchesPin(target, file)) continue;
      await downloadFile(pinnedFileUrl(hubUrl, model, file), target, model.name, file, options);
    }
  } catch (err) {
    // A failed download leaves no empty folders behind (complete files and partial ones stay for the next try).
    for (const file of model.files) removeEmptyDirs(path.dirname(path.join(dir, file.path)), cacheDir);
    throw err;
  } finally {
    release();
  }
  return dir;
}

async function downloadFile(url: string, target: string, modelName: string, pin: PinnedFile, options: DownloadOptions): Promise<void> {
  const partial = partialFile(target);
  await mkdir(path.dirname(target), { recursive: true });
  let have = existsSync(partial) ? statSync(partial).size : 0;
  if (pin.bytes !== undefined && have >= pin.bytes) {
    // A transfer that ended before its rename: only the check is left (a longer file is wrong anyway).
    if (have === pin.bytes && (await sha256File(partial)) === pin.sha256) {
      await rename(partial, target);
      return;
    }
    await rm(partial, { force: true });
    have = 0;
  }
  const size = pin.bytes !== undefined ? ` (${mb(pin.bytes)})` : '';
  options.log('info', `models: fetching ${url}${size}${have > 0 ? `, resuming at ${mb(have)}` : ''}`);
  const total = await transfer(url, partial, have, modelName, pin, options);
  const digest = await sha256File(partial);
  if (digest !== pin.sha256 || (pin.bytes !== undefined && total !== pin.bytes)) {
    await rm(partial, { force: true });
    throw new NotaryError(
      'model_unavailable',
      `REFUSED ${url}: sha256 ${digest} (${total} bytes) does not match the pinned sha256 ${pin.sha256}` +
        `${pin.bytes !== undefined ? ` (${pin.bytes} bytes)` : ''}; the file was deleted`,
      { hash_mismatch: true },
    );
  }
  await rename(partial, target);
}

/** One HTTP transfer into `partial`, from byte `have` on when the server honours Range. Returns the file's size. */
async function transfer(url: string, partial: string, have: number, modelName: string, pin: PinnedFile, options: DownloadOptions): Promise<number> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const controller = new AbortController();
  const connectMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  let timer = setTimeout(() => controller.abort(new Error(`no answer within ${connectMs} ms`)), connectMs);
  const transferMs = options.transferTimeoutMs ?? DEFAULT_TRANSFER_TIMEOUT_MS;
  const cap = setTimeout(() => controller.abort(new Error(`not done within ${transferMs} ms`)), transferMs);
  const resetIdle = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
  };
  let received = have;
  try {
    let response: Response;
    try {
      response = await fetchImpl(url, { signal: controller.signal, redirect: 'follow', headers: have > 0 ? { range: `bytes=${have}-` } : {} });
    } catch (err) {
      throw new NotaryError('model_unavailable', `cannot reach ${url}: ${describeError(err)}`);
    }
    if (response.status === 416 && have > 0) {
      // The partial file is not a prefix the server knows: start over.
      clearTimeout(timer);
      clearTimeout(cap);
      await response.body?.cancel();
      await rm(partial, { force: true });
      return transfer(url, partial, 0, modelName, pin, options);
    }
    if (!response.ok || !response.body) throw new NotaryError('model_unavailable', `${url} answered HTTP ${response.status}`);
    const resumed = response.status === 206 && have > 0 && contentRangeStart(response.headers.get('content-range')) === have;
    if (!resumed) received = 0;
    const length = Number(response.headers.get('content-length') ?? NaN);
    const total = pin.bytes ?? (Number.isFinite(length) ? received + length : undefined);
    resetIdle();
    const report = progressReporter(modelName, pin.path, received, total, options);
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        resetIdle();
        received += chunk.length;
        if (pin.bytes !== undefined && received > pin.bytes) {
          done(new NotaryError('model_unavailable', `${url} sent more than the pinned ${pin.bytes} bytes`));
          return;
        }
        report(received, false);
        done(null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), tap, createWriteStream(partial, { flags: resumed ? 'a' : 'w' }));
    } catch (err) {
      if (isNotaryError(err)) {
        await rm(partial, { force: true });
        throw err;
      }
      throw new NotaryError(
        'model_unavailable',
        `download of ${url} interrupted after ${received}${total ? ` of ${total}` : ''} bytes (${describeError(err)}); the next try resumes from there`,
      );
    }
    if (total !== undefined && received < total) {
      throw new NotaryError('model_unavailable', `download of ${url} ended after ${received} of ${total} bytes; the next try resumes from there`);
    }
    report(received, true);
    return received;
  } finally {
    clearTimeout(timer);
    clearTimeout(cap);
  }
}

function contentRangeStart(header: string | null): number | undefined {
  const match = /^bytes (\d+)-/.exec(header ?? '');
  return match ? Number(match[1]) : undefined;
}

function progressReporter(model: string, file: string, resumedFrom: number, total: number | undefined, options: DownloadOptions): (received: number, done: boolean) => void {
  const every = options.progressEveryMs ?? 2_000;
  const sink = options.onProgress ?? ((p: DownloadProgress) => options.log('info', `models: ${describeProgress(p)}`));
  const started = Date.now();
  let last = started;
  return (received, done) => {
    const now = Date.now();
    if (!done && now - last < every) return;
    last = now;
    const elapsed = (now - started) / 1000;
    const fresh = received - resumedFrom;
    const progress: DownloadProgress = { model, file, received, total, resumedFrom, done, ...(done ? { seconds: elapsed } : {}) };
    // A rate only once there is one: some bytes over at least half a second.
    if (fresh > 0 && elapsed >= 0.5) {
      progress.bytesPerSec = fresh / elapsed;
      if (total !== undefined) progress.secondsLeft = Math.max(0, total - received) / progress.bytesPerSec;
    }
    sink(progress);
  };
}

export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
