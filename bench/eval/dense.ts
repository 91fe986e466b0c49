import type { Embedder } from '../../reranker/embedder.js';
import type { DenseRetrieval } from '../../search/request-state.js';
import type { Runtime } from '../../runtime/index.js';

/** What an eval set needs for dense retrieval: the embedder, and whether it is the reranker's own model. */
export interface EvalDenseOptions {
  embedder: Embedder;
  scoresFromVectors: boolean;
  /** Embeds the passages at index time instead of `embedder` (a cache of the same model); queries never use it. */
  indexEmbedder?: Embedder;
}

/**
 * Embeds every stored passage through the runtime's Indexer (the real indexing path) into its backend's vector store
 * as configured (indexer.<backend>.vectors: the engine's own or the service database's; until 2026-11-28 always the
 * SQL vector store, whatever the backend).
 */
export async function embedStoredPassages(
  runtime: Runtime,
  options: EvalDenseOptions,
  log: (msg: string) => void,
  setName: string,
): Promise<{ dense: DenseRetrieval; embedMs: number; embedded: number }> {
  const vectors = await runtime.backend.vectors({ model: options.embedder.model, dimensions: options.embedder.dimensions });
  const started = performance.now();
  let lastShown = started;
  const embedded = await runtime.indexer({ index: vectors, embedder: options.indexEmbedder ?? options.embedder, scoresFromVectors: options.scoresFromVectors }).embedPending(
    (p) => {
      if (performance.now() - lastShown > 10_000) {
        lastShown = performance.now();
        const rate = p.embedded / ((performance.now() - started) / 1000);
        log(`${setName}: embedded ${p.embedded} passages (${rate.toFixed(1)}/s)`);
      }
    },
  );
  const embedMs = performance.now() - started;
  log(`${setName}: embedded ${embedded} passages with ${options.embedder.model} in ${(embedMs / 1000).toFixed(1)} s`);
  return { dense: { index: vectors, embedder: options.embedder, scoresFromVectors: options.scoresFromVectors }, embedMs, embedded };
}
