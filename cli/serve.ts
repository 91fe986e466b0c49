import { setTimeout as sleep } from 'node:timers/promises';
import { normaliseUrl } from '../crawler/index.js';
import { RateMeter } from './progress.js';
import { buildApp, receiptPublicRoutes } from '../api/index.js';
import type { NotaryConfig } from '../core/config.js';
import { Runtime } from '../runtime/index.js';
import type { DenseRetrieval } from '../search/pipeline.js';
import { crawlAndIndex } from './crawl.js';

/** The shortest pause between two background crawl rounds, whatever recrawl_after_hours says. */
const MIN_ROUND_PAUSE_MS = 60_000;
/** How often undecided pay-per-call settlements are looked up on chain. */
const RECONCILE_EVERY_MS = 30_000;

async function crawlWorker(ctx: Runtime, dense: DenseRetrieval | undefined, signal: AbortSignal, log: (msg: string) => void): Promise<void> {
  const pauseMs = Math.max(MIN_ROUND_PAUSE_MS, ctx.config.crawler.recrawl_after_hours * 3_600_000);
  while (!signal.aborted) {
    try {
      // A round that was stopped or killed goes on where it stopped instead of walking the site again.
      await ctx.runs.markDead();
      const resume = await ctx.runs.latestResumable(ctx.config.crawler.seeds.map((s) => normaliseUrl(s.trim()) ?? s));
      if (resume) log(`resuming crawl ${resume.id} (${resume.status ?? 'stopped'}) from its frontier`);
      const { crawl, index } = await crawlAndIndex(ctx, {
        ...(resume ? { resume } : { seeds: ctx.config.crawler.seeds, skipFresh: true }),
        signal,
        quiet: true,
        ...(dense ? { dense } : {}),
      });
      log(
        `crawl round ${crawl.runId} ${crawl.status}: ${crawl.stored} stored (${crawl.fetched} new or changed, ${crawl.unchanged} unchanged, ` +
          `${crawl.fresh} fresh), ${crawl.duplicates} duplicates, ${crawl.failed} failed, ${crawl.skipped.total} skipped, ${crawl.queued} queued; ` +
          `indexed ${index.indexedPages} pages (${index.passages} passages, ${index.embedded} embedded)`,
      );
    } catch (err) {
      log(`crawl round failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      await sleep(pauseMs, undefined, { signal });
    } catch {
      return;
    }
  }
}

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
    pricing: ctx.pricing,
    search: pipeline,
    extract: ctx.extract(),
    publicRoutes: [receiptPublicRoutes(receipts)],
    ...(options.logger ? { logger: options.logger } : {}),
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
  if (counts.passages === 0 && cfg.crawler.seeds.length === 0) {
    app.log.warn('the index is empty and no seeds are configured: run `notary crawl <url>` or set NOTARY_SEEDS');
  }
  if (cfg.server.crawl_on_start && cfg.crawler.seeds.length > 0) {
    worker = crawlWorker(ctx, dense, stop.signal, (msg) => app.log.info(msg));
  }
}
