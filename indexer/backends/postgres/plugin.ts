import { z } from 'zod';
import { configSection, type ConfigFragment } from '../../../core/index.js';
import type { IndexBackendPlugin } from '../../backend-plugin.js';

const postgresSchema = z
  .object({
    /**
     * How the postgres backend ranks matches: bm25 (idf from per-term document frequencies the index keeps, as
     * FTS5 ranks) or ts_rank / ts_rank_cd / ts_rank_nonorm (PostgreSQL's, without idf; kept for comparison).
     * NOTARY_POSTGRES_RANKING overrides.
     */
    ranking: z.enum(['bm25', 'ts_rank', 'ts_rank_cd', 'ts_rank_nonorm']).default('bm25'),
  })
  .prefault({});

/** `indexer.postgres`: full text in PostgreSQL (needs storage.driver postgres). */
export const postgresConfig: ConfigFragment<z.infer<typeof postgresSchema>> = {
  path: ['indexer', 'postgres'],
  schema: postgresSchema,
  rules(cfg, issue) {
    if (cfg.indexer.backend === 'postgres' && cfg.storage.driver !== 'postgres') {
      issue(['indexer', 'backend'], 'postgres needs storage.driver postgres (NOTARY_STORAGE=postgres)');
    }
  },
  env: [{ env: 'NOTARY_POSTGRES_RANKING', path: ['indexer', 'postgres', 'ranking'], kind: 'string' }],
};

/** Full text in PostgreSQL (the state's database), vectors with pgvector. Its modules load when it opens. */
export const postgresBackend: IndexBackendPlugin = {
  name: 'postgres',
  config: [postgresConfig],
  async open({ config, storage }) {
    const [{ PostgresSearchIndex }, { PgVectorIndex }] = await Promise.all([import('./search-index.js'), import('./vector-index.js')]);
    const index = await PostgresSearchIndex.open(storage, { ranking: configSection(config, postgresConfig).ranking });
    return {
      index,
      vectors: (options) => PgVectorIndex.open(storage, options),
      rebuild: (source, onProgress, pages) => index.rebuild(source, onProgress, pages),
      ready: async () => true,
    };
  },
};
