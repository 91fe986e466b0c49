import type { NotaryConfig } from '../../core/config.js';
import { Indexer } from '../../indexer/indexer.js';
import type { SearchIndex } from '../../indexer/search-index.js';
import { SqlVectorIndex } from '../../indexer/sql-vector-index.js';
import type { Embedder } from '../../reranker/embedder.js';
import type { DenseRetrieval } from '../../search/pipeline.js';
import type { Storage } from '../../storage/db.js';
import { PageStore } from '../../storage/pages.js';

/** What an eval set needs for dense retrieval: the embedder, and whether it is the reranker's own model. */
export interface EvalDenseOptions {
  embedder: Embedder;
  scoresFromVectors: boolean;
  /** Embeds the passages at index time instead of `embedder` (a cache of the same model); queries never use it. */
  indexEmbedder?: Embedder;
}

/** Embeds every stored passage through the Indexer (the real indexing path) into a SqlVectorIndex on `storage`. */
export async function embedStoredPassages(
  storage: Storage,
  index: SearchIndex,
  indexer: NotaryConfig['indexer'],
  options: EvalDenseOptions,
  log: (msg: string) => void,
  setName: string,
): Promise<{ dense: DenseRetrieval; embedMs: number; embedded: number }> {
  const vectors = new SqlVectorIndex(storage, { model: options.embedder.model, dimensions: options.embedder.dimensions });
  const started = performance.now();
  let lastShown = started;
  const embedded = await new Indexer({ pages: new PageStore(storage.db), index, config: indexer, vectors: { index: vectors, embedder: options.indexEmbedder ?? options.embedder } }).embedPending(
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
