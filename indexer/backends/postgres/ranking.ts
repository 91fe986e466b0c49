import { sql } from 'kysely';
import { TS_CONFIG } from './schema.js';
import { termTables } from './term-stats.js';

/**
 * How a match is scored. `bm25` is Okapi BM25 as FTS5 computes it (k1 1.2, b 0.75; a term's frequency is the sum of
 * its occurrences weighted by field, title 4 : headings 2 : body 1; idf from per-term document frequencies and tf from
 * postings, tables the index's triggers maintain; length normalised by the passage's distinct lexemes), and measured best
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
 * BM25 of the rows of `table` over its postings (term-stats.ts), as FTS5 computes it: per query term, idf =
 * ln((N - df + 0.5) / (df + 0.5)) (at least 1e-6) and tf = the term's occurrences in the row weighted by field; score =
 * the sum of idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average length)). The length of a row is its
 * number of distinct lexemes. The score of a row is a join of the query's terms with their postings (an index range
 * per term, no tsvector read), summed per row: `ctes` go in the query's WITH list and define `bm25_scored (doc, score)`,
 * one row per matching row of `table`. The plan is pinned: the statistics are one row (`limit 1`: the planner cannot
 * know it of a table never analysed, and took it for 1,700 rows, which made the cost estimate millions and switched on
 * JIT compilation, 2-3 s of a Cranfield question's 2.5 s), and each term's postings are read by their own index range
 * (`offset 0` keeps the lateral subquery from being merged into a merge join over the whole postings index). A term's
 * part of a score is summed in units of 1e-12 as an integer, so the sum does not depend on the order the plan adds a
 * row's terms in (in floating point it did, to the last bit: two copies of an index broke the same tie differently).
 * Each identifier of the query (lc_numeric: `phrases`, its parts space-separated) is a term of its own, as in FTS5:
 * its rows are those the GIN index finds for the phrase, its tf the phrase's occurrences (counted from the positions
 * of the row's tsvector, by the weight label of its first word) and its df the number of those rows. With `only`
 * (a search within some pages: the pipeline's page passes and highlights) the terms' postings are looked up row by row
 * for those pages' rows instead of read whole (the statistics stay the whole index's).
 */
export function bm25(
  table: string,
  key: string,
  query: { words: string; phrases: readonly string[] },
  weights: LabelWeights,
  only?: { pageIds: readonly number[] },
) {
  const { terms, stats, postings } = termTables(table);
  const t = sql.raw(table);
  const k = sql.raw(key);
  const cfg = sql.raw(`'${TS_CONFIG}'`);
  const k1 = sql.raw(String(BM25_K1));
  const num = (n: number) => sql.raw(String(n));
  const tf = sql`(p.a * ${num(weights.A)} + p.b * ${num(weights.B)} + p.c * ${num(weights.C)} + p.d * ${num(weights.D)})::float8`;
  return sql`bm25_stats as materialized (
        select greatest(docs, 1)::float8 as n, greatest(tokens::float8 / greatest(docs, 1), 1) as avgdl from ${stats} limit 1),
      bm25_terms as materialized (
        select l.term, greatest(ln((st.n - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)), 1e-6) as idf
        from unnest(tsvector_to_array(to_tsvector(${cfg}, ${query.words}::text))) l(term) cross join bm25_stats st
        left join ${terms} d on d.term = l.term),
      bm25_phrases as materialized (
        select ph.n, phraseto_tsquery(${cfg}, ph.text) as q, v.lexemes, v.offsets
        from unnest(${[...query.phrases]}::text[]) with ordinality ph(text, n)
        cross join lateral (select array_agg(u.lexeme order by pos) as lexemes, array_agg(pos order by pos) as offsets
          from unnest(to_tsvector(${cfg}, ph.text)) u cross join lateral unnest(u.positions) pos) v
        where cardinality(v.lexemes) > 1),
      bm25_phrase_rows as materialized (
        select ph.n, r.doc, c.a, c.b, c.c, c.d, r.len
        from bm25_phrases ph
        cross join lateral (select ${k} as doc, tsv, length(tsv) as len from ${t} where tsv @@ ph.q offset 0) r
        cross join lateral (
          with hits as materialized (select u.lexeme, s.pos, s.w from unnest(r.tsv) u
            cross join lateral unnest(u.positions, u.weights) s(pos, w) where u.lexeme = any(ph.lexemes))
          select count(*) filter (where h.w = 'A') as a, count(*) filter (where h.w = 'B') as b,
            count(*) filter (where h.w = 'C') as c, count(*) filter (where h.w = 'D') as d
          from hits h where h.lexeme = ph.lexemes[1] and (
            select count(*) from generate_subscripts(ph.lexemes, 1) i join hits x
              on x.lexeme = ph.lexemes[i] and x.pos = h.pos + ph.offsets[i] - ph.offsets[1] where i > 1
          ) = cardinality(ph.lexemes) - 1) c
        where c.a + c.b + c.c + c.d > 0),
      bm25_parts as (
        select p.doc, qt.idf, p.a, p.b, p.c, p.d, p.len from bm25_terms qt
          ${
            only
              ? sql`cross join (select ${k} as doc from ${t} where page_id = any(${only.pageIds.filter((id) => Number.isSafeInteger(id))}::bigint[])) r
          cross join lateral (select doc, a, b, c, d, len from ${postings} where term = qt.term and doc = r.doc offset 0) p`
              : sql`cross join lateral (select doc, a, b, c, d, len from ${postings} where term = qt.term offset 0) p`
          }
        union all
        select p.doc, greatest(ln((st.n - df.rows + 0.5) / (df.rows + 0.5)), 1e-6), p.a, p.b, p.c, p.d, p.len
        from bm25_phrase_rows p cross join bm25_stats st
          join (select n, count(*)::float8 as rows from bm25_phrase_rows group by n) df on df.n = p.n),
      bm25_scored as (
        select p.doc, sum(round(1e12 * p.idf * ${tf} * (${k1} + 1) / (${tf} + ${k1} * (${num(1 - BM25_B)} + ${num(BM25_B)} * p.len / st.avgdl)))::int8)::float8 / 1e12 as score
        from bm25_parts p cross join bm25_stats st
        group by p.doc)`;
}
