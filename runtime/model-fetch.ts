import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { NotaryConfig } from '../core/index.js';
import {
  activePins,
  downloadPinnedModel,
  forgetDownloadFailure,
  installModelFolder,
  isCachedModelComplete,
  pinDifferences,
  type DownloadProgress,
  type PinnedModel,
  type PinnedStatus,
} from '../reranker/index.js';
import type { Log } from './log.js';

/** Fetching and installing the pinned models for `notary models pull` and `notary models install <dir>`. */

/** The pinned bi-encoder for openDense: its folder when the start-up check has it, else why it is missing. */
export function pinnedEmbedderOf(statuses: readonly PinnedStatus[]): { pinnedEmbedder?: string; pinnedMissing?: string } {
  const status = statuses.find((s) => s.model.kind === 'bi-encoder');
  if (!status) return {};
  return status.present ? { pinnedEmbedder: status.dir } : { pinnedMissing: status.why ?? `no ${status.model.name}` };
}

export interface PullResult {
  model: PinnedModel;
  dir: string;
  /** already: the files were in place; fetched: downloaded now; failed: see error. */
  outcome: 'already' | 'fetched' | 'failed';
  error?: string;
}

/**
 * Fetches every pinned model not yet in `to` (default: the model cache) from reranker.hub_url, with progress,
 * whatever failure a start remembered. For image builds and air-gapped copies (`--to DIR`, then `models install DIR`).
 */
export async function pullPinnedModels(
  cfg: NotaryConfig,
  options: { to?: string | undefined; env?: Record<string, string | undefined>; log: Log; onProgress?: (p: DownloadProgress) => void; connectTimeoutMs?: number; idleTimeoutMs?: number },
): Promise<PullResult[]> {
  const cacheDir = path.resolve(options.to ?? cfg.reranker.cache_dir ?? path.join(cfg.data_dir, 'models'));
  const results: PullResult[] = [];
  for (const model of activePins(options.env)) {
    const dir = path.join(cacheDir, model.name);
    if (await isCachedModelComplete(cacheDir, model)) {
      results.push({ model, dir, outcome: 'already' });
      continue;
    }
    try {
      await downloadPinnedModel(cfg.reranker.hub_url, cacheDir, model, {
        log: options.log,
        ...(options.onProgress ? { onProgress: options.onProgress, progressEveryMs: 1_000 } : {}),
        ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
        ...(options.idleTimeoutMs ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      });
      forgetDownloadFailure(cacheDir, model.name);
      results.push({ model, dir, outcome: 'fetched' });
    } catch (err) {
      results.push({ model, dir, outcome: 'failed', error: err instanceof Error ? err.message : String(err) });
    }
  }
  return results;
}

export interface InstallPinnedResult {
  model: PinnedModel;
  from: string;
  /** Where it now is (installed), or what keeps it from matching its pins. */
  installed?: string;
  differences?: string[];
}

/**
 * The pinned models a folder holds: `<dir>/<name>/` for each pinned model (what `models pull --to` writes, or a copy
 * of a model cache), or `<dir>` itself when it is named after one or matches one's pins. Each is checked against
 * its pins and copied into the cache when it matches; what differs is reported. Null: the folder holds none.
 */
export async function installPinnedFrom(cfg: NotaryConfig, source: string, env?: Record<string, string | undefined>): Promise<InstallPinnedResult[] | null> {
  const from = path.resolve(source);
  const cacheDir = cfg.reranker.cache_dir ?? path.join(cfg.data_dir, 'models');
  const found: Array<{ model: PinnedModel; dir: string }> = [];
  for (const model of activePins(env)) {
    const inside = path.join(from, model.name);
    if (existsSync(inside) && statSync(inside).isDirectory()) found.push({ model, dir: inside });
    else if (path.basename(from) === model.name || (await pinDifferences(from, model)).length === 0) found.push({ model, dir: from });
  }
  if (found.length === 0) return null;
  const results: InstallPinnedResult[] = [];
  for (const { model, dir } of found) {
    const differences = await pinDifferences(dir, model);
    if (differences.length > 0) {
      results.push({ model, from: dir, differences });
      continue;
    }
    const installed = await installModelFolder(dir, cacheDir, model.name);
    forgetDownloadFailure(cacheDir, model.name);
    results.push({ model, from: dir, installed });
  }
  return results;
}
