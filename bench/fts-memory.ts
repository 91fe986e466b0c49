/**
 * Full text ranked from the in-memory copy of the FTS5 index against FTS5's own bm25() in SQL, on the PostgreSQL 15
 * docs (Debian's postgresql-doc-15, or NOTARY_PG_DOC_DIR) with their book-index queries: whether the rankings are the
 * same, how far the scores are apart, the time of each of a depth-1 search's three full-text queries both ways, the
 * matches per query, and the copy's build time and size. Also times the snippets of the ten best passages.
 *
 *   npm run bench:fts-memory -- [--queries N] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import { toFts5Query } from '../indexer/backends/fts5/query.js';
import type { IndexFilter } from '../indexer/search-index.js';
import { makeSnippet } from '../search/snippet.js';
import { pgDocsQueries } from './eval/pgdocs.js';
import { benchIndex, DEFAULT_PG_DOC_DIR } from './index-pgdocs.js';
import { positiveInt } from './perf/args.js';
import { gitCommit, loadAverage, machineInfo } from './perf/machine.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({ options: { queries: { type: 'string', default: '600' }, out: { type: 'string' } } });
const queryCount = positiveInt('--queries', args.queries, 10);
const htmlDir = process.env['NOTARY_PG_DOC_DIR'] ?? DEFAULT_PG_DOC_DIR;
const log = (message: string) => process.stderr.write(`[bench:fts-memory ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const filter: IndexFilter = { excludeNavigation: true };
type Ranked = Array<{ id?: number; pageId: number; score: number }>;
type Kind = 'passages' | 'pages' | 'passages_of_pages';

const loadAtStart = loadAverage();
const indexed = await benchIndex({
  afterIndex: async (sql, file) => {
    const queries = pgDocsQueries(htmlDir, queryCount).map((q) => q.text);
    const memory = new Fts5SearchIndex(new BetterSqlite3(file), { ownsHandle: true, memoryRankingUpTo: Number.MAX_SAFE_INTEGER });
    const raw = new BetterSqlite3(file, { readonly: true });
    try {
      let started = performance.now();
      await memory.warm();
      const buildMs = performance.now() - started;
      const counts = memory.memoryRankingCounts();
      if (!counts || counts.passages.builds !== 1 || counts.pages.builds !== 1) throw new Error(`the in-memory copy was not built: ${JSON.stringify(counts)}`);
      const ms: Record<'sql' | 'memory', Record<Kind, number>> = {
        sql: { passages: 0, pages: 0, passages_of_pages: 0 },
        memory: { passages: 0, pages: 0, passages_of_pages: 0 },
      };
      let differentRankings = 0;
      let maxRelativeScoreDiff = 0;
      let matches = 0;
      let snippetMs = 0;
      const countMatches = raw.prepare<[string], number>(`SELECT count(*) FROM notary_fts WHERE notary_fts MATCH ?`).pluck();
      const compare = (a: Ranked, b: Ranked) => {
        if (a.map((h) => h.id ?? h.pageId).join() !== b.map((h) => h.id ?? h.pageId).join()) differentRankings++;
        a.forEach((hit, i) => {
          const other = b[i];
          if (other && hit.score !== 0) maxRelativeScoreDiff = Math.max(maxRelativeScoreDiff, Math.abs(hit.score - other.score) / Math.abs(hit.score));
        });
      };
      const timed = async <T>(side: 'sql' | 'memory', kind: Kind, run: () => Promise<T>): Promise<T> => {
        const s = performance.now();
        const result = await run();
        ms[side][kind] += performance.now() - s;
        return result;
      };
      for (const query of queries) {
        const match = toFts5Query(query);
        if (match) matches += countMatches.get(`(${match}) NOT facets : "navpage"`) ?? 0;
        const both = async (kind: Kind, run: (index: Fts5SearchIndex) => Promise<Ranked>) => {
          const fromSql = await timed('sql', kind, () => run(sql));
          compare(await timed('memory', kind, () => run(memory)), fromSql);
          return fromSql;
        };
        const passages = await both('passages', (index) => index.search(query, { limit: 30, perPageLimit: 3, filter }));
        const pages = await both('pages', (index) => index.searchPages(query, { limit: 20, filter }));
        const inPassages = new Set(passages.map((h) => h.pageId));
        const missing = pages.map((p) => p.pageId).filter((id) => !inPassages.has(id));
        if (missing.length > 0) await both('passages_of_pages', (index) => index.search(query, { limit: missing.length, perPageLimit: 1, filter: { ...filter, pageIds: missing } }));
        const best = await memory.search(query, { limit: 10, perPageLimit: 3, filter });
        started = performance.now();
        for (const hit of best) makeSnippet(hit.text, query, 300);
        snippetMs += performance.now() - started;
      }
      const perQuery = (side: 'sql' | 'memory') => Object.fromEntries(Object.entries(ms[side]).map(([k, v]) => [k, Math.round((v / queries.length) * 1000) / 1000]));
      const after = memory.memoryRankingCounts();
      return {
        queries: queries.length,
        different_rankings: differentRankings,
        max_relative_score_diff: maxRelativeScoreDiff,
        mean_matches_per_query: Math.round(matches / queries.length),
        mean_ms_per_query_sql: perQuery('sql'),
        mean_ms_per_query_memory: perQuery('memory'),
        answered_from_memory: { passages: after?.passages.answered, pages: after?.pages.answered },
        build_ms: Math.round(buildMs),
        copy_bytes: counts.bytes,
        snippets_of_10_best_ms: Math.round((snippetMs / queries.length) * 1000) / 1000,
      };
    } finally {
      raw.close();
      await memory.close();
    }
  },
});

const result = {
  benchmark: 'fts-memory',
  date: new Date().toISOString(),
  commit: gitCommit(root),
  machine: machineInfo(),
  load: { start: loadAtStart, end: loadAverage() },
  argv: process.argv.slice(2),
  corpus: { html: htmlDir, pages: indexed.pages, passages: indexed.passages },
  ...(indexed.after as object),
  notes: [
    'sql: Fts5SearchIndex without a copy (bm25() in SQL on the calling connection); memory: the same index ranked from its in-memory copy',
    'each query: passages (30, at most 3 a page, navigation left out), whole pages (20), then the passages of the pages without one (1 a page), as a depth-1 search asks',
    'times include reading the hits stored fields (url, title, text) in both cases',
  ],
};
const out = args.out ?? path.join(root, 'bench', 'results', `fts-memory-${result.date.slice(0, 10)}.json`);
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
log(JSON.stringify(indexed.after));
log(`written: ${out}`);
