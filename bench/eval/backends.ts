import type { NotaryConfig } from '../../core/config.js';
import { NotaryError } from '../../core/errors.js';
import { MeilisearchConnection, MeilisearchSearchIndex } from '../../indexer/backends/meilisearch.js';
import { PostgresSearchIndex } from '../../indexer/backends/postgres.js';
import type { SearchIndex } from '../../indexer/search-index.js';
import { migrateToLatest, openPostgres } from '../../storage/db.js';

/** Makes the passage index of one evaluation set (`set`: its name, part of the table or index name). */
export type EvalIndexFactory = (set: string) => Promise<SearchIndex>;

export const EVAL_BACKENDS = ['sqlite-fts5', 'postgres', 'meilisearch'] as const;
export type EvalBackend = (typeof EVAL_BACKENDS)[number];

/**
 * The index an evaluation set is searched through when it is not the embedded FTS5 one: a fresh table in the
 * PostgreSQL database of storage.postgres_url (NOTARY_DATABASE_URL), or a fresh index on the Meilisearch server of
 * indexer.meilisearch (NOTARY_MEILISEARCH_URL, NOTARY_MEILISEARCH_API_KEY); both dropped when the set closes. The
 * set's pages and passages stay in its own SQLite store (ids come from there), as with FTS5.
 */
export function evalIndexFactory(backend: EvalBackend, config: NotaryConfig): EvalIndexFactory | undefined {
  const tag = `eval_${process.pid}_${Date.now().toString(36)}`;
  if (backend === 'sqlite-fts5') return undefined;
  if (backend === 'postgres') {
    const url = config.storage.postgres_url;
    if (!url) throw new NotaryError('invalid_config', '--backend postgres needs a database: set NOTARY_DATABASE_URL');
    return async (set) => {
      const storage = openPostgres(url);
      await migrateToLatest(storage);
      const table = `${tag}_${set}`.replace(/[^a-z0-9_]/g, '_');
      const index = await PostgresSearchIndex.open(storage, { table });
      const close = index.close.bind(index);
      return Object.assign(index, {
        close: async () => {
          await close();
          await storage.db.schema.dropTable(table).ifExists().execute();
          await storage.db.schema.dropTable(`${table}_pages`).ifExists().execute();
          await storage.close();
        },
      });
    };
  }
  const meili = config.indexer.meilisearch;
  if (!meili.url) throw new NotaryError('invalid_config', '--backend meilisearch needs a server: set NOTARY_MEILISEARCH_URL (and NOTARY_MEILISEARCH_API_KEY)');
  const url = meili.url;
  return async (set) => {
    const connection = new MeilisearchConnection({
      url,
      apiKey: meili.api_key,
      index: `${tag}_${set}`.replace(/[^A-Za-z0-9_-]/g, '_'),
      taskTimeoutMs: meili.task_timeout_ms * 10,
      requestTimeoutMs: meili.request_timeout_ms,
      batchSize: meili.batch_size,
    });
    const index = await MeilisearchSearchIndex.open(connection);
    const close = index.close.bind(index);
    return Object.assign(index, {
      close: async () => {
        await close();
        await connection.client.deleteIndexIfExists(connection.options.index);
        await connection.client.deleteIndexIfExists(index.pagesUid);
      },
    });
  };
}
