import type { NotaryConfig } from '../core/index.js';
import { createExtractDeps, type ExtractDeps } from '../extract/index.js';
import { Indexer, storedSiteTitles } from '../indexer/index.js';
import type { SearchIndex } from '../indexer/index.js';
import type { Sessions, Users } from '../accounts/index.js';
import { Accounts, Catalog, catalogDefaults, SqlUsageRecorder, SqlRateLimitStore } from '../payments/index.js';
import type {
  PaymentMode,
  PaidCallGate,
  ResponseExtension,
  Pricing,
  RateLimitStore,
  IdempotencyStore,
  ReconcileSummary,
  LedgerRow,
  PluginRoute,
  PluginService,
  PluginServices,
} from '../payments/index.js';
import type { Reranker } from '../reranker/index.js';
import {
  activeCalibrations,
  SearchPipeline,
  logRewriterFailures,
  queryRewriterFromConfig,
  type QueryRewriter,
} from '../search/index.js';
import type { DenseRetrieval, SearchPipelineOptions, CrossEncoderStage } from '../search/index.js';
import {
  CrawlRunStore,
  CrawlSeedStore,
  FrontierStore,
  SharedHostSlots,
  openStorage,
  type Storage,
  PageStore,
  CollectionStore,
  SettingsRepository,
  UsageRepository,
  SiteUrlStore,
  CrawlJobStore,
  type CrawlJobRow,
} from '../storage/index.js';
import { pluginExtensions, pluginLedger, pluginReadiness, pluginRoutes, pluginsServing, pluginStartupChecks } from './plugin-hooks.js';
import { databaseAnswers, waitForSharedStores } from './start-checks.js';
import { settleCrawlJob, type JobSettlement } from './crawl-jobs.js';
import { openIndexBackend, openStores, storedPages, storedPassages, type IndexBackend, type SharedStores } from './backends.js';
import { exclusiveIndexing } from './indexing-lock.js';
import { lazy, type Lazy } from './lazy.js';
import { modelsWiring, type ModelsWiring } from './models-wiring.js';
import { dashboardPeople } from './people.js';
import { stderrLog, type Log } from './log.js';
import { buildPaidCallGate, buildPaymentModes, reconcileModes, type PaymentModeDeps } from './payments.js';
import { registerWebhookMigrations, startDeliveryTimer, WebhookOutbox, webhookSettingsOf, type DeliveryTimer } from '../webhooks/index.js';

// The webhook tables (issue 33) are part of every deployment's schema, on either engine.
registerWebhookMigrations();

/** One charge in the books (`notary payments list`). */
export type PaymentListRow = LedgerRow;

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
  /** Several processes serve from this data folder: rate limits kept in memory move to the database. */
  sharedRateLimits?: boolean;
}

/**
 * The one composition root: everything a process needs, built from one validated config. Storage, the index, the
 * accounts, pricing and the stores open at once; models, search, extraction and the paid-call path are built on
 * first use, so a command that needs none of them (`notary keys`) never loads a model. serve, search, crawl,
 * status, keys, extract and the benchmarks all use it.
 */
export class Runtime {
  readonly pages: PageStore;
  /** Collections and page membership (issue 33). */
  readonly collections: CollectionStore;
  readonly runs: CrawlRunStore;
  /** The crawl frontier (crawl_frontier): what a stopped crawl resumes from. */
  readonly frontier: FrontierStore;
  /** Per-host request spacing shared by the crawler processes of a deployment (crawler.shared_frontier). */
  readonly hostSlots: SharedHostSlots;
  readonly accounts: Accounts;
  /** Prices and tiers: the config's values, overridden by operators' edits in the database, re-read while serving. */
  readonly catalog: Catalog;
  readonly usage: UsageRepository;
  /** People who sign in to the dashboard, their sessions, and the crawl seeds operators steer. */
  readonly users: Users;
  readonly sessions: Sessions;
  readonly seeds: CrawlSeedStore;
  /** Crawl jobs tenants order over the API (POST /v1/crawl); any crawl worker runs them. */
  readonly crawlJobs: CrawlJobStore;
  readonly rateLimits: RateLimitStore;
  readonly idempotency: IdempotencyStore;
  readonly queryRewriter: QueryRewriter | undefined;
  /** The URLs the index and the frontier know under a site (POST /v1/map). */
  readonly sites: SiteUrlStore;
  /** Tenants' webhook endpoints and the outbox of their messages (webhooks/): crawl jobs queue, the background delivers. */
  readonly webhooks: WebhookOutbox;

  // The models and what is built from them, on first use (see ModelsWiring).
  readonly models: ModelsWiring['models'];
  readonly reranker: ModelsWiring['reranker'];
  readonly dense: ModelsWiring['dense'];
  readonly denseForIndexing: ModelsWiring['denseForIndexing'];
  readonly scorers: ModelsWiring['scorers'];
  readonly search: Lazy<Promise<SearchPipeline>>;
  readonly extract: Lazy<ExtractDeps & { close(): Promise<void> }>;
  readonly paidCallGate: Lazy<PaidCallGate>;
  /** The registered plug-ins' services, each made once, at first use (e.g. the receipt log, the party keys). */
  readonly service: PluginServices = <T>(service: PluginService<T>): T => {
    if (!this.services.has(service)) this.services.set(service, service.create({ config: this.config, storage: this.storage }));
    return this.services.get(service) as T;
  };
  private readonly services = new Map<PluginService<unknown>, unknown>();

  private get modeDeps(): PaymentModeDeps {
    return { config: this.config, accounts: this.accounts, catalog: this.catalog, storage: this.storage, log: this.log };
  }

  readonly index: SearchIndex;
  private readonly stores: SharedStores;

  private constructor(
    readonly config: NotaryConfig,
    readonly storage: Storage,
    readonly backend: IndexBackend,
    readonly log: Log,
    options: RuntimeOptions,
  ) {
    this.index = backend.index;
    this.stores = openStores(config, storage);
    this.pages = new PageStore(storage.db);
    this.collections = new CollectionStore(storage.db);
    this.runs = new CrawlRunStore(storage.db);
    // Known once the scorers are (`notary serve` resolves them before it listens): searches they give to the cross-encoder cost more.
    let crossEncoderFrom: number | null = null;
    this.catalog = new Catalog(new SettingsRepository(storage.db), catalogDefaults(config, () => crossEncoderFrom), { refreshMs: config.dashboard.settings_refresh_ms });
    this.accounts = new Accounts(storage.db, { tiers: () => Object.keys(this.catalog.latest.tiers), defaultTier: config.default_tier });
    this.usage = new UsageRepository(storage.db);
    ({ users: this.users, sessions: this.sessions } = dashboardPeople(config, storage.db));
    this.seeds = new CrawlSeedStore(storage.db);
    this.crawlJobs = new CrawlJobStore(storage.db, storage.dialect);
    this.frontier = new FrontierStore(storage.db, storage.dialect);
    this.hostSlots = new SharedHostSlots(storage.db);
    this.rateLimits =
      options.rateLimits ??
      (options.sharedRateLimits && config.stores.backend === 'memory' ? new SqlRateLimitStore(storage.db, storage.dialect) : this.stores.rateLimits);
    this.idempotency = this.stores.idempotency;
    this.webhooks = new WebhookOutbox(storage.db, webhookSettingsOf(config));
    this.sites = new SiteUrlStore(storage.db, storage.dialect);
    const rewriter = queryRewriterFromConfig(config.search);
    this.queryRewriter = rewriter ? logRewriterFailures(rewriter, (message) => log('warn', message)) : undefined;

    const wiring = modelsWiring({ config, storage, backend, log, env: options.env ?? process.env, onCrossEncoderFrom: (depth) => (crossEncoderFrom = depth) });
    this.models = wiring.models;
    this.reranker = wiring.reranker;
    this.dense = wiring.dense;
    this.denseForIndexing = wiring.denseForIndexing;
    this.scorers = wiring.scorers;
    this.search = lazy(async () => {
      const scorers = await this.scorers();
      const { dense } = await this.dense();
      return this.searchPipeline({ reranker: scorers.passes, dense, crossEncoder: scorers.crossEncoder });
    });
    // Excerpts chosen against a query load the reranker on first use only. An indexed site's pages are titled with
    // the prefixes and suffixes learnt from its stored pages, as in search results.
    this.extract = lazy(() =>
      createExtractDeps(config, {
        scorePassages: async (query, passages) => (await this.reranker()).score(query, passages),
        siteTitles: storedSiteTitles(this.pages),
      }),
    );
    const extensions: ResponseExtension[] = [...pluginExtensions(this.service), ...(options.extensions ?? [])];
    this.paidCallGate = lazy(() =>
      buildPaidCallGate({
        config,
        modes: [...buildPaymentModes(this.modeDeps), ...(options.extraModes?.(this.modeDeps) ?? [])],
        rateLimits: this.rateLimits,
        idempotency: this.idempotency,
        catalog: this.catalog,
        usage: new SqlUsageRecorder(this.usage),
        extensions,
        log,
      }),
    );
  }

  /** What POST /v1/crawl works with: the job store, the tiers, and the strict address policy of tenants' seeds. */
  crawlJobDeps(): {
    jobs: CrawlJobStore;
    catalog: Catalog;
    addressPolicy: { allowPrivateNetworks: boolean; allowedPrivateRanges: readonly string[] };
    checkWebhook(endpointId: string, tenantId: string): Promise<void>;
    tenantAllowsPrivate(tenantId: string): Promise<boolean>;
  } {
    return {
      jobs: this.crawlJobs,
      tenantAllowsPrivate: async (tenantId) => (await this.accounts.getTenant(tenantId)).allow_private_networks === 1,
      checkWebhook: async (endpointId, tenantId) => {
        await this.webhooks.endpointOf(endpointId, tenantId);
      },
      catalog: this.catalog,
      addressPolicy: { allowPrivateNetworks: this.config.extract.allow_private_networks, allowedPrivateRanges: this.config.extract.allowed_private_ranges },
    };
  }

  /** Settles a crawl job's hold once for the pages it stored, and records the charge for usage (runtime/crawl-jobs.ts). */
  async settleCrawlJob(job: CrawlJobRow, outcome: Parameters<typeof settleCrawlJob>[3]): Promise<JobSettlement> {
    return settleCrawlJob(this.crawlJobs, this.paidCallGate().modes, job, outcome, { recorder: new SqlUsageRecorder(this.usage), amountFor: (credits) => this.pricing.amountFor(credits) });
  }

  /** The price list in force as last read (operators' edits included); a paid call uses the one of its admission. */
  get pricing(): Pricing {
    return this.catalog.latest.pricing;
  }

  static async open(config: NotaryConfig, options: RuntimeOptions = {}): Promise<Runtime> {
    // An operator's calibration file that cannot be read stops the start, not every search after it.
    activeCalibrations(options.env ?? process.env);
    const storage = await openStorage(config);
    let backend: IndexBackend;
    try {
      backend = await openIndexBackend(config, storage, options.log ?? stderrLog);
    } catch (err) {
      await storage.close();
      throw err;
    }
    const runtime = new Runtime(config, storage, backend, options.log ?? stderrLog, options);
    if (backend.layoutChanged) {
      // A new layout of the full-text tables (made empty on open): the index again from the stored passages.
      const log = options.log ?? stderrLog;
      log('warn', 'the full-text index has a new layout: indexing the stored passages again');
      const started = performance.now();
      const n = await runtime.rebuildIndex();
      log('info', `full-text index rebuilt: ${n} passages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    return runtime;
  }

  /**
   * The one place a search pipeline is assembled: this runtime's index and query rewriter with the given scorer and
   * dense retrieval. `search` overrides settings (benchmarks and the relevance harness measure variants this way).
   */
  searchPipeline(parts: {
    reranker: Reranker;
    dense?: DenseRetrieval | undefined;
    /** The cross-encoder's stage (search.cross_encoder_from_depth on); none: every depth keeps `reranker`'s scores. */
    crossEncoder?: CrossEncoderStage | undefined;
    search?: Partial<NotaryConfig['search']>;
    /** Tuning knobs the relevance harness varies; the service runs with the defaults. */
    options?: SearchPipelineOptions;
    /** Another handle on this runtime's index (benchmarks compare its settings side by side). */
    index?: SearchIndex;
  }): SearchPipeline {
    return new SearchPipeline({
      index: parts.index ?? this.index,
      reranker: parts.reranker,
      config: { ...this.config.search, ...parts.search },
      ...(parts.options ? { options: parts.options } : {}),
      ...(parts.dense ? { dense: parts.dense } : {}),
      ...(parts.crossEncoder ? { crossEncoder: parts.crossEncoder } : {}),
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

  /** Every charge, oldest first, from each plug-in's books (`notary payments list`; only `mode`'s when given). */
  async paymentsList(options: { mode?: string; limit?: number } = {}): Promise<PaymentListRow[]> {
    return pluginLedger(this.storage.db, options);
  }

  /** Decides undecided pay-per-call settlements (settles that timed out) from their chain. */
  reconcilePayments(): Promise<ReconcileSummary> {
    return reconcileModes(this.paidCallGate().modes);
  }

  /** Start-up checks of the plug-ins that need the network (e.g. a token's decimals on chain); throws invalid_config. */
  async checkPaymentSetup(): Promise<void> {
    await pluginStartupChecks(this.config, this.log);
  }

  /**
   * Makes the plug-ins ready to serve (a broken receipt key file stops the start, with its reason); returns what they
   * say once the server listens.
   */
  async pluginsServing(): Promise<string[]> {
    return pluginsServing(this.service);
  }

  /** The plug-ins' public HTTP routes (api/ serves them). */
  async pluginRoutes(): Promise<PluginRoute[]> {
    return pluginRoutes(this.service);
  }

  /** Whether every dependency answers: the database, the index backend, the shared stores (GET /readyz). */
  async readiness(): Promise<Record<string, boolean>> {
    const [database, index, stores] = await Promise.all([databaseAnswers(this.storage), this.backend.ready().catch(() => false), this.stores.ready().catch(() => false)]);
    return { database, index, stores, ...(await pluginReadiness(this.config, this.storage)) };
  }

  /** For `notary serve`: waits (server.start_wait_ms) for the shared stores (Redis); see `waitForSharedStores`. */
  waitForStores(): Promise<void> {
    return waitForSharedStores(this.config, () => this.stores.ready());
  }

  /** Rebuilds the search index from the stored passages (each backend swaps in a complete one: a staging index, a transaction). */
  rebuildIndex(onProgress?: (documents: number) => void): Promise<number> {
    return this.backend.rebuild(storedPassages(this.storage), onProgress, storedPages(this.storage));
  }

  /**
   * The background webhook delivery (`notary serve`'s background work, `notary crawl-worker`): due messages every
   * webhooks.deliver_every_ms; stop it before close.
   */
  startWebhookDelivery(log: (level: 'info' | 'warn', message: string) => void): DeliveryTimer {
    return startDeliveryTimer(this.webhooks, { everyMs: this.config.webhooks.deliver_every_ms, log });
  }

  /** Runs `work` holding the deployment-wide indexing lock (crawler processes index one after another). */
  exclusiveIndexing<T>(work: () => Promise<T>): Promise<T> {
    return exclusiveIndexing(this.storage, work);
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
    await this.stores.close();
    await this.storage.close();
  }
}
