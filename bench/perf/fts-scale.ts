import { statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import { Fts5SearchIndex } from '../../indexer/backends/fts5/search-index.js';
import type { IndexDoc } from '../../indexer/search-index.js';
import { loadAverage, memorySample } from './machine.js';
import { perSecond, summarise } from './stats.js';
import { seededRandom } from '../../testkit/synthetic-vectors.js';

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'pe', 'sa', 'do', 'fu', 'gri', 'ble', 'stor', 'ven', 'qua', 'ix', 'ol', 'un'];

/** A vocabulary of made-up words, most frequent first (rank r is drawn with probability ∝ 1/r: Zipf's law). */
export function vocabulary(size: number, seed = 1): string[] {
  const random = seededRandom(seed);
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(random() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

/** Draws Zipf-distributed ranks 0..n-1 by inverting the cumulative weights (binary search). */
export function zipfSampler(n: number, random: () => number): () => number {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) cumulative[r] = total += 1 / (r + 1);
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/**
 * `docs` synthetic passages (title of 6 words, body of 60, Zipf-distributed over a 50,000-word vocabulary) in the
 * product's FTS5 index, then 2-word queries timed at one connection: words of middle frequency (ranks 200..5,000)
 * and common words (ranks 0..50, which match a large share of all passages).
 */
export async function runFullTextScale(dir: string, docs: number, log: (message: string) => void) {
  const words = vocabulary(50_000);
  const random = seededRandom(99);
  const rank = zipfSampler(words.length, random);
  const text = (n: number) => Array.from({ length: n }, () => words[rank()]!).join(' ');
  const file = path.join(dir, 'fts.sqlite');
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  const index = new Fts5SearchIndex(db);
  const started = performance.now();
  const batchSize = 10_000;
  for (let start = 0; start < docs; start += batchSize) {
    const batch: IndexDoc[] = [];
    for (let i = start; i < Math.min(docs, start + batchSize); i++) {
      batch.push({ id: i + 1, pageId: Math.floor(i / 10) + 1, url: `http://bench.test/${Math.floor(i / 10)}`, title: text(6), headingPath: text(2), text: text(60) });
    }
    await index.upsert(batch);
    if ((start / batchSize) % 10 === 9) {
      const elapsed = (performance.now() - started) / 1000;
      const done = start + batch.length;
      log(`full text: ${done.toLocaleString('en')}/${docs.toLocaleString('en')} (${Math.round(done / elapsed)}/s, ${Math.round(((docs - done) * elapsed) / done)} s left)`);
    }
  }
  const indexMs = performance.now() - started;
  db.pragma('wal_checkpoint(TRUNCATE)');
  const bytes = statSync(file).size;
  const queryRandom = seededRandom(5);
  const pick = (from: number, to: number) => words[from + Math.floor(queryRandom() * (to - from))]!;
  const series = async (name: string, from: number, to: number, n: number) => {
    const latencies: number[] = [];
    let hits = 0;
    for (let q = 0; q < n; q++) {
      const query = `${pick(from, to)} ${pick(from, to)}`;
      const t = performance.now();
      hits += (await index.search(query, { limit: 30, perPageLimit: 2 })).length;
      latencies.push(performance.now() - t);
    }
    return { name, word_ranks: [from, to], queries: n, mean_hits: Math.round(hits / n), search_ms: summarise(latencies), load_average: loadAverage() };
  };
  await series('warm-up', 200, 5000, 20);
  const result = {
    documents: docs,
    vocabulary: words.length,
    words_per_document: 68,
    index_ms: Math.round(indexMs),
    per_second: perSecond(docs, indexMs),
    sqlite_mb: Math.round(bytes / 1024 / 1024),
    queries: [await series('middle-frequency words', 200, 5000, 300), await series('common words', 0, 50, 30)],
    memory: memorySample(),
  };
  await index.close();
  db.close();
  return result;
}
