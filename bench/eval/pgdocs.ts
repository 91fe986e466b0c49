/**
 * PostgreSQL documentation known-item set: Debian's postgresql-doc-15 HTML served on 127.0.0.1, crawled by the real
 * crawler into a temp data dir, indexed by the Indexer; queries come from the back-of-book index.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { NotaryConfig } from '../../core/config.js';
import { NotaryError } from '../../core/errors.js';
import { runCrawl } from '../../crawler/crawl.js';
import { serveDirectory } from '../../testkit/serve-static.js';
import type { SearchIndex } from '../../indexer/search-index.js';
import type { Runtime } from '../../runtime/index.js';
import type { Storage } from '../../storage/db.js';
import { knownItemQueries, pgDocsDir, sample } from '../../testkit/pgdocs.js';
import type { DenseRetrieval } from '../../search/request-state.js';
import { embedStoredPassages, type EvalDenseOptions } from './dense.js';
import { openEvalRuntime, type EvalRuntime } from './eval-runtime.js';
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
  /** The composition root over the set's data folder: its index, pages and search pipelines. */
  runtime: Runtime;
  index: SearchIndex;
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
  const server = await serveDirectory(dir);
  let opened: EvalRuntime | undefined;
  try {
    opened = await openEvalRuntime(name, {
      indexer: options.indexer,
      crawler: {
        seeds: [`${server.url}/index.html`],
        per_host_delay_ms: 0,
        per_host_concurrency: concurrency,
        max_concurrency: concurrency,
        max_pages: 5_000,
      },
    });
    const { runtime } = opened;
    const summary = await runCrawl({ config: runtime.config.crawler, pages: runtime.pages, runs: runtime.runs, frontier: runtime.frontier });
    await server.close();
    const crawlMs = summary.elapsedMs;
    options.log?.(`${name}: crawled ${summary.fetched} pages in ${(summary.elapsedMs / 1000).toFixed(1)} s (${summary.failed} failed)`);
    const run = await runtime.indexer().runOnce({ batchSize: 200 });
    const counts = await runtime.pages.counts();
    options.log?.(`${name}: indexed ${run.indexedPages} pages, ${run.passages} passages in ${(run.ms / 1000).toFixed(1)} s`);
    const built: PgDocsIndex = {
      runtime,
      index: runtime.index,
      storage: runtime.storage,
      pagesStored: counts.pages,
      passages: run.passages,
      crawlMs,
      indexMs: run.ms,
      close: opened.close,
    };
    if (options.dense) {
      const { dense, embedMs } = await embedStoredPassages(runtime, options.dense, options.log ?? (() => {}), name);
      built.dense = dense;
      built.embedMs = embedMs;
    }
    return built;
  } catch (err) {
    await server.close().catch(() => {});
    await opened?.close();
    throw err;
  }
}
