/**
 * Snippet CPU over a data folder's passages (issue 28): microseconds a snippet (`search/snippet.ts`'s makeSnippet) for
 * every passage of the FTS5 index and a few queries, passages with a non-ASCII character apart; with `--against REPO`
 * (another checkout, e.g. an unpacked `git archive` of the commit before a change, node_modules linked) the two
 * implementations are timed in turn and every snippet of one is compared with the other's.
 *
 *   npx tsx bench/snippet.ts --data DIR [--against REPO] [--rounds 3]
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { makeSnippet } from '../search/snippet.js';

type Snippet = (text: string, query: string, maxChars: number) => string;
const QUERIES = ['create index concurrently', 'vacuum full lock', 'logical replication slot', 'pg_dump custom format', 'window function rank'];

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function microseconds(snippet: Snippet, texts: readonly string[]): number {
  const started = performance.now();
  for (const query of QUERIES) for (const text of texts) snippet(text, query, 300);
  return ((performance.now() - started) * 1000) / (QUERIES.length * texts.length);
}

const data = flag('--data');
if (!data) throw new Error('usage: npx tsx bench/snippet.ts --data DIR [--against REPO] [--rounds 3]');
const db = new BetterSqlite3(path.join(data, 'notary.sqlite'), { readonly: true });
const texts = (db.prepare('SELECT body FROM notary_fts').pluck().all() as string[]).filter((t) => typeof t === 'string');
db.close();
const nonAscii = texts.filter((t) => /[^\x20-\x7e\s]/.test(t));
const ascii = texts.filter((t) => !/[^\x20-\x7e\s]/.test(t));
const against = flag('--against');
const other: Snippet | null = against ? ((await import(pathToFileURL(path.resolve(against, 'search/snippet.ts')).href)) as { makeSnippet: Snippet }).makeSnippet : null;
const rounds = Number(flag('--rounds') ?? 3);
const result: Record<string, unknown> = { date: new Date().toISOString(), passages: texts.length, non_ascii_passages: nonAscii.length, queries: QUERIES, rounds: [] };
for (let round = 0; round < rounds; round++) {
  const row: Record<string, number> = { this_ascii_us: microseconds(makeSnippet, ascii), this_non_ascii_us: microseconds(makeSnippet, nonAscii) };
  if (other) Object.assign(row, { against_ascii_us: microseconds(other, ascii), against_non_ascii_us: microseconds(other, nonAscii) });
  (result['rounds'] as unknown[]).push(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Math.round(v * 10) / 10])));
}
if (other) {
  let compared = 0;
  let different = 0;
  for (const query of [...QUERIES, 'Über straße', 'pg_stat_activity wait_event']) {
    for (const text of texts) {
      for (const maxChars of [120, 300]) {
        compared++;
        if (makeSnippet(text, query, maxChars) !== other(text, query, maxChars)) different++;
      }
    }
  }
  Object.assign(result, { compared, different });
}
console.log(JSON.stringify(result, null, 2));
