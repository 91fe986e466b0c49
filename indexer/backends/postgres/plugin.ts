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
    /**
     * Where passage vectors are kept: pgvector (its HNSW index, in the same database) or service (the service
     * database's SQL vector store, as with sqlite-fts5: an exact scan of an in-memory copy, HNSW above
     * embeddings.ann_above). NOTARY_POSTGRES_VECTORS overrides.
     */
    vectors: z
      .enum(['pgvector', 'service'], { error: 'pgvector (a pgvector HNSW index) or service (the service database\'s vector store)' })
      .default('pgvector'),
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
  env: [
    { env: 'NOTARY_POSTGRES_RANKING', path: ['indexer', 'postgres', 'ranking'], kind: 'string' },
    { env: 'NOTARY_POSTGRES_VECTORS', path: ['indexer', 'postgres', 'vectors'], kind: 'string' },
  ],
};

/** Full text in PostgreSQL (the state's database), vectors with pgvector or in the service's vector store. Its modules load when it opens. */
export const postgresBackend: IndexBackendPlugin = {
  name: 'postgres',
  config: [postgresConfig],
  async open({ config, storage, log }) {
    const [{ PostgresSearchIndex }, { PgVectorIndex }, { chosenVectorStore }] = await Promise.all([
      import('./search-index.js'),
      import('./vector-index.js'),
      import('../vector-choice.js'),
    ]);
    const section = configSection(config, postgresConfig);
    const index = await PostgresSearchIndex.open(storage, { ranking: section.ranking });
    return {
      index,
      vectors: chosenVectorStore({
        setting: 'indexer.postgres.vectors',
        value: section.vectors,
        own: { value: 'pgvector', open: (options) => PgVectorIndex.open(storage, options), peek: async (options) => PgVectorIndex.attach(storage, options) },
        deps: { config, storage, log },
      }),
      rebuild: (source, onProgress, pages) => index.rebuild(source, onProgress, pages),
      ready: async () => true,
    };
  },
};
