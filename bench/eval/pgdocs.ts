/**
 * PostgreSQL documentation known-item set: Debian's postgresql-doc-15 HTML served on 127.0.0.1, crawled by the real
 * crawler into a temp data dir, indexed by the Indexer; queries come from the back-of-book index.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configSchema, type NotaryConfig } from '../../core/config.js';
import { NotaryError } from '../../core/errors.js';
import { runCrawl } from '../../crawler/crawl.js';
import { serveDirectory } from '../../test/support/serve-static.js';
import { Fts5SearchIndex } from '../../indexer/fts5.js';
import { Indexer } from '../../indexer/indexer.js';
import { CrawlRunStore } from '../../storage/crawl-runs.js';
import { FrontierStore } from '../../storage/frontier.js';
import { migrateToLatest, openSqlite, sqliteFile, type Storage } from '../../storage/db.js';
import { PageStore } from '../../storage/pages.js';
import { knownItemQueries, pgDocsDir, sample } from '../../test/support/pgdocs.js';
import type { DenseRetrieval } from '../../search/pipeline.js';
import { embedStoredPassages, type EvalDenseOptions } from './dense.js';
import type { EvalQuery } from './run.js';

export const DEFAULT_PGDOCS_QUERIES = 400;

export { pgDocsKey } from './doc-sites.js';

/** A fixed-seed sample of `n` known-item queries; each target page has gain 1. */
export function pgDocsQueries(dir: string, n: number): EvalQuery[] {
  if (!existsSync(path.join(dir, 'bookindex.html'))) {
    throw new NotaryError('invalid_config', `PostgreSQL docs not found at ${dir} (apt-get install postgresql-doc-15, or set NOTARY_PGDOCS_DIR)`);
  }
  return sample(knownItemQueries(dir), n).map((q, i) => ({
    id: String(i + 1),
    text: q.query,
    judgments: new Map(q.targets.map((t) => [t, 1])),
  }));
}

export interface PgDocsIndex {
  index: Fts5SearchIndex;
  /** The store the crawl and the indexer wrote (pages and passages). */
  storage: Storage;
  pagesStored: number;
  passages: number;
  crawlMs: number;
  indexMs: number;
  /** Present when dense retrieval was asked for: the passages' vectors. */
  dense?: DenseRetrieval;
  embedMs?: number;
  /** Closes storage and deletes the temp data dir. */
  close(): Promise<void>;
}

export interface PgDocsIndexOptions {
  dir?: string;
  /** Name in log lines; default "pgdocs". */
  name?: string;
  indexer: NotaryConfig['indexer'];
  concurrency?: number;
  log?: (msg: string) => void;
  /** Embed every passage too (dense retrieval). */
  dense?: EvalDenseOptions;
}

/** Serves the docs, crawls them with politeness off into a temp data dir, stops the server, indexes every page. */
export async function buildPgDocsIndex(options: PgDocsIndexOptions): Promise<PgDocsIndex> {
  const dir = options.dir ?? pgDocsDir;
  if (!existsSync(path.join(dir, 'index.html'))) {
    throw new NotaryError('invalid_config', `PostgreSQL docs not found at ${dir} (apt-get install postgresql-doc-15, or set NOTARY_PGDOCS_DIR)`);
  }
  return buildDocSiteIndex({ ...options, dir });
}

/** A documentation folder served on 127.0.0.1 from its index.html, crawled by the real crawler and indexed. */
export async function buildDocSiteIndex(options: PgDocsIndexOptions & { dir: string }): Promise<PgDocsIndex> {
  const { dir } = options;
  const name = options.name ?? 'pgdocs';
  const concurrency = options.concurrency ?? 16;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-eval-pgdocs-'));
  const storage = openSqlite(sqliteFile(dataDir));
  const cleanUp = async (): Promise<void> => {
    await storage.close();
    if (storage.sqlite?.open) storage.sqlite.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await migrateToLatest(storage);
    const pages = new PageStore(storage.db);
    const server = await serveDirectory(dir);
    let crawlMs: number;
    try {
      const crawler = configSchema.parse({
        crawler: {
          seeds: [`${server.url}/index.html`],
          per_host_delay_ms: 0,
          per_host_concurrency: concurrency,
          max_concurrency: concurrency,
          max_pages: 5_000,
        },
      }).crawler;
      const summary = await runCrawl({ config: crawler, pages, runs: new CrawlRunStore(storage.db), frontier: new FrontierStore(storage.db, storage.dialect) });
      crawlMs = summary.elapsedMs;
      options.log?.(`${name}: crawled ${summary.fetched} pages in ${(summary.elapsedMs / 1000).toFixed(1)} s (${summary.failed} failed)`);
    } finally {
      await server.close();
    }
    if (!storage.sqlite) throw new NotaryError('internal_error', 'SQLite storage has no raw handle');
    const index = new Fts5SearchIndex(storage.sqlite);
    const run = await new Indexer({ pages, index, config: options.indexer, logger: { warn: () => {} } }).runOnce({ batchSize: 200 });
    const counts = await pages.counts();
    options.log?.(`${name}: indexed ${run.indexedPages} pages, ${run.passages} passages in ${(run.ms / 1000).toFixed(1)} s`);
    const built: PgDocsIndex = {
      index,
      storage,
      pagesStored: counts.pages,
      passages: run.passages,
      crawlMs,
      indexMs: run.ms,
      close: cleanUp,
    };
    if (options.dense) {
      const { dense, embedMs } = await embedStoredPassages(storage, index, options.indexer, options.dense, options.log ?? (() => {}), name);
      built.dense = dense;
      built.embedMs = embedMs;
    }
    return built;
  } catch (err) {
    await cleanUp();
    throw err;
  }
}
