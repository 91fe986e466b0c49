/**
 * Two relevance reports of `npm run eval:search` (the same sets and queries, e.g. before and after a change), row by
 * row, query by query: the difference of each metric with its 95% interval, wins and losses, and the paired p.
 *
 *   npx tsx bench/eval-compare.ts BEFORE.json AFTER.json [--out FILE]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { compareReports, type ReportForComparison } from './eval/compare.js';

const { values, positionals } = parseArgs({ options: { out: { type: 'string' } }, allowPositionals: true });
if (positionals.length !== 2) {
  process.stderr.write('usage: npx tsx bench/eval-compare.ts BEFORE.json AFTER.json [--out FILE]\n');
  process.exit(2);
}
const [beforeFile, afterFile] = positionals as [string, string];
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as ReportForComparison;
const comparisons = compareReports(read(beforeFile), read(afterFile), ['ndcg_10', 'mrr_10', 'recall_100', 'success_1', 'success_10']);
const sign = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(4)}`;
for (const c of comparisons) {
  process.stdout.write(
    `${c.set.padEnd(10)} ${c.row.padEnd(8)} ${c.metric.padEnd(10)} ${c.baseline_mean.toFixed(4)} -> ${c.candidate_mean.toFixed(4)} ` +
      `${sign(c.difference)} (95% CI ${sign(c.ci_95[0])} .. ${sign(c.ci_95[1])}), ${c.wins} better / ${c.losses} worse / ${c.ties} same, p = ${c.p_value.toFixed(3)}\n`,
  );
}
if (values.out) writeFileSync(values.out, `${JSON.stringify({ before: beforeFile, after: afterFile, comparisons }, null, 2)}\n`);
