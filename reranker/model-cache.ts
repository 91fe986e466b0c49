import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, cp } from 'node:fs/promises';
import path from 'node:path';
import { NotaryError } from '../core/index.js';
import { isDynamicallyQuantized, readModelConfig, detectModelKind, findOnnxFile } from './model-folder.js';
import { sha256File } from './sha256.js';

/** What a failed download leaves in the cache so that the next commands do not try again at once. */
export interface DownloadFailure {
  model: string;
  hub_url: string;
  failed_at: string;
  retry_after: string;
  reason: string;
}

export function failureMarkerFile(cacheDir: string, modelName: string): string {
  return path.join(cacheDir, `${modelName}.download-failed.json`);
}

/** The remembered failure of a download of `modelName`, while it is still in force. */
export function recentDownloadFailure(cacheDir: string, modelName: string, now = Date.now()): DownloadFailure | null {
  const file = failureMarkerFile(cacheDir, modelName);
  if (!existsSync(file)) return null;
  try {
    const failure = JSON.parse(readFileSync(file, 'utf8')) as DownloadFailure;
    return Date.parse(failure.retry_after) > now ? failure : null;
  } catch {
    return null;
  }
}

export function rememberDownloadFailure(cacheDir: string, failure: Omit<DownloadFailure, 'failed_at' | 'retry_after'>, retryAfterMs: number): DownloadFailure {
  const now = new Date();
  const record: DownloadFailure = { ...failure, failed_at: now.toISOString(), retry_after: new Date(now.getTime() + retryAfterMs).toISOString() };
  try {
    writeFileSync(failureMarkerFile(cacheDir, failure.model), `${JSON.stringify(record, null, 2)}\n`);
  } catch {
    // A cache folder that cannot be written only means the next command tries again.
  }
  return record;
}

export function forgetDownloadFailure(cacheDir: string, modelName: string): void {
  rmSync(failureMarkerFile(cacheDir, modelName), { force: true });
}

function rmdirSafe(target: string): void {
  try {
    rmdirSync(target);
  } catch {
    // not empty, or already gone
  }
}

/** Removes `dir` and its empty parents up to (not including) `stopAt`, when they hold nothing. */
export function removeEmptyDirs(dir: string, stopAt: string): void {
  let current = path.resolve(dir);
  const stop = path.resolve(stopAt);
  while (current.startsWith(`${stop}${path.sep}`) && existsSync(current)) {
    if (readdirSync(current).length > 0) return;
    rmdirSafe(current);
    current = path.dirname(current);
  }
}

export interface ModelFolder {
  name: string;
  dir: string;
  kind: string;
  onnx_file: string | null;
  precision: 'int8' | 'fp32' | 'unknown';
  bytes: number;
  /** Problem that keeps the folder from loading, if one is visible without loading it. */
  problem: string | null;
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}

/** Describes a model folder from its files (without starting ONNX Runtime). */
export function describeModelFolder(dir: string): ModelFolder {
  const name = path.basename(dir);
  const base: ModelFolder = { name, dir, kind: 'unknown', onnx_file: null, precision: 'unknown', bytes: existsSync(dir) ? folderBytes(dir) : 0, problem: null };
  try {
    if (!existsSync(path.join(dir, 'tokenizer.json'))) throw new NotaryError('model_unavailable', 'no tokenizer.json');
    const onnx = findOnnxFile(dir);
    const kind = detectModelKind(readModelConfig(dir));
    return { ...base, kind, onnx_file: path.relative(dir, onnx), precision: isDynamicallyQuantized(onnx) ? 'int8' : 'fp32' };
  } catch (err) {
    return { ...base, problem: err instanceof Error ? err.message : String(err) };
  }
}

/** Model folders in the cache (every sub-folder holding a tokenizer.json or an .onnx file). */
export function listCachedModels(cacheDir: string): ModelFolder[] {
  if (!existsSync(cacheDir)) return [];
  return readdirSync(cacheDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => describeModelFolder(path.join(cacheDir, e.name)))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Checks the sha256 of every file a report in the folder lists (export-report.json or quantize-report.json, as the
 * project's export scripts write them). Returns the files checked and the mismatches.
 */
export async function verifyReportedHashes(dir: string): Promise<{ report: string | null; checked: number; mismatches: string[] }> {
  for (const report of ['export-report.json', 'quantize-report.json']) {
    const file = path.join(dir, report);
    if (!existsSync(file)) continue;
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { files?: Record<string, { sha256: string }> };
    const mismatches: string[] = [];
    let checked = 0;
    for (const [rel, info] of Object.entries(parsed.files ?? {})) {
      const target = path.join(dir, rel);
      if (!existsSync(target)) {
        // The shared fp32 folder lists files it was not given (int8 copies): only present files are checked.
        continue;
      }
      checked++;
      if ((await sha256File(target)) !== info.sha256) mismatches.push(rel);
    }
    return { report, checked, mismatches };
  }
  return { report: null, checked: 0, mismatches: [] };
}

/** Copies a model folder into `<cacheDir>/<name>` atomically (a temporary copy renamed into place). */
export async function installModelFolder(source: string, cacheDir: string, name: string): Promise<string> {
  const target = path.join(cacheDir, name);
  await mkdir(cacheDir, { recursive: true });
  const temp = path.join(cacheDir, `.${name}.installing-${process.pid}`);
  await rm(temp, { recursive: true, force: true });
  try {
    await cp(source, temp, { recursive: true, filter: (src) => !/\.part-|\.partial$|\.lock$/.test(path.basename(src)) });
    await rm(target, { recursive: true, force: true });
    await rename(temp, target);
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return target;
}

/** File names an int8 copy of a model goes by, in its own folder. */
export const INT8_ONNX_FILES = ['model_int8.onnx', 'model_quantized.onnx'] as const;

/**
 * The int8 copy of a bi-encoder folder: onnx/model_int8.onnx (or model_quantized.onnx) beside the fp32 file, else
 * `<cacheDir>/<name>-int8/`. Returns the directory and .onnx file, or null with the places looked at.
 */
export function findInt8Copy(dir: string, cacheDir: string | undefined): { dir: string; onnxFile: string } | { looked: string[] } {
  const looked: string[] = [];
  for (const name of INT8_ONNX_FILES) {
    const file = path.join(dir, 'onnx', name);
    looked.push(file);
    if (existsSync(file)) return { dir, onnxFile: path.join('onnx', name) };
  }
  if (cacheDir) {
    const copy = path.join(cacheDir, `${path.basename(dir)}-int8`);
    looked.push(copy);
    for (const name of INT8_ONNX_FILES) {
      const file = path.join(copy, 'onnx', name);
      if (existsSync(file) && existsSync(path.join(copy, 'tokenizer.json'))) return { dir: copy, onnxFile: path.join('onnx', name) };
    }
  }
  return { looked };
}
