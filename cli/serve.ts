import cluster from 'node:cluster';
import { buildApp, pluginPublicRoutes, ApiMetrics } from '../api/index.js';
import { modelRunners, serveWorkers, type NotaryConfig, NotaryError } from '../core/index.js';
import { Runtime } from '../runtime/index.js';
import { seedWorker } from './crawl-worker.js';
import { crawlJobWorker, webhookOnEnded } from './crawl-jobs.js';
import { logWriter, serverLoggerOptions } from './log-format.js';
import { RateMeter } from './progress.js';

/** How often undecided pay-per-call settlements are looked up on chain. */
const RECONCILE_EVERY_MS = 30_000;

/** The app `notary serve` listens with, from an open runtime (also what scripts/openapi.ts documents). */
export async function buildServeApp(ctx: Runtime, options: { logger?: object } = {}) {
  const cfg = ctx.config;
  // The plug-ins made ready before listening: a broken receipt key file or a rewritten log stops the start, with the reason.
  const said = await ctx.pluginsServing();
  const reranker = await ctx.reranker();
  const opened = await ctx.dense();
  const dense = opened.dense;
  const rewriter = ctx.queryRewriter;
  if (rewriter) ctx.log('info', `query rewriter: ${rewriter.model} at ${cfg.search.query_rewriter.url ?? ''} (reflection passes only)`);
  const pipeline = await ctx.search();
  const { assignment } = await ctx.scorers();
  const app = await buildApp({
    config: cfg,
    gate: ctx.paidCallGate(),
    search: pipeline,
    collections: ctx.collections,
    webhooks: ctx.webhooks,
    sites: ctx.sites,
    extract: ctx.extract(),
    crawl: ctx.crawlJobDeps(),
    pricing: () => ctx.pricing,
    publicRoutes: [pluginPublicRoutes(await ctx.pluginRoutes())],
    dashboard: ctx,
    ...(options.logger ? { logger: options.logger } : {}),
    metrics: new ApiMetrics({ pages: () => ctx.pages.counts() }),
    ready: () => ctx.readiness(),
    health: async () => {
      const counts = await ctx.pages.counts();
      return {
        status: 'ok',
        reranker: reranker.info,
        index: await ctx.index.stats(),
        retrieval: dense ? { mode: 'hybrid', vectors: await dense.index.stats() } : { mode: 'bm25', why: opened.off ?? null },
        // Which model serves which depth and why: names only.
        models: assignment,
        query_rewriter: rewriter ? { model: rewriter.model } : null,
        pages: counts.pages,
        passages: counts.passages,
      };
    },
  });
  return { app, said, reranker, dense, pipeline };
}

/**
 * `notary serve`. With server.workers > 1 (0: one per core) the main process runs the background work (crawl worker,
 * embedding backfill, payment reconciliation) and forks that many API processes sharing the port (node:cluster);
 * each API process runs its models in worker threads of its share of the cores.
 */
export async function serveCommand(cfg: NotaryConfig): Promise<void> {
  const workers = serveWorkers(cfg);
  if (workers <= 1) return serveProcess(cfg, { background: true });
  const apiConfig: NotaryConfig = { ...cfg, reranker: { ...cfg.reranker, ...modelRunners(cfg.reranker, workers) } };
  if (cluster.isWorker) return serveProcess(apiConfig, { background: false });
  return servePrimary(cfg, workers);
}

/** The main process of a multi-process serve: migrations and keys before the fork, background work, restarts. */
async function servePrimary(cfg: NotaryConfig, workers: number): Promise<void> {
  const line = logWriter(process.stderr, { role: 'primary' });
  const log: ServeLog = { info: (m) => line('info', m), warn: (m) => line('warn', m), error: (m) => line('error', m) };
  // Opened before forking: migrations run once, the receipt keys are made once.
  const ctx = await Runtime.open(cfg);
  await ctx.waitForStores();
  await ctx.pluginsServing();
  let stopping = false;
  const listened = new Set<number>();
  const fork = () => {
    const worker = cluster.fork();
    worker.on('message', (message: unknown) => {
      if ((message as { notary?: string } | null)?.notary === 'listening') listened.add(worker.id);
    });
  };
  let lastRestart = 0;
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!listened.has(worker.id) && code !== 0 && signal === null) {
      // It failed before serving (a taken port, a dependency down): another would fail the same way. It printed why.
      stopping = true;
      log.error(`API process ${worker.process.pid} could not start (exit ${code}); stopping`);
      for (const other of Object.values(cluster.workers ?? {})) other?.kill('SIGTERM');
      void Promise.allSettled([ctx.close()]).then(() => process.exit(1));
      return;
    }
    log.warn(`API process ${worker.process.pid} exited (${signal ?? code}); starting another`);
    // At most one restart a second, so a process that cannot start does not spin.
    const wait = Math.max(0, lastRestart + 1000 - Date.now());
    lastRestart = Date.now() + wait;
    setTimeout(fork, wait);
  });
  for (let i = 0; i < workers; i++) fork();
  const runners = modelRunners(cfg.reranker, workers);
  log.info(`serving with ${workers} API processes on ${cfg.server.host}:${cfg.server.port}, each running its models in ${runners.workers} worker threads of ${runners.threads} ONNX threads`);
  const background = await startBackground(ctx, log);
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: shutting down`);
    // The API processes have the same bound; this one also covers the background work.
    exitAnywayAfter(cfg.server.shutdown_timeout_ms + 1_000, log.error);
    const exited = Object.values(cluster.workers ?? {}).map(
      (worker) => new Promise<void>((resolve) => {
        if (!worker || worker.isDead()) return resolve();
        worker.once('exit', () => resolve());
        worker.kill('SIGTERM');
      }),
    );
    await Promise.all([...exited, background.stop()]);
    await ctx.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

interface ServeLog {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

/**
 * What a stop leaves webhook attempts in flight to finish: the stop's limit less a second for the rest. One cut short
 * keeps its claim and is attempted again (same webhook-id) once the claim lapses.
 */
function webhookStopWaitMs(cfg: NotaryConfig): number {
  return Math.max(0, cfg.server.shutdown_timeout_ms - 1_000);
}

/**
 * The background work of a serve: payment reconciliation, webhook delivery, embedding what has no vector yet, the
 * crawl worker.
 */
async function startBackground(ctx: Runtime, log: ServeLog): Promise<{ stop(): Promise<void> }> {
  const cfg = ctx.config;
  const stop = new AbortController();
  const webhooks = ctx.startWebhookDelivery((level, message) => log[level](message));
  // Settlements whose outcome was never heard are decided from the chain in the background too (a retry by the payer
  // decides its own at once).
  const reconciler = setInterval(() => {
    ctx.reconcilePayments().then(
      (s) => {
        if (s.checked > 0) log.info(`payments reconciled: ${s.checked} checked, ${s.settled} settled, ${s.released} released, ${s.pending} pending`);
      },
      (err: unknown) => log.warn(`payment reconciliation failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  }, RECONCILE_EVERY_MS);
  reconciler.unref();
  const { dense } = await ctx.dense();
  let backfill: Promise<void> = Promise.resolve();
  if (dense && (await dense.index.missing(1)).length > 0) {
    log.warn('some passages have no vector of this embedding model yet: embedding them in the background (dense results are partial until done)');
    let meter: RateMeter | null = null;
    let lastLog = 0;
    backfill = ctx
      .indexer(dense)
      .embedPending((p) => {
        meter ??= new RateMeter(p.embedTotal);
        const line = meter.describe(p.embedded, 'passages');
        // Logs are line-based: one progress line a minute.
        if (Date.now() - lastLog < 60_000) return;
        lastLog = Date.now();
        log.info(`embedding in the background: ${line}`);
      })
      .then((n) => log.info(`embedded ${n} passages`))
      .catch((err: unknown) => log.error(`embedding failed: ${err instanceof Error ? err.message : String(err)}`));
  }
  const counts = await ctx.pages.counts();
  if (counts.passages === 0 && cfg.crawler.seeds.length === 0 && (await ctx.seeds.list()).length === 0) {
    log.warn('the index is empty and no seeds are configured: run `notary crawl <url>`, set NOTARY_SEEDS, or add seeds in the dashboard');
  }
  const worker = cfg.server.crawl_on_start ? seedWorker(ctx, dense, stop.signal, (msg) => log.info(msg)) : Promise.resolve();
  // Tenants' crawl jobs (POST /v1/crawl) run whatever server.crawl_on_start says.
  const jobs = crawlJobWorker(ctx, dense, stop.signal, { log: (msg) => log.info(msg), onEnded: webhookOnEnded(ctx, (msg) => log.info(msg)) });
  return {
    stop: async () => {
      stop.abort();
      clearInterval(reconciler);
      await Promise.all([worker, jobs, backfill, webhooks.stop(webhookStopWaitMs(cfg))]);
    },
  };
}

/** One process answering requests; with `background` also the background work (a single-process serve). */
async function serveProcess(cfg: NotaryConfig, role: { background: boolean }): Promise<void> {
  const ctx = await Runtime.open(cfg, { sharedRateLimits: !role.background });
  try {
    await ctx.waitForStores();
  } catch (err) {
    await ctx.close().catch(() => undefined);
    throw err;
  }
  const { app, said, reranker, pipeline } = await buildServeApp(ctx, { logger: serverLoggerOptions(cfg.log_level) });
  await ctx.checkPaymentSetup();
  let background: { stop(): Promise<void> } | null = null;
  const shutdown = async (signal: string) => {
    app.log.info(`${signal}: shutting down`);
    exitAnywayAfter(cfg.server.shutdown_timeout_ms, (m) => app.log.error(m));
    await app.close();
    await background?.stop();
    await ctx.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  let address: string;
  try {
    address = await app.listen({ port: cfg.server.port, host: cfg.server.host });
  } catch (err) {
    await app.close().catch(() => undefined);
    await ctx.close().catch(() => undefined);
    throw listenFailure(err, cfg);
  }
  if (cluster.isWorker) process.send?.({ notary: 'listening' });
  for (const line of said) app.log.info(line);
  // The index's in-memory structures are made now rather than at the first searches (those rank without them meanwhile).
  ctx.index.warm?.().catch((err: unknown) => app.log.warn(`index warm-up failed: ${(err as Error).message}`));
  const counts = await ctx.pages.counts();
  app.log.info(
    `notary listening on ${address} (data ${cfg.data_dir}; ${counts.pages} pages, ${counts.passages} passages; ` +
      `scorer ${reranker.info.kind}: ${reranker.info.model}; retrieval ${pipeline.retrieval})`,
  );
  for (const d of (await ctx.scorers()).assignment.depths) {
    app.log.info(`depth ${d.from === d.to ? d.from : `${d.from}-${d.to}`}: ${d.scorer === 'lexical' ? 'lexical' : `${d.scorer} ${d.model}`} (${d.why})`);
  }
  if (role.background) {
    const log: ServeLog = { info: (m) => app.log.info(m), warn: (m) => app.log.warn(m), error: (m) => app.log.error(m) };
    background = await startBackground(ctx, log);
  }
}

/** A stop that has not finished within `ms` (a request or a crawl that does not end) exits anyway, saying so. */
function exitAnywayAfter(ms: number, log: (message: string) => void): void {
  setTimeout(() => {
    log(`shutdown did not finish within ${ms} ms (server.shutdown_timeout_ms): exiting with requests or background work cut short`);
    process.exit(1);
  }, ms).unref();
}

/** The one line a failed listen ends the start with, naming the setting to change. */
function listenFailure(err: unknown, cfg: NotaryConfig): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const where = `${cfg.server.host}:${cfg.server.port}`;
  if (code === 'EADDRINUSE') {
    return new NotaryError('listen_failed', `${where} is already in use by another process: stop it, or serve on another port (--port, NOTARY_PORT, server.port)`);
  }
  if (code === 'EACCES') {
    return new NotaryError('listen_failed', `not allowed to listen on ${where} (ports below 1024 need privileges): use --port 1024 or above (NOTARY_PORT, server.port)`);
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new NotaryError('listen_failed', `${cfg.server.host} is not an address of this machine: set --host / NOTARY_HOST (server.host), e.g. 127.0.0.1 or 0.0.0.0`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** `notary crawl-worker`: the background crawl loop of `serve` alone, for crawler processes of a scaled-out deployment. */
export async function crawlWorkerCommand(cfg: NotaryConfig): Promise<void> {
  const ctx = await Runtime.open(cfg);
  const { dense } = await ctx.denseForIndexing();
  const stop = new AbortController();
  const log = (msg: string) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), role: 'crawl-worker', pid: process.pid, msg })}\n`);
  const shutdown = () => stop.abort();
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  // Crawler processes post the webhook messages too (each claims a message before posting it: never two at once).
  const webhooks = ctx.startWebhookDelivery((_level, message) => log(message));
  // The serve-time seed worker and crawl-job worker: they idle while no seed is due and no job is queued (a
  // supervisor's restart policy never loops).
  await Promise.all([seedWorker(ctx, dense, stop.signal, log), crawlJobWorker(ctx, dense, stop.signal, { log, onEnded: webhookOnEnded(ctx, log) })]);
  await webhooks.stop(webhookStopWaitMs(cfg));
  await ctx.close();
}
