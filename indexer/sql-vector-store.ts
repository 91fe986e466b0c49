import path from 'node:path';
import type { NotaryConfig } from '../core/index.js';
import type { Storage } from '../storage/index.js';
import type { BackendLog } from './backend-plugin.js';
import { SQL_VECTOR_MIGRATIONS } from './sql-vector-migrations.js';
import { SqlVectorIndex } from './sql-vector-index.js';
import type { VectorIndexFactory, VectorStorePlugin } from './vector-store-plugin.js';

/** HNSW settings of the SQL vector store: its graph is saved beside the SQLite file (PostgreSQL: in data_dir). */
export function sqlVectorAnn(config: NotaryConfig, storage: Storage, log?: BackendLog): { above: number; directory?: string; log?: (message: string) => void } {
  const above = config.embeddings.ann_above;
  const told = log ? { log: (message: string) => log('info', message) } : {};
  if (!config.embeddings.ann_persist || storage.file === ':memory:') return { above, ...told };
  return { above, directory: storage.file ? `${storage.file}.hnsw` : path.join(config.data_dir, 'vector-graphs'), ...told };
}

/**
 * The SQL vector store (vectors in the `passage_vectors` table of the shared database, searched exactly or through an
 * HNSW graph): the vector store of a backend that has none of its own, and of dense retrieval without a backend's.
 */
export function sqlVectorStore(config: NotaryConfig, storage: Storage, log?: BackendLog): VectorIndexFactory {
  return async (options) => new SqlVectorIndex(storage, { ...options, ann: sqlVectorAnn(config, storage, log) });
}

/** The SQL vector store as a plug-in: its tables (sql-vector-tables.ts) and migrations come with it. */
export const sqlVectorStorePlugin: VectorStorePlugin = { name: 'sql', migrations: SQL_VECTOR_MIGRATIONS, open: sqlVectorStore };
