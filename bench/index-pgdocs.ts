import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { configSchema } from '../core/config.js';
import { migrateToLatest, openSqlite } from '../storage/db.js';
import { htmlPageFetched, PageStore } from '../storage/pages.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import { Indexer } from '../indexer/indexer.js';

export const DEFAULT_PG_DOC_DIR = '/usr/share/doc/postgresql-doc-15/html';

export interface IndexBenchResult {
  htmlDir: string;
  pages: number;
  passages: number;
  failed: number;
  /** Time to load the HTML files into the page store (not part of the indexing rate). */
  loadMs: number;
  indexMs: number;
  pagesPerSecond: number;
  passagesPerSecond: number;
  indexBytes: number | null;
  /** What `afterIndex` returned. */
  after?: unknown;
}

/**
 * Loads every .html file of a directory (default: Debian's PostgreSQL 15 docs, or NOTARY_PG_DOC_DIR) into a fresh
 * SQLite file via PageStore.saveFetched, then times one Indexer.runOnce over all of them with the FTS5 backend.
 */
export async function benchIndex(
  options: {
    htmlDir?: string;
    batchSize?: number;
    minWords?: number;
    maxWords?: number;
    /** Also the .html files of subdirectories, up to this many (sorted by path). */
    recursiveLimit?: number;
    /** Runs on the built index before it is deleted (e.g. timed searches); `file` is its SQLite file. */
    afterIndex?: (index: Fts5SearchIndex, file: string) => Promise<unknown>;
  } = {},
): Promise<IndexBenchResult> {
  const htmlDir = options.htmlDir ?? process.env['NOTARY_PG_DOC_DIR'] ?? DEFAULT_PG_DOC_DIR;
  const files =
    options.recursiveLimit === undefined
      ? readdirSync(htmlDir).filter((f) => f.endsWith('.html')).sort()
      : readdirSync(htmlDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.html')).sort().slice(0, options.recursiveLimit);
  if (files.length === 0) throw new Error(`no .html files in ${htmlDir} (apt-get install postgresql-doc-15)`);
  const workDir = mkdtempSync(path.join(tmpdir(), 'notary-bench-index-'));
  const file = path.join(workDir, 'storage.sqlite');
  const storage = openSqlite(file);
  try {
    await migrateToLatest(storage);
    const pages = new PageStore(storage.db);
    const loadStarted = performance.now();
    for (const file of files) {
      const html = readFileSync(path.join(htmlDir, file), 'utf8');
      const url = `http://127.0.0.1/docs/${file}`;
      await pages.saveFetched(htmlPageFetched(url, html));
    }
    const loadMs = performance.now() - loadStarted;
    const defaults = configSchema.parse({}).indexer;
    const index = new Fts5SearchIndex(storage.sqlite!);
    const indexer = new Indexer({
      pages,
      index,
      config: {
        ...defaults,
        passage_min_words: options.minWords ?? defaults.passage_min_words,
        passage_max_words: options.maxWords ?? defaults.passage_max_words,
      },
    });
    const run = await indexer.runOnce({ batchSize: options.batchSize ?? 100 });
    const stats = await index.stats();
    const seconds = Math.max(run.ms, 1) / 1000;
    return {
      htmlDir,
      pages: run.indexedPages,
      passages: run.passages,
      failed: run.failed,
      loadMs: Math.round(loadMs),
      indexMs: run.ms,
      pagesPerSecond: Math.round(run.indexedPages / seconds),
      passagesPerSecond: Math.round(run.passages / seconds),
      indexBytes: stats.bytes,
      ...(options.afterIndex ? { after: await options.afterIndex(index, file) } : {}),
    };
  } finally {
    await storage.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  benchIndex({ htmlDir: process.argv[2] })
    .then((result) => console.log(JSON.stringify(result, null, 2)))
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
