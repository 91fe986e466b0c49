import type { NotaryConfig } from '../core/index.js';
import { registerMigrations, type MigrationFactory, type Storage } from '../storage/index.js';
import type { BackendLog } from './backend-plugin.js';
import type { VectorIndex } from './vector-index.js';

/** Opens the vector index of one embedding model. */
export type VectorIndexFactory = (options: { model: string; dimensions: number }) => Promise<VectorIndex>;

/**
 * A vector store: where the passage vectors of a backend without a store of its own go (and those of dense retrieval
 * when no backend gives one). Like an index backend it brings its own tables and migrations from its own folder; the
 * shared code (runtime/dense.ts) opens the first registered, naming none. Registering is one line in
 * indexer/vector-stores.ts.
 */
export interface VectorStorePlugin {
  readonly name: string;
  /** By migration name: a name once run is recorded in every database, so it never changes. */
  readonly migrations?: Readonly<Record<string, MigrationFactory>>;
  open(config: NotaryConfig, storage: Storage, log?: BackendLog): VectorIndexFactory;
}

const registered: VectorStorePlugin[] = [];

/** Registers vector stores and their migrations (again with the same one is a no-op); before the database is migrated. */
export function registerVectorStores(list: readonly VectorStorePlugin[]): readonly VectorStorePlugin[] {
  for (const store of list) {
    if (registered.includes(store)) continue;
    if (registered.some((s) => s.name === store.name)) throw new Error(`vector store ${store.name} is registered twice`);
    if (store.migrations) registerMigrations(store.migrations);
    registered.push(store);
  }
  return registered;
}

/** The vector store dense retrieval uses when its backend has none of its own: the first registered. */
export function defaultVectorStore(): VectorStorePlugin {
  const first = registered[0];
  if (!first) throw new Error('no vector store is registered: import indexer/vector-stores.ts');
  return first;
}
