/** Creating the PostgreSQL index's schema: plain identifiers, the dialect check, the schema lock (BM25's tables: term-stats.ts). */
import { sql, type Kysely } from 'kysely';
import { NotaryError } from '../../../core/index.js';
import type { Storage, Database } from '../../../storage/index.js';

/**
 * The text search configuration: Porter stems of every word, stopwords kept, Latin diacritics folded first (unaccent),
 * as FTS5's `porter unicode61 remove_diacritics 2` indexes. (Tables made with the older `notary_english`, Snowball
 * English stems without stopwords, are analysed again when opened: search-index.ts.)
 */
export const TS_CONFIG = 'notary_porter';
export const OLD_TS_CONFIGS: readonly string[] = ['notary_english'];

/** Creates TS_CONFIG once per database (its own lock: every index table of the database shares it). */
export async function ensureTextSearchConfig(db: Kysely<Database>): Promise<void> {
  await withSchemaLock(db, `notary-schema:${TS_CONFIG}`, async (trx) => {
    await sql`create extension if not exists unaccent`.execute(trx);
    const exists = await sql<{ n: number }>`select count(*)::int as n from pg_ts_config where cfgname = ${TS_CONFIG}`.execute(trx);
    if ((exists.rows[0]?.n ?? 0) > 0) return;
    const cfg = sql.raw(TS_CONFIG);
    await sql`create text search dictionary ${cfg} (template = snowball, language = porter)`.execute(trx);
    await sql`create text search configuration ${cfg} (copy = english)`.execute(trx);
    await sql`alter text search configuration ${cfg} alter mapping for asciiword, asciihword, hword_asciipart, hword, hword_part, word
      with unaccent, ${cfg}`.execute(trx);
  });
}

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
