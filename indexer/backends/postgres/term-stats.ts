/** BM25's tables beside a tsvector table: per-term document frequencies, the row and token counts, and the postings. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../storage/index.js';
import { identifier } from './schema.js';

/** The names of the tables BM25 reads beside `table`. */
export function termTables(table: string) {
  return {
    terms: sql.raw(identifier(`${table}_terms`)),
    stats: sql.raw(identifier(`${table}_stats`)),
    postings: sql.raw(identifier(`${table}_postings`)),
  };
}

/**
 * The postings of the rows in `rows` (a table or transition table with the key column `key` and a tsvector `tsv`):
 * one per (lexeme, row), with the lexeme's occurrences in the row by weight label (title A, headings B, ... as the
 * tsvector holds them, at most 256 per lexeme) and the row's length in distinct lexemes. Lexemes in a fixed order, so
 * two writers lock postings in the same order.
 */
function postingsOf(rows: string, key: string) {
  const r = sql.raw(rows);
  const k = sql.raw(key);
  const count = (label: string) => sql.raw(`cardinality(array_positions(u.weights, '${label}'))`);
  return sql`select u.lexeme, ${r}.${k}, ${count('A')}, ${count('B')}, ${count('C')}, ${count('D')}, length(${r}.tsv)
    from ${r}, unnest(${r}.tsv) u order by u.lexeme, ${r}.${k}`;
}

/**
 * Per-term document frequencies (`<table>_terms`), the row and token counts (`<table>_stats`) and the postings
 * (`<table>_postings`: term, row key, occurrences by label, row length) of `table` (which has a tsvector column
 * `tsv` and the unique key column `key`), kept by statement triggers on every insert, update and delete, so BM25 has
 * its idf, its average length and each term's frequency per row without reading a tsvector. Created idempotently;
 * counted from the rows once, when first created (a table indexed before any of them existed gets them when opened).
 * Runs inside the caller's schema transaction: creating the triggers locks the table against writes until it commits,
 * so no write falls between the count and the triggers.
 */
export async function ensureTermStats(trx: Kysely<Database>, table: string, key: string): Promise<void> {
  const t = sql.raw(table);
  const k = sql.raw(identifier(key));
  const { terms, stats, postings } = termTables(table);
  const fn = (suffix: string) => sql.raw(identifier(`${table}_${suffix}`));
  const hadPostings = await sql<{ r: string | null }>`select to_regclass(${`${table}_postings`})::text as r`.execute(trx);
  await sql`create table if not exists ${terms} (term text primary key, df integer not null)`.execute(trx);
  // tokens: the sum of the rows' lengths in distinct lexemes (what BM25's length normalisation uses here).
  await sql`create table if not exists ${stats} (id integer primary key default 1 check (id = 1), docs bigint not null, tokens bigint not null)`.execute(trx);
  await sql`create table if not exists ${postings} (term text not null, doc bigint not null,
    a smallint not null, b smallint not null, c smallint not null, d smallint not null, len integer not null,
    primary key (term, doc))`.execute(trx);
  const add = (rows: string) => sql`
    insert into ${terms} (term, df) select lexeme, count(*) from ${sql.raw(rows)}, unnest(${sql.raw(rows)}.tsv) group by lexeme order by lexeme
      on conflict (term) do update set df = ${terms}.df + excluded.df;
    update ${stats} set docs = docs + (select count(*) from ${sql.raw(rows)}),
      tokens = tokens + (select coalesce(sum(length(tsv)), 0) from ${sql.raw(rows)});
    insert into ${postings} (term, doc, a, b, c, d, len) ${postingsOf(rows, key)};`;
  const remove = (rows: string) => sql`
    with gone as (select lexeme, count(*) as n from ${sql.raw(rows)}, unnest(${sql.raw(rows)}.tsv) group by lexeme order by lexeme),
      lowered as (update ${terms} t set df = t.df - gone.n from gone where t.term = gone.lexeme returning t.term, t.df)
    delete from ${terms} t using lowered where t.term = lowered.term and lowered.df <= 0;
    update ${stats} set docs = docs - (select count(*) from ${sql.raw(rows)}),
      tokens = tokens - (select coalesce(sum(length(tsv)), 0) from ${sql.raw(rows)});
    delete from ${postings} p using (select u.lexeme, ${sql.raw(rows)}.${k} as doc from ${sql.raw(rows)}, unnest(${sql.raw(rows)}.tsv) u) g
      where p.term = g.lexeme and p.doc = g.doc;`;
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
  // A table indexed before the postings existed (or whose postings were dropped) gets them from its rows, once.
  if (hadPostings.rows[0]?.r == null) {
    await sql`insert into ${postings} (term, doc, a, b, c, d, len) ${postingsOf(table, key)} on conflict do nothing`.execute(trx);
    await sql`analyze ${postings}`.execute(trx);
  }
}
