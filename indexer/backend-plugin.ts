import type { Command } from 'commander';
import {
  registerConfigFragments,
  type ConfigFragment,
  type NotaryConfig,
  registerIndexBackendNames,
  registerErrorCodes,
  type ErrorEntry,
} from '../core/index.js';
import type { Storage } from '../storage/index.js';
import { registerMigrations, type MigrationFactory } from '../storage/index.js';
import type { IndexDoc, PageDoc, SearchIndex } from './search-index.js';
import type { VectorIndex } from './vector-index.js';

export type BackendLog = (level: 'info' | 'warn', message: string) => void;

/** What an index backend is opened with. */
export interface IndexBackendDeps {
  config: NotaryConfig;
  storage: Storage;
  log?: BackendLog;
}

/** An opened index backend: its search index, where its vectors go, how it rebuilds, and what its readiness probe asks. */
export interface IndexBackend {
  index: SearchIndex;
  /** The vector index of an embedding model on this backend (the backend's vector store). */
  vectors(options: { model: string; dimensions: number }): Promise<VectorIndex>;
  /**
   * Rebuilds the whole index from the stored passages (and the page-level index from `pages`) without serving a
   * half-built one.
   */
  rebuild(source: AsyncIterable<readonly IndexDoc[]>, onProgress?: (documents: number) => void, pages?: AsyncIterable<readonly PageDoc[]>): Promise<number>;
  /** A reachability probe for /readyz (listed as `index`). */
  ready(): Promise<boolean>;
  /** True when opening made the index's tables anew over an older layout: it must be rebuilt from the stored passages. */
  layoutChanged?: boolean;
}

/** What a backend's CLI commands get besides their arguments: the configuration the global options name. */
export interface IndexBackendCliContext {
  config(): NotaryConfig;
  /** Runs `fn` on the configured database (opened and migrated, closed after). */
  withStorage<T>(fn: (storage: Storage) => Promise<T>): Promise<T>;
}

/**
 * Everything an index backend adds to the service, from its own folder: its name (the value of `indexer.backend`),
 * its configuration section (under `indexer.<name>`) with its own rules and environment variables, its error codes,
 * its migrations, its CLI commands (under `notary index`), and the factory that opens its search index and its vector
 * store. The shared code (core/config, runtime/backends, cli/main) loops over the registered backends; none names
 * one. Registering is one line in indexer/backends/plugins.ts; the first registered is the default backend.
 */
export interface IndexBackendPlugin {
  readonly name: string;
  readonly config?: readonly ConfigFragment[];
  readonly errors?: Readonly<Record<string, ErrorEntry>>;
  /** By migration name: a name once run is recorded in every database, so it never changes. */
  readonly migrations?: Readonly<Record<string, MigrationFactory>>;
  /** Opens the search index and vector store (waiting at start for a server it needs, server.start_wait_ms). */
  open(deps: IndexBackendDeps): Promise<IndexBackend>;
  /** Adds the backend's commands under `notary index`. */
  cli?(index: Command, context: IndexBackendCliContext): void;
}

const registered: IndexBackendPlugin[] = [];

/**
 * Registers index backends: their names become the values `indexer.backend` accepts, and their config sections,
 * error codes and migrations join the shared ones. Registering the same backend again is a no-op; must run before the
 * configuration is read and the database migrated.
 */
export function registerIndexBackends(list: readonly IndexBackendPlugin[]): readonly IndexBackendPlugin[] {
  for (const backend of list) {
    if (registered.includes(backend)) continue;
    if (registered.some((b) => b.name === backend.name)) throw new Error(`index backend ${backend.name} is registered twice`);
    if (backend.errors) registerErrorCodes(backend.errors);
    if (backend.config) registerConfigFragments(backend.config);
    if (backend.migrations) registerMigrations(backend.migrations);
    registered.push(backend);
    registerIndexBackendNames(registered.map((b) => b.name));
  }
  return list;
}

/** Every registered index backend, in registration order. */
export function registeredIndexBackends(): readonly IndexBackendPlugin[] {
  return registered;
}

/** The backend `indexer.backend` names (the configuration accepts only registered names). */
export function indexBackendNamed(name: string): IndexBackendPlugin {
  const backend = registered.find((b) => b.name === name);
  if (!backend) throw new Error(`index backend ${name} is not registered (indexer/backends/plugins.ts)`);
  return backend;
}
