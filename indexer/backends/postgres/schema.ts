/** Creating the PostgreSQL index's schema: plain identifiers, the dialect check, the schema lock, BM25's term statistics. */
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

/**
 * Per-term document frequencies and the document and token counts of `table` (which has a tsvector column `tsv`),
 * kept in `<table>_terms` and `<table>_stats` by statement triggers on every insert, update and delete (so BM25 has
 * its idf and average length without a scan). Created idempotently; counted from the rows once, when first created.
 * Runs inside the caller's schema transaction: creating the triggers locks the table against writes until it commits,
 * so no write falls between the count and the triggers.
 */
export async function ensureTermStats(trx: Kysely<Database>, table: string): Promise<void> {
  const t = sql.raw(table);
  const terms = sql.raw(identifier(`${table}_terms`));
  const stats = sql.raw(identifier(`${table}_stats`));
  const fn = (suffix: string) => sql.raw(identifier(`${table}_${suffix}`));
  await sql`create table if not exists ${terms} (term text primary key, df integer not null)`.execute(trx);
  // tokens: the sum of the rows' lengths in distinct lexemes (what BM25's length normalisation uses here).
  await sql`create table if not exists ${stats} (id integer primary key default 1 check (id = 1), docs bigint not null, tokens bigint not null)`.execute(trx);
  // Lexemes in a fixed order, so two writers lock term rows in the same order (no deadlock).
  const add = (rows: string) => sql`
    insert into ${terms} (term, df) select lexeme, count(*) from ${sql.raw(rows)}, unnest(${sql.raw(rows)}.tsv) group by lexeme order by lexeme
      on conflict (term) do update set df = ${terms}.df + excluded.df;
    update ${stats} set docs = docs + (select count(*) from ${sql.raw(rows)}),
      tokens = tokens + (select coalesce(sum(length(tsv)), 0) from ${sql.raw(rows)});`;
  const remove = (rows: string) => sql`
    with gone as (select lexeme, count(*) as n from ${sql.raw(rows)}, unnest(${sql.raw(rows)}.tsv) group by lexeme order by lexeme),
      lowered as (update ${terms} t set df = t.df - gone.n from gone where t.term = gone.lexeme returning t.term, t.df)
    delete from ${terms} t using lowered where t.term = lowered.term and lowered.df <= 0;
    update ${stats} set docs = docs - (select count(*) from ${sql.raw(rows)}),
      tokens = tokens - (select coalesce(sum(length(tsv)), 0) from ${sql.raw(rows)});`;
  const body = (...parts: ReturnType<typeof sql>[]) => sql.join(parts, sql` `);
  for (const [name, event, referencing, work] of [
    ['stats_insert', 'insert', 'new table as new_rows', body(add('new_rows'))],
    ['stats_update', 'update', 'old table as old_rows new table as new_rows', body(remove('old_rows'), add('new_rows'))],
    ['stats_delete', 'delete', 'old table as old_rows', body(remove('old_rows'))],
  ] as const) {
    await sql`create or replace function ${fn(name)}() returns trigger language plpgsql as $notary$ begin ${work} return null; end $notary$`.execute(trx);
    await sql`create or replace trigger ${fn(name)} after ${sql.raw(event)} on ${t} referencing ${sql.raw(referencing)}
      for each statement execute function ${fn(name)}()`.execute(trx);
  }
  const counted = await sql<{ n: number }>`select count(*)::int as n from ${stats}`.execute(trx);
  if ((counted.rows[0]?.n ?? 0) === 0) {
    await sql`insert into ${stats} (id, docs, tokens) select 1, count(*), coalesce(sum(length(tsv)), 0) from ${t}`.execute(trx);
    await sql`insert into ${terms} (term, df) select lexeme, count(*) from ${t}, unnest(${t}.tsv) group by lexeme on conflict (term) do nothing`.execute(trx);
  }
}
