import { availableParallelism } from 'node:os';
import { modelRunners, type NotaryConfig } from '../core/index.js';
import {
  activePins,
  cachedPinnedDir,
  ensurePinnedModels,
  neededPins,
  type PinnedStatus,
  OnnxReranker,
  loadReranker,
} from '../reranker/index.js';
import type { Reranker } from '../reranker/index.js';
import type { Storage } from '../storage/index.js';
import type { IndexBackend } from './backends.js';
import { openDense, type OpenedDense } from './dense.js';
import { lazy, type Lazy } from './lazy.js';
import type { Log } from './log.js';
import { pinnedEmbedderOf } from './model-fetch.js';
import { assignScorers, type Scorers } from './scorers.js';

/** The models of a runtime and what is built from them, each on first use. */
export interface ModelsWiring {
  /**
   * The pinned models this configuration needs (the cross-encoder and the bi-encoder, unless models are named), in
   * the cache or fetched from the hub; missing ones are said once, in one warning line.
   */
  models: Lazy<Promise<PinnedStatus[]>>;
  /** The reranker as resolved from config and environment (model, cache, download, lexical fallback). */
  reranker: Lazy<Promise<Reranker>>;
  /** Dense retrieval with the live reranker (embeddings.model "reranker" uses it when it is a bi-encoder). */
  dense: Lazy<Promise<OpenedDense>>;
  /** Dense retrieval without loading a reranker (crawl and index: only a configured bi-encoder is used). */
  denseForIndexing: Lazy<Promise<OpenedDense>>;
  /** Which model scores which depth (the bi-encoder the passes, the cross-encoder from search.cross_encoder_from_depth). */
  scorers: Lazy<Promise<Scorers>>;
}

export interface ModelsWiringDeps {
  config: NotaryConfig;
  storage: Storage;
  backend: IndexBackend;
  log: Log;
  env: Record<string, string | undefined>;
  /** Told once the scorers are known (the depth from which the cross-encoder scores, or null). */
  onCrossEncoderFrom(depth: number | null): void;
}

/** Wires the models: nothing loads until something asks for it, so a command that needs no model never loads one. */
export function modelsWiring({ config, storage, backend, log, env, onCrossEncoderFrom }: ModelsWiringDeps): ModelsWiring {
  const models = lazy(() => ensurePinnedModels(config.reranker, neededPins(config, activePins(env), env), { log }));
  const pinnedEmbedder = async () => pinnedEmbedderOf(await models());
  const reranker = lazy(async () => loadReranker(config.reranker, { log, env, precision: config.embeddings.precision, ensured: await models() }));
  const dense = lazy(async () => openDense(config, storage, { reranker: await reranker(), log, vectors: backend.vectors, ...(await pinnedEmbedder()) }));
  // Indexing never downloads: it uses the pinned bi-encoder only when it is already in the cache.
  const denseForIndexing = lazy(async () => {
    const cached = await cachedPinnedDir(config.reranker, neededPins(config, activePins(env), env), 'bi-encoder');
    return openDense(config, storage, { log, vectors: backend.vectors, pinnedEmbedder: cached });
  });
  const scorers = lazy(async () => {
    const assigned = assignScorers(config, await reranker(), await dense());
    onCrossEncoderFrom(assigned.crossEncoder?.options.fromDepth ?? null);
    const cross = assigned.crossEncoder?.model;
    const nice = config.search.cross_encoder_nice;
    if (cross instanceof OnnxReranker) {
      // Its own threads, all the cores at a lower priority: one depth-2 search spreads its pairs over them, and
      // the depth-1 work (the bi-encoder, full text) goes first.
      if (modelRunners(config.reranker).workers > 0) await cross.growWorkers(config.search.cross_encoder_workers ?? Math.min(4, availableParallelism()));
      if (nice > 0 && !(await cross.lowerPriority(nice))) {
        log('warn', `search.cross_encoder_nice ${nice}: the cross-encoder's threads could not be given a lower priority (reranker.workers 0?)`);
      }
    }
    return assigned;
  });
  return { models, reranker, dense, denseForIndexing, scorers };
}
