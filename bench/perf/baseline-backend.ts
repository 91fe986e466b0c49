/**
 * The SQLite FTS5 baseline beside another index backend in one bench run (issue 34): the same stored pages and
 * passages (SQLite storage in the bench's data folder), their FTS5 index rebuilt from storage and their vectors in
 * the SQLite vector index, so both backends answer the same queries over the same corpus.
 */
import { configSchema, type NotaryConfig } from '../../core/config.js';
import type { DenseRetrieval } from '../../search/request-state.js';
import { Runtime } from '../../runtime/index.js';
import { cachedEmbedder } from '../eval/embedding-cache.js';

export interface Baseline {
  config: NotaryConfig;
  runtime: Runtime;
  dense: DenseRetrieval;
}

/** Whether a baseline can share the run's storage: the backend is not already SQLite and storage is a SQLite file. */
export function wantsBaseline(config: NotaryConfig): boolean {
  return config.indexer.backend !== 'sqlite-fts5' && config.storage.driver !== 'postgres';
}

export async function openBaseline(config: NotaryConfig, note: (message: string) => void): Promise<Baseline> {
  const baseConfig = configSchema.parse({ ...config, indexer: { ...config.indexer, backend: 'sqlite-fts5' } });
  const runtime = await Runtime.open(baseConfig, { env: {}, log: (level, message) => (level === 'warn' ? note(`baseline warning: ${message}`) : undefined) });
  try {
    const documents = await runtime.rebuildIndex();
    const { dense, off } = await runtime.dense();
    if (!dense) throw new Error(`the SQLite baseline needs dense retrieval: ${off ?? 'unknown reason'}`);
    const cache = cachedEmbedder(dense.embedder);
    await runtime.indexer({ ...dense, embedder: cache }).embedPending();
    cache.close();
    await runtime.index.warm?.();
    note(`baseline: sqlite-fts5 over the same storage, ${documents} passages indexed, ${(await dense.index.stats()).vectors} vectors`);
    return { config: baseConfig, runtime, dense };
  } catch (err) {
    await runtime.close();
    throw err;
  }
}
