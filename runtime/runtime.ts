import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { NotaryConfig } from '../core/config.js';
import { createExtractDeps, type ExtractDeps } from '../extract/index.js';
import { Indexer } from '../indexer/indexer.js';
import { Fts5SearchIndex } from '../indexer/fts5.js';
import type { SearchIndex } from '../indexer/search-index.js';
import { Accounts } from '../payments/accounts.js';
import type { PaymentMode } from '../payments/mode.js';
import type { PaidCallGate, ResponseExtension } from '../payments/paid-call.js';
import { Pricing } from '../payments/pricing.js';
import { openReceipts, receiptSettings, signedReceiptExtension, type Receipts } from '../payments/receipts/index.js';
import { MemoryRateLimitStore, type RateLimitStore } from '../payments/rate-limit.js';
import type { IdempotencyStore } from '../payments/stores/idempotency.js';
import { SqlIdempotencyStore } from '../payments/stores/sql-idempotency.js';
import { loadReranker } from '../reranker/resolve.js';
import type { Reranker } from '../reranker/reranker.js';
import { SearchPipeline, type DenseRetrieval } from '../search/pipeline.js';
import { logRewriterFailures, queryRewriterFromConfig, type QueryRewriter } from '../search/query-rewriter.js';
import { CrawlRunStore } from '../storage/crawl-runs.js';
import { openStorage, type Storage } from '../storage/db.js';
import { PageStore } from '../storage/pages.js';
import { openDense, type OpenedDense } from './dense.js';
import { stderrLog, type Log } from './log.js';
import { buildPaidCallGate, buildPaymentModes, type PaymentModeDeps } from './payments.js';

export interface RuntimeOptions {
  log?: Log;
  /** Environment for model resolution (NOTARY_RERANKER_MODEL, ...); default process.env. */
  env?: Record<string, string | undefined>;
  /** Payment modes beside the configured ones (a test registers its own mode here). */
  extraModes?: (deps: PaymentModeDeps) => PaymentMode[];
  /** Members layered on every paid response (signed receipts). */
  extensions?: readonly ResponseExtension[];
  /** The rate-limit store; default one in process memory. */
  rateLimits?: RateLimitStore;
}

/** The search index chosen by `indexer.backend`. */
function openIndex(config: NotaryConfig, storage: Storage): SearchIndex {
  switch (config.indexer.backend) {
    case 'sqlite-fts5':
      // The FTS5 index lives in the SQLite file of the embedded deployment; with PostgreSQL state it gets a file of its own.
      return storage.sqlite
        ? new Fts5SearchIndex(storage.sqlite)
        : new Fts5SearchIndex(new BetterSqlite3(path.join(config.data_dir, 'index.sqlite')), { ownsHandle: true });
  }
}

/** Built on first call, then the same value; `built` tells without building. */
interface Lazy<T> {
  (): T;
  built(): T | undefined;
}

function lazy<T>(make: () => T): Lazy<T> {
  let made: { value: T } | undefined;
  const get = (() => (made ??= { value: make() }).value) as Lazy<T>;
  get.built = () => made?.value;
  return get;
}

/**
 * The one composition root: everything a process needs, built from one validated config. Storage, the index, the
 * accounts, pricing and the stores open at once; models, search, extraction and the paid-call path are built on
 * first use, so a command that needs none of them (`notary keys`) never loads a model. serve, search, crawl,
 * status, keys, extract and the benchmarks all use it.
 */
export class Runtime {
  readonly pages: PageStore;
  readonly runs: CrawlRunStore;
  readonly accounts: Accounts;
  readonly pricing: Pricing;
  readonly rateLimits: RateLimitStore;
  readonly idempotency: IdempotencyStore;
  readonly queryRewriter: QueryRewriter | undefined;

  /** The reranker as resolved from config and environment (model, cache, download, lexical fallback). */
  readonly reranker: Lazy<Promise<Reranker>>;
  /** Dense retrieval with the live reranker (embeddings.model "reranker" uses it when it is a bi-encoder). */
  readonly dense: Lazy<Promise<OpenedDense>>;
  /** Dense retrieval without loading a reranker (crawl and index: only a configured bi-encoder is used). */
  readonly denseForIndexing: Lazy<Promise<OpenedDense>>;
  readonly search: Lazy<Promise<SearchPipeline>>;
  readonly extract: Lazy<ExtractDeps & { close(): Promise<void> }>;
  readonly paidCallGate: Lazy<PaidCallGate>;
  /** Signed receipts: the keyring (created in the data folder at first use) and the receipt log, self-checked. */
  readonly receipts: Lazy<Promise<Receipts>>;

  private constructor(
    readonly config: NotaryConfig,
    readonly storage: Storage,
    readonly index: SearchIndex,
    readonly log: Log,
    options: RuntimeOptions,
  ) {
    this.pages = new PageStore(storage.db);
    this.runs = new CrawlRunStore(storage.db);
    this.accounts = new Accounts(storage.db, { tiers: Object.keys(config.tiers), defaultTier: config.default_tier });
    this.pricing = new Pricing(config.pricing);
    this.rateLimits = options.rateLimits ?? new MemoryRateLimitStore();
    this.idempotency = new SqlIdempotencyStore(storage.db);
    const rewriter = queryRewriterFromConfig(config.search);
    this.queryRewriter = rewriter ? logRewriterFailures(rewriter, (message) => log('warn', message)) : undefined;

    const env = options.env ?? process.env;
    this.reranker = lazy(() => loadReranker(config.reranker, { log, env }));
    this.dense = lazy(async () => openDense(config, storage, { reranker: await this.reranker(), log }));
    this.denseForIndexing = lazy(() => openDense(config, storage, { log }));
    this.search = lazy(async () => {
      const reranker = await this.reranker();
      const { dense } = await this.dense();
      return this.searchPipeline({ reranker, dense });
    });
    // Excerpts chosen against a query load the reranker on first use only.
    this.extract = lazy(() => createExtractDeps(config, { scorePassages: async (query, passages) => (await this.reranker()).score(query, passages) }));
    this.receipts = lazy(() => openReceipts(storage.db, receiptSettings(config)));
    const extensions: ResponseExtension[] = [signedReceiptExtension(() => this.receipts()), ...(options.extensions ?? [])];
    this.paidCallGate = lazy(() =>
      buildPaidCallGate({
        config,
        modes: [...buildPaymentModes({ config, accounts: this.accounts }), ...(options.extraModes?.({ config, accounts: this.accounts }) ?? [])],
        rateLimits: this.rateLimits,
        idempotency: this.idempotency,
        extensions,
        log,
      }),
    );
  }

  static async open(config: NotaryConfig, options: RuntimeOptions = {}): Promise<Runtime> {
    const storage = await openStorage(config);
    const index = openIndex(config, storage);
    return new Runtime(config, storage, index, options.log ?? stderrLog, options);
  }

  /**
   * The one place a search pipeline is assembled: this runtime's index and query rewriter with the given scorer and
   * dense retrieval. `search` overrides settings (benchmarks and the relevance harness measure variants this way).
   */
  searchPipeline(parts: { reranker: Reranker; dense?: DenseRetrieval | undefined; search?: Partial<NotaryConfig['search']> }): SearchPipeline {
    return new SearchPipeline({
      index: this.index,
      reranker: parts.reranker,
      config: { ...this.config.search, ...parts.search },
      ...(parts.dense ? { dense: parts.dense } : {}),
      ...(this.queryRewriter ? { rewriter: this.queryRewriter } : {}),
    });
  }

  /** The indexer over this runtime's pages and index, embedding passages when `dense` is given. */
  indexer(dense?: DenseRetrieval): Indexer {
    return new Indexer({
      pages: this.pages,
      index: this.index,
      config: this.config.indexer,
      logger: { warn: (details, message) => this.log('warn', `${message} ${JSON.stringify(details)}`) },
      ...(dense ? { vectors: { index: dense.index, embedder: dense.embedder, batchSize: this.config.embeddings.batch_size } } : {}),
    });
  }

  /** Releases what was built, newest first; safe to call once everything else has stopped. */
  async close(): Promise<void> {
    const release = async <T>(pending: T | Promise<T> | undefined, close: (value: T) => Promise<void>) => {
      if (pending === undefined) return;
      let value: T;
      try {
        value = await pending;
      } catch {
        return; // it failed to load: nothing to release
      }
      await close(value);
    };
    await release(this.extract.built(), (deps) => deps.close());
    await release(this.denseForIndexing.built(), (d) => d.close());
    await release(this.dense.built(), (d) => d.close());
    await release(this.reranker.built(), (r) => r.close());
    await this.index.close();
    await this.storage.close();
  }
}
