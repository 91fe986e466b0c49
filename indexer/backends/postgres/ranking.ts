import { sql } from 'kysely';
import { identifier, TS_CONFIG } from './schema.js';

/**
 * How a match is scored. `bm25` is Okapi BM25 as FTS5 computes it (k1 1.2, b 0.75; a term's frequency is the sum of
 * its occurrences weighted by field, title 4 : headings 2 : body 1; idf from per-term document frequencies kept in
 * a table the index's triggers maintain; length normalised by the passage's distinct lexemes), and measured best
 * (docs/relevance.md). `ts_rank` has no idf: a common word weighs as much as a rare one. The `ts_rank` variants
 * (weights 1.0 / 0.5 / 0.25, normalisation 1 = rank / (1 + log(length))) stay selectable for the measurement.
 */
export type PostgresRanking = 'bm25' | 'ts_rank' | 'ts_rank_cd' | 'ts_rank_nonorm';
export const DEFAULT_POSTGRES_RANKING: PostgresRanking = 'bm25';
export const POSTGRES_RANKINGS: readonly PostgresRanking[] = ['bm25', 'ts_rank', 'ts_rank_cd', 'ts_rank_nonorm'];

const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** Field weights by tsvector weight label (A, B, C, D): a term's BM25 frequency is the sum of its positions' weights. */
export interface LabelWeights {
  A: number;
  B: number;
  C: number;
  D: number;
}

/**
 * BM25 of the rows of `table`, as FTS5 computes it: per query term, idf = ln((N - df + 0.5) / (df + 0.5)) (at least
 * 1e-6) and tf = the term's occurrences in the row weighted by field; score = the sum of
 * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average length)). The length of a row is its number of
 * distinct lexemes (`length(tsv)`, read from the tsvector's header; counting positions would unpack every lexeme of
 * every matching row). tf comes from ts_rank_cd with the one-lexeme query and no normalisation, which is exactly the
 * sum of the weights of the lexeme's positions (each position is a cover of its own), so it runs in C per row.
 * `ctes` go in the query's WITH list (computed once per query), `score` is the per-row expression over `tsv`.
 */
export function bm25(table: string, words: string, weights: LabelWeights) {
  const terms = sql.raw(identifier(`${table}_terms`));
  const stats = sql.raw(identifier(`${table}_stats`));
  // ts_rank_cd takes weights in 0..1 ({D, C, B, A}); the frequencies are scaled back by the largest.
  const top = Math.max(weights.A, weights.B, weights.C, weights.D);
  const array = sql.raw(`'{${[weights.D, weights.C, weights.B, weights.A].map((w) => w / top).join(', ')}}'::float4[]`);
  const k1 = sql.raw(String(BM25_K1));
  return {
    ctes: sql`bm25_stats as materialized (
        select greatest(docs, 1)::float8 as n, greatest(tokens::float8 / greatest(docs, 1), 1) as avgdl from ${stats}),
      bm25_terms as materialized (
        select quote_literal(l.term)::tsquery as lexeme, greatest(ln((st.n - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)), 1e-6) as idf
        from unnest(tsvector_to_array(to_tsvector(${sql.raw(`'${TS_CONFIG}'`)}, ${words}::text))) l(term) cross join bm25_stats st
        left join ${terms} d on d.term = l.term)`,
    score: sql`(
      select coalesce(sum(qt.idf * e.tf * (${k1} + 1) / (e.tf + ${k1} * (${sql.raw(String(1 - BM25_B))} + ${sql.raw(String(BM25_B))} * length(tsv) / st.avgdl))), 0)
      from bm25_terms qt cross join lateral (select ${sql.raw(String(top))} * ts_rank_cd(${array}, tsv, qt.lexeme, 0)::float8 as tf) e
      cross join bm25_stats st)`,
  };
}
