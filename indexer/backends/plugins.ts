import { registerIndexBackends } from '../backend-plugin.js';
import { fts5Backend } from './fts5/plugin.js';
import { meilisearchBackend } from './meilisearch/plugin.js';
import { postgresBackend } from './postgres/plugin.js';

/**
 * The registered index backends: one line each. The first is the default of `indexer.backend`. Importing this module
 * registers them.
 */
export const INDEX_BACKENDS = registerIndexBackends([
  fts5Backend,
  postgresBackend,
  meilisearchBackend,
]);
