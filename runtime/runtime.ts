import { sql } from 'kysely';
import { availableParallelism } from 'node:os';
import { modelRunners, type NotaryConfig } from '../core/config.js';
import { createExtractDeps, type ExtractDeps } from '../extract/index.js';
import { Indexer } from '../indexer/indexer.js';
import type { SearchIndex } from '../indexer/search-index.js';
import { PasswordHasher, Sessions, SigninThrottle, SignupLimit, Users } from '../accounts/index.js';
import { Accounts } from '../payments/accounts.js';
import { Catalog, catalogDefaults } from '../payments/catalog.js';
import type { PaymentMode } from '../payments/mode.js';
import type { PaidCallGate, ResponseExtension } from '../payments/paid-call.js';
import type { Pricing } from '../payments/pricing.js';
import type { RateLimitStore } from '../payments/rate-limit.js';
import type { IdempotencyStore } from '../payments/stores/idempotency.js';
import { SqlUsageRecorder } from '../payments/usage.js';
import { SqlRateLimitStore } from '../payments/stores/sql-rate-limit.js';
import { activePins, cachedPinnedDir, ensurePinnedModels, neededPins, type PinnedStatus } from '../reranker/index.js';
import { loadReranker } from '../reranker/resolve.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import type { Reranker } from '../reranker/reranker.js';
import { activeCalibrations } from '../search/calibration.js';
import { SearchPipeline } from '../search/pipeline.js';
import type { DenseRetrieval } from '../search/request-state.js';
import type { SearchPipelineOptions } from '../search/tuning.js';
import type { CrossEncoderStage } from '../search/cross-encoder.js';
import { logRewriterFailures, queryRewriterFromConfig, type QueryRewriter } from '../search/query-rewriter.js';
import { CrawlRunStore } from '../storage/crawl-runs.js';
import { CrawlSeedStore } from '../storage/crawl-seeds.js';
import { UsersRepository } from '../storage/users.js';
import { FrontierStore } from '../storage/frontier.js';
import { SharedHostSlots } from '../storage/host-slots.js';
import { openStorage, type Storage } from '../storage/db.js';
import { registeredPlugins } from './plugins.js';
import type { ReconcileSummary } from '../payments/mode.js';
import type { LedgerRow, PluginRoute, PluginService, PluginServices } from '../payments/plugin.js';
import { PageStore } from '../storage/pages.js';
import { CollectionStore } from '../storage/collections.js';
import { endpointOf, waitAtStart } from '../core/start-wait.js';
import { openIndexBackend, openStores, storedPages, storedPassages, type IndexBackend, type SharedStores } from './backends.js';
import { SettingsRepository } from '../storage/settings.js';
import { UsageRepository } from '../storage/usage.js';
import { storedSiteTitles } from '../indexer/site-titles.js';
import { openDense, type OpenedDense } from './dense.js';
import { pinnedEmbedderOf } from './model-fetch.js';
import { assignScorers, type Scorers } from './scorers.js';
import { stderrLog, type Log } from './log.js';
import { buildPaidCallGate, buildPaymentModes, reconcileModes, type PaymentModeDeps } from './payments.js';

/** One charge as `notary payments list` shows it. */
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

/** pg_advisory_lock key of indexing (one indexer at a time across processes). */
const INDEXING_LOCK = 0x6e6f7420;

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
  readonly rateLimits: RateLimitStore;
  readonly idempotency: IdempotencyStore;
  readonly queryRewriter: QueryRewriter | undefined;

  /**
   * The pinned models this configuration needs (the cross-encoder and the bi-encoder, unless models are named), in
   * the cache or fetched from the hub; missing ones are said once, in one warning line.
   */
  readonly models: Lazy<Promise<PinnedStatus[]>>;
  /** The reranker as resolved from config and environment (model, cache, download, lexical fallback). */
  readonly reranker: Lazy<Promise<Reranker>>;
  /** Dense retrieval with the live reranker (embeddings.model "reranker" uses it when it is a bi-encoder). */
  readonly dense: Lazy<Promise<OpenedDense>>;
  /** Dense retrieval without loading a reranker (crawl and index: only a configured bi-encoder is used). */
  readonly denseForIndexing: Lazy<Promise<OpenedDense>>;
  /** Which model scores which depth (the bi-encoder the passes, the cross-encoder from search.cross_encoder_from_depth). */
  readonly scorers: Lazy<Promise<Scorers>>;
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
    const dashboard = config.dashboard;
    const people = new UsersRepository(storage.db);
    const throttle = new SigninThrottle(people, {
      maxFailures: dashboard.signin.max_failures,
      maxFailuresPerAddress: dashboard.signin.max_failures_per_address,
      lockoutMs: dashboard.signin.lockout_s * 1000,
      lockoutMaxMs: dashboard.signin.lockout_max_s * 1000,
      windowMs: dashboard.signin.window_minutes * 60_000,
    });
    this.users = new Users(people, new PasswordHasher({ logN: dashboard.scrypt_log_n, r: 8, p: 1 }), throttle, {
      passwordMinLength: dashboard.password_min_length,
      signup: dashboard.signup,
      signupCredits: dashboard.signup_credits,
      defaultTier: config.default_tier,
      signupLimit: new SignupLimit(people, { maxPerAddress: dashboard.signup_limit.max_per_address, windowMs: dashboard.signup_limit.window_minutes * 60_000 }),
    });
    this.sessions = new Sessions(people, { ttlMs: dashboard.session_hours * 3_600_000, idleMs: dashboard.session_idle_hours * 3_600_000 });
    this.seeds = new CrawlSeedStore(storage.db);
    this.frontier = new FrontierStore(storage.db, storage.dialect);
    this.hostSlots = new SharedHostSlots(storage.db);
    this.rateLimits =
      options.rateLimits ??
      (options.sharedRateLimits && config.stores.backend === 'memory' ? new SqlRateLimitStore(storage.db, storage.dialect) : this.stores.rateLimits);
    this.idempotency = this.stores.idempotency;
    const rewriter = queryRewriterFromConfig(config.search);
    this.queryRewriter = rewriter ? logRewriterFailures(rewriter, (message) => log('warn', message)) : undefined;

    const env = options.env ?? process.env;
    this.models = lazy(() => ensurePinnedModels(config.reranker, neededPins(config, activePins(env), env), { log }));
    const pinnedEmbedder = async () => pinnedEmbedderOf(await this.models());
    this.reranker = lazy(async () => loadReranker(config.reranker, { log, env, precision: config.embeddings.precision, ensured: await this.models() }));
    this.dense = lazy(async () =>
      openDense(config, storage, { reranker: await this.reranker(), log, vectors: backend.vectors, ...(await pinnedEmbedder()) }),
    );
    // Indexing never downloads: it uses the pinned bi-encoder only when it is already in the cache.
    this.denseForIndexing = lazy(async () => {
      const pinnedEmbedder = await cachedPinnedDir(config.reranker, neededPins(config, activePins(env), env), 'bi-encoder');
      return openDense(config, storage, { log, vectors: backend.vectors, pinnedEmbedder });
    });
    this.scorers = lazy(async () => {
      const scorers = assignScorers(config, await this.reranker(), await this.dense());
      crossEncoderFrom = scorers.crossEncoder?.options.fromDepth ?? null;
      const cross = scorers.crossEncoder?.model;
      const nice = config.search.cross_encoder_nice;
      if (cross instanceof OnnxReranker) {
        // Its own threads, all the cores at a lower priority: one depth-2 search spreads its pairs over them, and
        // the depth-1 work (the bi-encoder, full text) goes first.
        if (modelRunners(config.reranker).workers > 0) await cross.growWorkers(config.search.cross_encoder_workers ?? Math.min(4, availableParallelism()));
        if (nice > 0 && !(await cross.lowerPriority(nice))) {
          log('warn', `search.cross_encoder_nice ${nice}: the cross-encoder's threads could not be given a lower priority (reranker.workers 0?)`);
        }
      }
      return scorers;
    });
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
    const extensions: ResponseExtension[] = [...registeredPlugins().flatMap((plugin) => plugin.extensions?.(this.service) ?? []), ...(options.extensions ?? [])];
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
    const rows: PaymentListRow[] = [];
    for (const plugin of registeredPlugins()) rows.push(...((await plugin.ledger?.(this.storage.db, options.mode !== undefined ? { mode: options.mode } : {})) ?? []));
    rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
    return options.limit !== undefined ? rows.slice(-options.limit) : rows;
  }

  /** Decides undecided pay-per-call settlements (settles that timed out) from their chain. */
  reconcilePayments(): Promise<ReconcileSummary> {
    return reconcileModes(this.paidCallGate().modes);
  }

  /** Start-up checks of the plug-ins that need the network (e.g. a token's decimals on chain); throws invalid_config. */
  async checkPaymentSetup(): Promise<void> {
    for (const plugin of registeredPlugins()) await plugin.startupCheck?.(this.config, this.log);
  }

  /**
   * Makes the plug-ins ready to serve (a broken receipt key file stops the start, with its reason); returns what they
   * say once the server listens.
   */
  async pluginsServing(): Promise<string[]> {
    return (await Promise.all(registeredPlugins().map((plugin) => plugin.serving?.(this.service) ?? []))).flat();
  }

  /** The plug-ins' public HTTP routes (api/ serves them). */
  async pluginRoutes(): Promise<PluginRoute[]> {
    return (await Promise.all(registeredPlugins().map((plugin) => plugin.routes?.(this.service) ?? []))).flat();
  }

  /** Whether every dependency answers: the database, the index backend, the shared stores (GET /readyz). */
  async readiness(): Promise<Record<string, boolean>> {
    const database = await this.storage.db
      .selectFrom('pages')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('id', '=', -1)
      .execute()
      .then(() => true, () => false);
    const [index, stores] = await Promise.all([this.backend.ready().catch(() => false), this.stores.ready().catch(() => false)]);
    const plugins = await Promise.all(
      registeredPlugins()
        .filter((plugin) => plugin.readiness && (plugin.mode?.enabled(this.config) ?? true))
        .map(async (plugin) => [plugin.name, await (plugin.readiness?.(this.config, this.storage) ?? Promise.resolve(true)).catch(() => false)] as const),
    );
    return { database, index, stores, ...Object.fromEntries(plugins) };
  }

  /**
   * For `notary serve`: waits (server.start_wait_ms) for the shared stores (Redis) to answer and fails with the
   * setting to fix. PostgreSQL and the index backend's server are waited for when the runtime opens; a runtime
   * without its Redis still opens (its /readyz says so), so a Redis that goes away later is a 503, not a crash.
   */
  async waitForStores(): Promise<void> {
    const url = this.config.stores.backend === 'redis' ? this.config.stores.redis_url : undefined;
    if (!url) return;
    await waitAtStart({ what: `Redis at ${endpointOf(url)}`, setting: 'stores.redis_url (NOTARY_REDIS_URL)', waitMs: this.config.server.start_wait_ms }, async () => {
      if (!(await this.stores.ready())) throw new Error('no answer to PING');
    });
  }

  /** Rebuilds the search index from the stored passages (each backend swaps in a complete one: a staging index, a transaction). */
  rebuildIndex(onProgress?: (documents: number) => void): Promise<number> {
    return this.backend.rebuild(storedPassages(this.storage), onProgress, storedPages(this.storage));
  }

  /**
   * Runs `work` while holding the deployment-wide indexing lock: on PostgreSQL a session advisory lock (held on one
   * connection of the pool, released when `work` ends or the process dies), so crawler processes index one after
   * another; on SQLite the database's own write lock serialises writers and this runs `work` directly.
   */
  async exclusiveIndexing<T>(work: () => Promise<T>): Promise<T> {
    if (this.storage.dialect !== 'postgres') return work();
    return this.storage.db.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(${INDEXING_LOCK})`.execute(connection);
      try {
        return await work();
      } finally {
        await sql`select pg_advisory_unlock(${INDEXING_LOCK})`.execute(connection);
      }
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
    await this.stores.close();
    await this.storage.close();
  }
}
