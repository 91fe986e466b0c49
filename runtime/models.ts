import path from 'node:path';
import { modelRunners, type NotaryConfig } from '../core/index.js';
import {
  activePins,
  describeModelFolder,
  failureMarkerFile,
  forgetDownloadFailure,
  installModelFolder,
  isCachedModelComplete,
  listCachedModels,
  OnnxReranker,
  PINNED_MODELS,
  recentDownloadFailure,
  sha256File,
  verifyReportedHashes,
  type DownloadFailure,
  type ModelFolder,
  type PinnedModel,
} from '../reranker/index.js';

/** Model management for `notary models` (the cache folder, its models, checks and installs; no network), for cli/. */
export {
  describeModelFolder,
  failureMarkerFile,
  forgetDownloadFailure,
  installModelFolder,
  isCachedModelComplete,
  listCachedModels,
  PINNED_MODELS,
  recentDownloadFailure,
  sha256File,
  type DownloadFailure,
  type ModelFolder,
  type PinnedModel,
};

export function modelCacheDir(cfg: NotaryConfig): string {
  return cfg.reranker.cache_dir ?? path.join(cfg.data_dir, 'models');
}

export interface VerifyResult {
  name: string;
  dir: string;
  ok: boolean;
  checks: string[];
}

export async function verifyModelFolder(folder: ModelFolder, cfg: NotaryConfig): Promise<VerifyResult> {
  const checks: string[] = [];
  let ok = folder.problem === null;
  if (folder.problem) checks.push(`files: ${folder.problem}`);
  const pin = activePins().find((p) => p.name === folder.name);
  if (pin) {
    const complete = await isCachedModelComplete(path.dirname(folder.dir), pin);
    checks.push(complete ? `sha256 of ${pin.files.length} files match the pins of ${pin.repo}` : `sha256 does NOT match the pins of ${pin.repo}`);
    ok &&= complete;
  } else {
    const reported = await verifyReportedHashes(folder.dir);
    if (reported.report) {
      checks.push(
        reported.mismatches.length === 0
          ? `sha256 of ${reported.checked} files match ${reported.report}`
          : `sha256 differs from ${reported.report} for ${reported.mismatches.join(', ')}`,
      );
      ok &&= reported.mismatches.length === 0;
    } else {
      checks.push('no pin or hash report to check the files against');
    }
  }
  if (folder.problem === null) {
    try {
      const model = await OnnxReranker.load(folder.dir, {
        ...modelRunners(cfg.reranker),
        spinWait: cfg.reranker.spin_wait,
        batchSize: cfg.reranker.batch_size,
        maxSeqLength: cfg.reranker.max_seq_length,
        source: 'verify',
      });
      try {
        const [score] = await model.score('what is a database index', ['An index is a data structure that speeds up lookups.']);
        const finite = score !== undefined && Number.isFinite(score);
        checks.push(finite ? `loads in ONNX Runtime and scores (${model.kind}, ${model.quantized ? 'int8' : 'fp32'}, ${path.relative(folder.dir, model.onnxPath)})` : 'loads but scores NaN');
        ok &&= finite;
      } finally {
        await model.close();
      }
    } catch (err) {
      checks.push(`does not load: ${err instanceof Error ? err.message : String(err)}`);
      ok = false;
    }
  }
  return { name: folder.name, dir: folder.dir, ok, checks };
}

