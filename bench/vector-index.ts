/**
 * Times SqlVectorIndex on SQLite with random unit vectors: upsert, first search (loads the cache), and warm searches
 * (the one-query freshness check plus the exact scan). Run: npx tsx indexer/bench-vectors.ts [sizes...] [--dims N]
 * Prints JSON.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { migrateToLatest, openSqlite } from '../storage/db.js';
import { SqlVectorIndex } from '../indexer/sql-vector-index.js';
import { seededRandom } from '../testkit/seeded-random.js';


function randomUnitVector(random: () => number, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    v[i] = random() * 2 - 1;
    norm += v[i]! * v[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) v[i] = v[i]! / norm;
  return v;
}

interface SizeResult {
  vectors: number;
  dimensions: number;
  upsertMs: number;
  firstSearchMs: number;
  warmSearchMs: { median: number; p90: number; min: number };
  warmSearchPerPageMs: { median: number };
  freshnessCheckMs: { median: number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;
const round = (x: number) => Math.round(x * 100) / 100;

async function benchSize(n: number, dimensions: number, dir: string): Promise<SizeResult> {
  const storage = openSqlite(path.join(dir, `bench-${n}.sqlite`));
  await migrateToLatest(storage);
  const raw = storage.sqlite!;
  const perPage = 10;
  raw.transaction(() => {
    const page = raw.prepare(
      `insert into pages (id, url, final_url, host, http_status, crawl_depth, state, fetched_at, checked_at)
       values (?, ?, ?, 'bench.test', 200, 0, 'indexed', '2026-01-01', '2026-01-01')`,
    );
    const passage = raw.prepare(
      `insert into passages (id, page_id, ordinal, url, title, heading_path, text, word_count) values (?, ?, ?, '', '', '', '', 0)`,
    );
    for (let p = 0; p * perPage < n; p++) page.run(p + 1, `http://bench.test/${p}`, `http://bench.test/${p}`);
    for (let i = 0; i < n; i++) passage.run(i + 1, Math.floor(i / perPage) + 1, i % perPage);
  })();

  const random = seededRandom(n);
  const writer = new SqlVectorIndex(storage, { model: 'bench', dimensions });
  const upsertStart = performance.now();
  for (let start = 0; start < n; start += 5000) {
    const batch = [];
    for (let i = start; i < Math.min(n, start + 5000); i++) {
      batch.push({ id: i + 1, pageId: Math.floor(i / perPage) + 1, vector: randomUnitVector(random, dimensions) });
    }
    await writer.upsert(batch);
  }
  const upsertMs = performance.now() - upsertStart;
  await writer.close();

  const index = new SqlVectorIndex(storage, { model: 'bench', dimensions });
  const query = () => randomUnitVector(random, dimensions);
  let t = performance.now();
  await index.search(query(), { limit: 10 });
  const firstSearchMs = performance.now() - t;

  const warm: number[] = [];
  const warmPerPage: number[] = [];
  for (let i = 0; i < 30; i++) {
    const q = query();
    t = performance.now();
    await index.search(q, { limit: 10 });
    warm.push(performance.now() - t);
    t = performance.now();
    await index.search(q, { limit: 10, perPageLimit: 2 });
    warmPerPage.push(performance.now() - t);
  }
  const checks: number[] = [];
  for (let i = 0; i < 30; i++) {
    t = performance.now();
    await storage.db
      .selectFrom('passage_vectors')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.max('seq').as('m')])
      .where('model', '=', 'bench')
      .where('dimensions', '=', dimensions)
      .executeTakeFirstOrThrow();
    checks.push(performance.now() - t);
  }
  await index.close();
  await storage.close();
  return {
    vectors: n,
    dimensions,
    upsertMs: round(upsertMs),
    firstSearchMs: round(firstSearchMs),
    warmSearchMs: { median: round(median(warm)), p90: round(p90(warm)), min: round(Math.min(...warm)) },
    warmSearchPerPageMs: { median: round(median(warmPerPage)) },
    freshnessCheckMs: { median: round(median(checks)) },
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dimsAt = args.indexOf('--dims');
  const dimensions = dimsAt >= 0 ? Number(args[dimsAt + 1]) : 384;
  const sizes = args.filter((a, i) => i !== dimsAt && i !== dimsAt + 1).map(Number);
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-bench-vectors-'));
  try {
    const results: SizeResult[] = [];
    for (const n of sizes.length > 0 ? sizes : [10_000, 100_000]) results.push(await benchSize(n, dimensions, dir));
    console.log(JSON.stringify({ backend: 'sql-exact/sqlite', node: process.version, results }, null, 2));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
