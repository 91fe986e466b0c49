import { sql } from 'kysely';
import type { Storage } from '../storage/index.js';

/** pg_advisory_lock key of indexing (one indexer at a time across processes). */
const INDEXING_LOCK = 0x6e6f7420;

/**
 * Runs `work` while holding the deployment-wide indexing lock: on PostgreSQL a session advisory lock (held on one
 * connection of the pool, released when `work` ends or the process dies), so crawler processes index one after
 * another; on SQLite the database's own write lock serialises writers and this runs `work` directly.
 */
export async function exclusiveIndexing<T>(storage: Storage, work: () => Promise<T>): Promise<T> {
  if (storage.dialect !== 'postgres') return work();
  return storage.db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${INDEXING_LOCK})`.execute(connection);
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(${INDEXING_LOCK})`.execute(connection);
    }
  });
}
