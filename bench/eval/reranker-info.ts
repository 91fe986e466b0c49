import path from 'node:path';
import type { NotaryConfig } from '../../core/config.js';
import { LexicalReranker } from '../../reranker/lexical.js';
import { OnnxReranker } from '../../reranker/onnx-reranker.js';
import type { Reranker } from '../../reranker/reranker.js';
import { loadReranker, sha256File, type RerankerLog } from '../../reranker/resolve.js';

/**
 * sha256 of <shared>/models/ms-marco-MiniLM-L-6-v2/onnx/model_random_weights_int8.onnx: the right architecture with
 * RANDOM weights, fine for wiring and speed, meaningless for relevance.
 */
export const RANDOM_WEIGHTS_ONNX_SHA256 = 'd51197388c3284eb9f23ce269cbc3112d84438bf39ae714d27aa3f628819c413';

export interface EvalRerankerInfo {
  kind: string;
  model: string;
  source: string;
  onnx_path: string | null;
  onnx_sha256: string | null;
  random_weights: boolean;
  /** How the harness picked it. */
  chosen_by: string;
}

/** Whether an ONNX file is the random-weight test model: by its hash, or by "random" + "weights" in its name. */
export function isRandomWeightsModel(onnxPath: string, sha256: string | null): boolean {
  return sha256 === RANDOM_WEIGHTS_ONNX_SHA256 || /random[-_]?weights/i.test(path.basename(onnxPath));
}

export async function describeReranker(reranker: Reranker, chosenBy: string): Promise<EvalRerankerInfo> {
  const { kind, model, source } = reranker.info;
  if (!(reranker instanceof OnnxReranker)) {
    return { kind, model, source, onnx_path: null, onnx_sha256: null, random_weights: false, chosen_by: chosenBy };
  }
  const sha = await sha256File(reranker.onnxPath);
  return {
    kind,
    model,
    source,
    onnx_path: reranker.onnxPath,
    onnx_sha256: sha,
    random_weights: isRandomWeightsModel(reranker.onnxPath, sha),
    chosen_by: chosenBy,
  };
}

/**
 * The harness's reranker: "lexical" forces the fallback; a path names a model directory or .onnx file; otherwise the
 * configured model (NOTARY_RERANKER_MODEL / reranker.model_dir) through loadReranker, and with none configured the
 * lexical fallback (the harness does not try the model cache or a download unless `choice` is "auto").
 */
export async function loadEvalReranker(
  cfg: NotaryConfig['reranker'],
  choice: string | undefined,
  log: RerankerLog,
): Promise<{ reranker: Reranker; chosenBy: string }> {
  if (choice === 'lexical') return { reranker: new LexicalReranker('harness'), chosenBy: '--reranker lexical' };
  if (choice === 'auto') return { reranker: await loadReranker(cfg, { log }), chosenBy: '--reranker auto (loadReranker: env, config, cache, download, fallback)' };
  if (choice) {
    const reranker = await loadReranker({ ...cfg, model_dir: path.resolve(choice) }, { log, env: {} });
    return { reranker, chosenBy: `--reranker ${choice}` };
  }
  if (cfg.model_dir) {
    return { reranker: await loadReranker(cfg, { log }), chosenBy: 'configured (NOTARY_RERANKER_MODEL / reranker.model_dir)' };
  }
  return {
    reranker: new LexicalReranker('fallback'),
    chosenBy: 'default: no reranker configured (NOTARY_RERANKER_MODEL / reranker.model_dir unset), so the LEXICAL FALLBACK',
  };
}
