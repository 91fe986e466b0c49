import path from 'node:path';
import type { NotaryConfig } from '../core/index.js';
import { describeError, downloadPinnedModel, isCachedModelComplete, type DownloadOptions } from './download.js';
import { forgetDownloadFailure, recentDownloadFailure, rememberDownloadFailure } from './model-cache.js';
import { pinnedModel, type PinnedKind, type PinnedModel } from './models.js';
import { detectModelKind, readModelConfig } from './model-folder.js';

/** A pinned model after the start-up check: in the cache (perhaps just fetched) or missing, and why. */
export interface PinnedStatus {
  model: PinnedModel;
  dir: string;
  present: boolean;
  /** Fetched by this check (not found in the cache). */
  fetched: boolean;
  /** Why it is missing: `no <name> in <dir>; <cause>`. */
  why?: string;
  /** Why it is missing, without the folder (the same for models missing for the same reason). */
  cause?: string;
}

/**
 * The pinned models a start needs, each by its own setting: the cross-encoder unless a reranker model is named
 * (NOTARY_RERANKER_MODEL / reranker.model_dir); the bi-encoder when embeddings.model is "reranker" (automatic), unless
 * the named reranker is itself a bi-encoder (its config.json says so: it then embeds too).
 */
export function neededPins(cfg: NotaryConfig, pins: readonly PinnedModel[], env: Record<string, string | undefined> = process.env): PinnedModel[] {
  const named = env['NOTARY_RERANKER_MODEL'] || cfg.reranker.model_dir;
  const needed: Array<PinnedModel | undefined> = [];
  if (!named) needed.push(pinnedModel(pins, 'cross-encoder'));
  if (cfg.embeddings.model === 'reranker' && !(named && namedKind(named) === 'bi-encoder')) needed.push(pinnedModel(pins, 'bi-encoder'));
  return needed.filter((p): p is PinnedModel => p !== undefined);
}

/** What a named model folder (or an .onnx file in one) holds, by its config.json; undefined when that cannot tell. */
function namedKind(named: string): PinnedKind | undefined {
  const resolved = path.resolve(named);
  const onnxFile = resolved.endsWith('.onnx');
  const dir = onnxFile ? path.dirname(resolved) : resolved;
  for (const candidate of onnxFile && path.basename(dir) === 'onnx' ? [dir, path.dirname(dir)] : [dir]) {
    try {
      return detectModelKind(readModelConfig(candidate));
    } catch {
      // no or unclear config.json here: try the parent of an onnx/ folder, else unknown
    }
  }
  return undefined;
}

/** The cache folder of the pinned model of `kind` among `models`, when it is complete (no network). */
export async function cachedPinnedDir(cfg: NotaryConfig['reranker'], models: readonly PinnedModel[], kind: PinnedKind): Promise<string | undefined> {
  const model = pinnedModel(models, kind);
  const cacheDir = path.resolve(cfg.cache_dir ?? 'models');
  return model && (await isCachedModelComplete(cacheDir, model)) ? path.join(cacheDir, model.name) : undefined;
}

export type EnsureOptions = Omit<DownloadOptions, 'log'> & { log: DownloadOptions['log'] };

/**
 * Makes sure each of `models` is in the cache with its pinned hashes, fetching what is missing from the hub unless
 * downloads are off or a recent failure is remembered (retried after reranker.download_retry_hours). When any stays
 * missing, says so ONCE in ONE warning line: what is missing, why, what the service does instead, and the remedy.
 */
export async function ensurePinnedModels(cfg: NotaryConfig['reranker'], models: readonly PinnedModel[], options: EnsureOptions): Promise<PinnedStatus[]> {
  const cacheDir = path.resolve(cfg.cache_dir ?? 'models');
  const statuses: PinnedStatus[] = [];
  let unreachable: string | undefined;
  for (const model of models) {
    const dir = path.join(cacheDir, model.name);
    if (await isCachedModelComplete(cacheDir, model)) {
      statuses.push({ model, dir, present: true, fetched: false });
      continue;
    }
    const missing = (cause: string): void => void statuses.push({ model, dir, present: false, fetched: false, cause, why: `no ${model.name} in ${dir}; ${cause}` });
    const remembered = recentDownloadFailure(cacheDir, model.name);
    if (!cfg.download) missing('reranker.download is false');
    else if (remembered) {
      missing(`download failed at ${remembered.failed_at.slice(0, 16)}Z (${remembered.reason}); next try after ${remembered.retry_after.slice(0, 16)}Z`);
    } else {
      try {
        // A hub that could not be reached for the first model is not tried again for the next one.
        if (unreachable) throw new Error(unreachable);
        await downloadPinnedModel(cfg.hub_url, cacheDir, model, options);
        forgetDownloadFailure(cacheDir, model.name);
        statuses.push({ model, dir, present: true, fetched: true });
        continue;
      } catch (err) {
        const reason = describeError(err);
        if (/cannot reach|no answer within/.test(reason)) unreachable = reason;
        const failure = rememberDownloadFailure(cacheDir, { model: model.name, hub_url: cfg.hub_url, reason }, (cfg.download_retry_hours ?? 6) * 3_600_000);
        missing(`download from ${cfg.hub_url} failed (${reason}); next try after ${failure.retry_after.slice(0, 16)}Z`);
      }
    }
  }
  const missing = statuses.filter((s) => !s.present);
  if (missing.length > 0) options.log('warn', missingModelsLine(cfg, missing));
  return statuses;
}

/** The one line that says which pinned models are missing, why, the consequence and the remedy. */
export function missingModelsLine(cfg: NotaryConfig['reranker'], missing: readonly PinnedStatus[]): string {
  const noReranker = missing.some((s) => s.model.kind === 'cross-encoder');
  const noEmbedder = missing.some((s) => s.model.kind === 'bi-encoder');
  const effect = noReranker
    ? `LEXICAL FALLBACK, ranking is term overlap only${noEmbedder ? ' over BM25 retrieval' : ''}`
    : 'dense retrieval off, BM25 retrieval only';
  // Models missing for the same reason are named together: one reason, said once.
  const byCause = new Map<string, PinnedStatus[]>();
  for (const s of missing) byCause.set(s.cause ?? '', [...(byCause.get(s.cause ?? '') ?? []), s]);
  const why = [...byCause]
    .map(([cause, group]) => `no ${group.map((s) => s.model.name).join(' and no ')} in ${path.dirname(group[0]?.dir ?? '')}${cause ? ` (${cause})` : ''}`)
    .join('; ');
  const names = missing.map((s) => s.model.name).join(' and ');
  const remedies = [
    `notary models pull (from ${cfg.hub_url}; reranker.hub_url or NOTARY_HUB_URL names a mirror)`,
    `or notary models install <dir> (a folder holding ${names}, or one model folder with --name ${missing[0]?.model.name ?? '<name>'})`,
    `or ${[noReranker ? 'NOTARY_RERANKER_MODEL=<dir>' : '', noEmbedder ? 'NOTARY_EMBEDDING_MODEL=<dir>' : ''].filter(Boolean).join(' and ')}`,
  ];
  if (!cfg.download) remedies.push('or NOTARY_MODEL_DOWNLOAD=true');
  return `models: ${effect}: ${why}. Fix: ${remedies.join(' ')}`;
}
