import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { NotaryConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { createExtractDeps, type ExtractDeps } from '../extract/index.js';
import { Indexer } from '../indexer/indexer.js';
import { Fts5SearchIndex } from '../indexer/fts5.js';
import type { SearchIndex } from '../indexer/search-index.js';
import { Accounts } from '../payments/accounts.js';
import type { PaymentMode } from '../payments/mode.js';
import { Parties } from '../payments/modes/mpp/index.js';
import type { PaidCallGate, ResponseExtension } from '../payments/paid-call.js';
import { Pricing } from '../payments/pricing.js';
import { openReceipts, receiptSettings, signedReceiptExtension, type Receipts } from '../payments/receipts/index.js';
import { MemoryRateLimitStore, type RateLimitStore } from '../payments/rate-limit.js';
import type { IdempotencyStore } from '../payments/stores/idempotency.js';
import { SqlIdempotencyStore } from '../payments/stores/sql-idempotency.js';
import { loadReranker } from '../reranker/resolve.js';
import type { Reranker } from '../reranker/reranker.js';
import { SearchPipeline, type DenseRetrieval, type SearchPipelineOptions } from '../search/pipeline.js';
import { logRewriterFailures, queryRewriterFromConfig, type QueryRewriter } from '../search/query-rewriter.js';
import { CrawlRunStore } from '../storage/crawl-runs.js';
import { FrontierStore } from '../storage/frontier.js';
import { openStorage, type Storage } from '../storage/db.js';
import { X402PaymentsRepository } from '../storage/x402.js';
import type { ReconcileSummary } from '../payments/mode.js';
import { RpcSettlementChain } from '../payments/modes/x402/chain.js';
import { PageStore } from '../storage/pages.js';
import { storedSiteTitles } from '../indexer/site-titles.js';
import { openDense, type OpenedDense } from './dense.js';
import { stderrLog, type Log } from './log.js';
import { buildPaidCallGate, buildPaymentModes, type PaymentModeDeps } from './payments.js';

/** One charge as `notary payments list` shows it. */
export interface PaymentListRow {
  created_at: string;
  mode: string;
  /** The payer address (x402) or the tenant name (API keys). */
  payer: string;
  /** Atomic units of `asset` (x402), or credits (API keys). */
  amount: string;
  asset: string;
  network: string | null;
  transaction: string | null;
  credits: number;
  request_id: string | null;
}

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
  /** The crawl frontier (crawl_frontier): what a stopped crawl resumes from. */
  readonly frontier: FrontierStore;
  readonly accounts: Accounts;
  /** MPP parties: tenants' registered Ed25519 keys. */
  readonly parties: Parties;
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

  private get modeDeps(): PaymentModeDeps {
    return { config: this.config, accounts: this.accounts, storage: this.storage, log: this.log };
  }

  private constructor(
    readonly config: NotaryConfig,
    readonly storage: Storage,
    readonly index: SearchIndex,
    readonly log: Log,
    options: RuntimeOptions,
  ) {
    this.pages = new PageStore(storage.db);
    this.runs = new CrawlRunStore(storage.db);
    this.frontier = new FrontierStore(storage.db, storage.dialect);
    this.accounts = new Accounts(storage.db, { tiers: Object.keys(config.tiers), defaultTier: config.default_tier });
    this.parties = new Parties(storage.db);
    this.pricing = new Pricing(config.pricing);
    this.rateLimits = options.rateLimits ?? new MemoryRateLimitStore();
    this.idempotency = new SqlIdempotencyStore(storage.db);
    const rewriter = queryRewriterFromConfig(config.search);
    this.queryRewriter = rewriter ? logRewriterFailures(rewriter, (message) => log('warn', message)) : undefined;

    const env = options.env ?? process.env;
    this.reranker = lazy(() => loadReranker(config.reranker, { log, env, precision: config.embeddings.precision }));
    this.dense = lazy(async () => openDense(config, storage, { reranker: await this.reranker(), log }));
    this.denseForIndexing = lazy(() => openDense(config, storage, { log }));
    this.search = lazy(async () => {
      const reranker = await this.reranker();
      const { dense } = await this.dense();
      return this.searchPipeline({ reranker, dense });
    });
    // Excerpts chosen against a query load the reranker on first use only. An indexed site's pages are titled with
    // the prefixes and suffixes learnt from its stored pages, as in search results.
    this.extract = lazy(() =>
      createExtractDeps(config, {
        scorePassages: async (query, passages) => (await this.reranker()).score(query, passages),
        siteTitles: storedSiteTitles(this.pages),
      }),
    );
    this.receipts = lazy(() => openReceipts(storage.db, receiptSettings(config)));
    const extensions: ResponseExtension[] = [signedReceiptExtension(() => this.receipts()), ...(options.extensions ?? [])];
    this.paidCallGate = lazy(() =>
      buildPaidCallGate({
        config,
        modes: [...buildPaymentModes(this.modeDeps), ...(options.extraModes?.(this.modeDeps) ?? [])],
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
  searchPipeline(parts: {
    reranker: Reranker;
    dense?: DenseRetrieval | undefined;
    search?: Partial<NotaryConfig['search']>;
    /** Tuning knobs the relevance harness varies; the service runs with the defaults. */
    options?: SearchPipelineOptions;
  }): SearchPipeline {
    return new SearchPipeline({
      index: this.index,
      reranker: parts.reranker,
      config: { ...this.config.search, ...parts.search },
      ...(parts.options ? { options: parts.options } : {}),
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

  /**
   * Every charge, oldest first: pay-per-call settlements from the payment ledger (x402: payer address, atomic amount,
   * transaction) and API-key debits from the credit ledger (payer: the tenant, amount in credits).
   */
  async paymentsList(options: { mode?: string; limit?: number } = {}): Promise<PaymentListRow[]> {
    const rows: PaymentListRow[] = [];
    if (options.mode === undefined || options.mode !== 'api_key') {
      for (const r of await new X402PaymentsRepository(this.storage.db).ledger(options.mode ? { mode: options.mode } : {})) {
        rows.push({
          created_at: r.created_at,
          mode: r.mode,
          payer: r.payer,
          amount: r.amount,
          asset: r.asset,
          network: r.network,
          transaction: r.transaction_hash,
          credits: r.credits,
          request_id: r.request_id,
        });
      }
    }
    if (options.mode === undefined || options.mode === 'api_key') {
      const debits = await this.storage.db
        .selectFrom('credit_ledger')
        .innerJoin('tenants', 'tenants.id', 'credit_ledger.tenant_id')
        .select(['credit_ledger.created_at', 'tenants.name', 'credit_ledger.delta', 'credit_ledger.request_id'])
        .where('credit_ledger.delta', '<', 0)
        .execute();
      for (const d of debits) {
        rows.push({ created_at: d.created_at, mode: 'api_key', payer: d.name, amount: String(-d.delta), asset: 'credits', network: null, transaction: null, credits: -d.delta, request_id: d.request_id });
      }
    }
    rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
    return options.limit !== undefined ? rows.slice(-options.limit) : rows;
  }

  /** Decides undecided pay-per-call settlements (x402 settles that timed out) from their chain. */
  async reconcilePayments(): Promise<ReconcileSummary> {
    const total: ReconcileSummary = { checked: 0, settled: 0, released: 0, pending: 0 };
    for (const mode of this.paidCallGate().modes) {
      if (!mode.reconcile) continue;
      const one = await mode.reconcile();
      total.checked += one.checked;
      total.settled += one.settled;
      total.released += one.released;
      total.pending += one.pending;
    }
    return total;
  }

  /**
   * Start-up checks of the pay-per-call settings that need the network: the x402 token's decimals must be the price's
   * decimals (otherwise every amount would be off by powers of ten). Throws invalid_config; an unreachable RPC is a
   * warning (reconciliation retries it).
   */
  async checkPaymentSetup(): Promise<void> {
    const x402 = this.config.payments.modes.x402;
    if (!x402.enabled || !x402.rpc_url) return;
    let decimals: number;
    try {
      decimals = await new RpcSettlementChain(x402.rpc_url).decimals(x402.asset as `0x${string}`);
    } catch (err) {
      this.log('warn', `x402: could not read decimals() of ${x402.asset} over ${x402.rpc_url}: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (decimals !== this.config.pricing.credit_price.decimals) {
      throw new NotaryError(
        'invalid_config',
        `payments.modes.x402.asset ${x402.asset} has ${decimals} decimals but pricing.credit_price.decimals is ${this.config.pricing.credit_price.decimals}`,
      );
    }
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
