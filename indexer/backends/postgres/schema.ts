/** Creating the PostgreSQL index's schema: plain identifiers, the dialect check, the schema lock (BM25's tables: term-stats.ts). */
import { sql, type Kysely } from 'kysely';
import { NotaryError } from '../../../core/errors.js';
import type { Storage } from '../../../storage/db.js';
import type { Database } from '../../../storage/schema.js';

/** The text search configuration: English stems with Latin diacritics folded first (unaccent), as FTS5 does. */
export const TS_CONFIG = 'notary_english';

export function identifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new NotaryError('invalid_config', `"${name}" is not a plain SQL identifier`);
  return name;
}

export function requirePostgres(storage: Storage, what: string): Kysely<Database> {
  if (storage.dialect !== 'postgres') throw new NotaryError('invalid_config', `${what} needs storage.driver postgres (NOTARY_STORAGE=postgres)`);
  return storage.db;
}

/** Runs `fn` holding a transaction-level advisory lock, so processes starting together create a schema once. */
export async function withSchemaLock(db: Kysely<Database>, key: string, fn: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
    await fn(trx);
  });
}
