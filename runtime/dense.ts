import path from 'node:path';
import { modelRunners, type NotaryConfig, NotaryError } from '../core/index.js';
import { defaultVectorStore } from '../indexer/index.js';
import { OnnxReranker, resolveModelFiles } from '../reranker/index.js';
import type { Reranker } from '../reranker/index.js';
import type { DenseRetrieval } from '../search/index.js';
import type { VectorIndex } from '../indexer/index.js';
import type { Storage } from '../storage/index.js';
import type { Log } from './log.js';
import './plugins.js'; // the registered vector stores (defaultVectorStore)

/** Dense retrieval as configured, and what to release when done. */
export interface OpenedDense {
  dense: DenseRetrieval | undefined;
  /** Why dense retrieval is off, when it is. */
  off?: string;
  /**
   * The bi-encoder, as a scorer (cosine of its vectors): what gives depth 1 its rerank_score when the reranker is
   * not itself a bi-encoder (a cross-encoder, which then serves the deeper searches, or the lexical fallback).
   */
  model?: OnnxReranker;
  close(): Promise<void>;
}

/** Loads a bi-encoder folder as configured (embeddings.precision picks its int8 copy when there is one). */
async function loadModel(cfg: NotaryConfig, given: string, source: string, log: Log): Promise<OnnxReranker> {
  // The pinned model is fp32 as published: its int8 copy is made in the model cache at the first start.
  const origin = source === 'pinned' ? `the pinned ${path.basename(given)} in the model cache` : `named by ${source}`;
  const where = await resolveModelFiles(given, { precision: cfg.embeddings.precision, cacheDir: cfg.reranker.cache_dir, log, origin });
  return OnnxReranker.load(where.dir, {
    ...modelRunners(cfg.reranker),
    spinWait: cfg.reranker.spin_wait,
    batchSize: cfg.reranker.batch_size,
    maxSeqLength: cfg.reranker.max_seq_length,
    source,
    onnxFile: where.onnxFile,
    why: where.why,
  });
}

/**
 * The configured embedder and its vector index. embeddings.model "reranker" uses `reranker` when it is a bi-encoder
 * (without one, e.g. in `notary crawl`, the explicitly configured reranker model directory if it is a bi-encoder);
 * a directory must hold a bi-encoder, else start-up fails with model_unavailable.
 */
export async function openDense(
  cfg: NotaryConfig,
  storage: Storage,
  options: {
    reranker?: Reranker;
    log: Log;
    vectors?: (options: { model: string; dimensions: number }) => Promise<VectorIndex>;
    /**
     * The pinned bi-encoder's folder in the model cache, when it is there (neededPins wants it only when the reranker
     * is no bi-encoder): embeddings.model "reranker" uses it then, with or without a named cross-encoder.
     */
    pinnedEmbedder?: string | undefined;
    /** Why the pinned bi-encoder is not there, when it was wanted. */
    pinnedMissing?: string | undefined;
  },
): Promise<OpenedDense> {
  const choice = cfg.embeddings.model;
  const none = (off: string): OpenedDense => ({ dense: undefined, off, close: async () => {} });
  if (choice === 'off') return none('embeddings.model is off');
  let model: OnnxReranker;
  let owned = false;
  if (choice === 'reranker') {
    if (options.reranker) {
      if ((!(options.reranker instanceof OnnxReranker) || options.reranker.kind !== 'bi-encoder') && options.pinnedEmbedder) {
        model = await loadModel(cfg, options.pinnedEmbedder, 'pinned', options.log);
        owned = true;
      } else if ((!(options.reranker instanceof OnnxReranker) || options.reranker.kind !== 'bi-encoder') && options.pinnedMissing) {
        return none(`${options.pinnedMissing}; set embeddings.model (NOTARY_EMBEDDING_MODEL) to a bi-encoder directory, or notary models pull`);
      } else if (!(options.reranker instanceof OnnxReranker) || options.reranker.kind !== 'bi-encoder') {
        const what = options.reranker.info.kind === 'lexical' ? 'the lexical fallback (no neural model)' : `a ${options.reranker.info.kind}`;
        return none(`no bi-encoder: the reranker is ${what}; set embeddings.model (NOTARY_EMBEDDING_MODEL) to a bi-encoder directory`);
      } else {
        model = options.reranker;
      }
    } else if (options.pinnedEmbedder) {
      model = await loadModel(cfg, options.pinnedEmbedder, 'pinned', options.log);
      owned = true;
    } else {
      const dir = cfg.reranker.model_dir;
      if (!dir) return none('no bi-encoder model is configured');
      const loaded = await loadModel(cfg, dir, 'config', options.log);
      if (loaded.kind !== 'bi-encoder') {
        await loaded.close();
        return none('the configured reranker model is a cross-encoder');
      }
      model = loaded;
      owned = true;
    }
  } else {
    model = await loadModel(cfg, choice, 'embeddings.model', options.log);
    owned = true;
    if (model.kind !== 'bi-encoder') {
      await model.close();
      throw new NotaryError(
        'model_unavailable',
        `embeddings.model (NOTARY_EMBEDDING_MODEL) ${choice} is a cross-encoder; it must name a bi-encoder (e.g. all-MiniLM-L6-v2). ` +
          'A cross-encoder goes in reranker.model_dir (NOTARY_RERANKER_MODEL)',
      );
    }
  }
  const embedder = await model.embedder();
  const reranker = options.reranker;
  // A separately named directory may hold the reranker's own weights: then stored vectors still give its scores. A
  // reranker that is not a bi-encoder (a cross-encoder, the lexical fallback) leaves depth 1 to this model's vectors.
  const rerankerIsBi = reranker instanceof OnnxReranker && reranker.kind === 'bi-encoder';
  const rerankerModel = reranker === model ? embedder.model : rerankerIsBi ? (await reranker.embedder()).model : reranker ? embedder.model : null;
  const vectorOptions = { model: embedder.model, dimensions: embedder.dimensions };
  const index = await (options.vectors ?? defaultVectorStore().open(cfg, storage, options.log))(vectorOptions);
  options.log('info', `dense retrieval: ${embedder.model} (${embedder.dimensions} dimensions) in ${index.name} beside the full-text index`);
  return {
    dense: { index, embedder, scoresFromVectors: rerankerModel === embedder.model },
    model,
    close: async () => {
      await index.close();
      if (owned) await model.close();
    },
  };
}
