/**
 * Full text at the scale of a real documentation set: Debian's rust-doc (about 32,000 HTML pages;
 * `apt-get install rust-doc`) loaded into the page store, indexed by the Indexer into FTS5 (extraction, passages,
 * index), then searched with queries made from 300 sampled pages' titles, timed at one connection. Full text only:
 * embedding its passages with the real model at about 30 passages/s on these 2 cores would take many hours.
 *
 *   npx tsx bench/rust-doc.ts [--pages N] [--dir /usr/share/doc/rust-doc/html] [--out FILE]
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchIndex } from './index-pgdocs.js';
import { gitCommit, loadAverage, machineInfo, memorySample } from './perf/machine.js';
import { summarise } from './perf/stats.js';
import { seededRandom } from '../testkit/synthetic-vectors.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    dir: { type: 'string', default: process.env['NOTARY_RUST_DOC_DIR'] ?? '/usr/share/doc/rust-doc/html' },
    pages: { type: 'string', default: '1000000' },
    out: { type: 'string' },
  },
});
const limit = Number(args.pages);
if (!Number.isInteger(limit) || limit < 1) throw new Error(`--pages must be a positive integer, got ${args.pages}`);
const dir = args.dir;

/** Queries from page titles ("Vec in std::vec - Rust" → "Vec std vec"), with the file each was taken from. */
function titleQueries(n: number): Array<{ query: string; file: string }> {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.html')).sort().slice(0, limit);
  const random = seededRandom(32);
  const out: Array<{ query: string; file: string }> = [];
  for (let tries = 0; out.length < n && tries < n * 10; tries++) {
    const file = files[Math.floor(random() * files.length)]!;
    const title = /<title>([^<]*)<\/title>/i.exec(readFileSync(path.join(dir, file), 'utf8'))?.[1] ?? '';
    const words = title
      .replace(/&[a-z]+;/g, ' ')
      .split(/[^A-Za-z0-9_]+/)
      .filter((w) => w && !['Rust', 'in', 'the', 'a'].includes(w));
    if (words.length > 0) out.push({ query: [...new Set(words)].slice(0, 5).join(' '), file });
  }
  return out;
}

const started = new Date();
const log = (m: string) => process.stderr.write(`[rust-doc ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
log(`indexing up to ${limit} pages of ${dir}; load ${loadAverage().join(' ')}`);
const queries = titleQueries(300);
const result = await benchIndex({
  htmlDir: dir,
  recursiveLimit: limit,
  afterIndex: async (index) => {
    log('indexed; timing searches');
    for (const { query } of queries.slice(0, 20)) await index.search(query, { limit: 30, perPageLimit: 2 }); // warm-up
    const latencies: number[] = [];
    let found = 0;
    for (const { query, file } of queries) {
      const t = performance.now();
      const hits = await index.search(query, { limit: 30, perPageLimit: 2 });
      latencies.push(performance.now() - t);
      if (hits.slice(0, 10).some((h) => h.url.endsWith(`/docs/${file}`))) found++;
    }
    return {
      queries: queries.length,
      query_source: 'words of a sampled page title (sanity check of the index, not a relevance measure)',
      search_ms: summarise(latencies),
      title_page_in_top_10: Math.round((found / queries.length) * 1000) / 1000,
      load_average: loadAverage(),
      memory: memorySample(),
    };
  },
});
const out = args.out ?? path.join(root, 'bench', 'results', `rust-doc-${started.toISOString().slice(0, 10)}.json`);
const report = { benchmark: 'rust-doc full text', date: started.toISOString().slice(0, 10), commit: gitCommit(root), machine: machineInfo(), ...result };
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(JSON.stringify(report, null, 2));
