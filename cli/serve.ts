import { buildApp, receiptPublicRoutes } from '../api/index.js';
import { ApiMetrics } from '../api/metrics.js';
import type { NotaryConfig } from '../core/config.js';
import { Runtime } from '../runtime/index.js';
import { seedWorker } from './crawl-worker.js';
import { RateMeter } from './progress.js';

/** How often undecided pay-per-call settlements are looked up on chain. */
const RECONCILE_EVERY_MS = 30_000;

/** The app `notary serve` listens with, from an open runtime (also what scripts/openapi.ts documents). */
export async function buildServeApp(ctx: Runtime, options: { logger?: object } = {}) {
  const cfg = ctx.config;
  // Opened before listening: a broken key file or a rewritten log stops the start, with the reason.
  const receipts = await ctx.receipts();
  const reranker = await ctx.reranker();
  const opened = await ctx.dense();
  const dense = opened.dense;
  const rewriter = ctx.queryRewriter;
  if (rewriter) ctx.log('info', `query rewriter: ${rewriter.model} at ${cfg.search.query_rewriter.url ?? ''} (reflection passes only)`);
  const pipeline = await ctx.search();
  const app = await buildApp({
    config: cfg,
    gate: ctx.paidCallGate(),
    search: pipeline,
    extract: ctx.extract(),
    pricing: () => ctx.pricing,
    publicRoutes: [receiptPublicRoutes(receipts)],
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
        query_rewriter: rewriter ? { model: rewriter.model } : null,
        pages: counts.pages,
        passages: counts.passages,
      };
    },
  });
  return { app, receipts, reranker, dense, pipeline };
}

export async function serveCommand(cfg: NotaryConfig): Promise<void> {
  const ctx = await Runtime.open(cfg);
  const { app, receipts, reranker, dense, pipeline } = await buildServeApp(ctx, { logger: { level: cfg.log_level } });

  await ctx.checkPaymentSetup();
  const stop = new AbortController();
  // Settlements whose outcome was never heard are decided from the chain in the background too (a retry by the payer
  // decides its own at once).
  const reconciler = setInterval(() => {
    ctx.reconcilePayments().then(
      (s) => {
        if (s.checked > 0) app.log.info(`payments reconciled: ${s.checked} checked, ${s.settled} settled, ${s.released} released, ${s.pending} pending`);
      },
      (err: unknown) => app.log.warn(`payment reconciliation failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  }, RECONCILE_EVERY_MS);
  reconciler.unref();
  let worker: Promise<void> = Promise.resolve();
  let backfill: Promise<void> = Promise.resolve();
  const shutdown = async (signal: string) => {
    app.log.info(`${signal}: shutting down`);
    stop.abort();
    clearInterval(reconciler);
    await app.close();
    await worker;
    await backfill;
    await ctx.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  const address = await app.listen({ port: cfg.server.port, host: cfg.server.host });
  app.log.info(
    `signed receipts: issuer ${receipts.settings.issuer}, key ${receipts.keyring.current().kid} (${receipts.settings.keyFile}), ` +
      `log ${receipts.settings.origin} with ${await receipts.log.treeSize()} receipts`,
  );
  const counts = await ctx.pages.counts();
  app.log.info(
    `notary listening on ${address} (data ${cfg.data_dir}; ${counts.pages} pages, ${counts.passages} passages; ` +
      `scorer ${reranker.info.kind}: ${reranker.info.model}; retrieval ${pipeline.retrieval})`,
  );
  if (dense) {
    const missing = (await dense.index.missing(1)).length > 0;
    if (missing) {
      app.log.warn('some passages have no vector of this embedding model yet: embedding them in the background (dense results are partial until done)');
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
          app.log.info(`embedding in the background: ${line}`);
        })
        .then((n) => app.log.info(`embedded ${n} passages`))
        .catch((err: unknown) => app.log.error(`embedding failed: ${err instanceof Error ? err.message : String(err)}`));
    }
  }
  if (counts.passages === 0 && cfg.crawler.seeds.length === 0 && (await ctx.seeds.list()).length === 0) {
    app.log.warn('the index is empty and no seeds are configured: run `notary crawl <url>`, set NOTARY_SEEDS, or add seeds in the dashboard');
  }
  if (cfg.server.crawl_on_start) {
    worker = seedWorker(ctx, dense, stop.signal, (msg) => app.log.info(msg));
  }
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
  // The serve-time seed worker alone: it idles while no seed is due (a supervisor's restart policy never loops).
  await seedWorker(ctx, dense, stop.signal, log);
  await ctx.close();
}
