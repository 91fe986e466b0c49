import type { NotaryConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { runCrawl, type CrawlProgress, type CrawlSummary } from '../crawler/index.js';
import type { IndexerRunResult } from '../indexer/index.js';
import { Runtime } from '../runtime/index.js';
import type { DenseRetrieval } from '../search/pipeline.js';
import { ProgressLine } from './progress.js';

function describeCrawl(p: CrawlProgress): string {
  return (
    `crawl: fetched ${p.fetched} · unchanged ${p.unchanged} · queued ${p.queued} · skipped ${p.skipped.total}` +
    ` · failed ${p.failed} · ${p.pagesPerSecond.toFixed(1)} pages/s · ${(p.elapsedMs / 1000).toFixed(1)} s`
  );
}

/** Crawl then index, reporting progress; used by `notary crawl` and by the serve worker. */
export async function crawlAndIndex(
  ctx: Runtime,
  options: { seeds?: string[]; skipFresh?: boolean; signal?: AbortSignal; progress?: ProgressLine; quiet?: boolean; dense?: DenseRetrieval },
): Promise<{ crawl: CrawlSummary; index: IndexerRunResult }> {
  const progress = options.progress;
  const crawl = await runCrawl({
    config: ctx.config.crawler,
    pages: ctx.pages,
    runs: ctx.runs,
    // The crawler's requests pass the same address policy as /v1/extract.
    addressPolicy: {
      allowPrivateNetworks: ctx.config.extract.allow_private_networks,
      allowedPrivateRanges: ctx.config.extract.allowed_private_ranges,
    },
    ...(options.seeds ? { seeds: options.seeds } : {}),
    ...(options.skipFresh ? { skipFresh: true } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    onProgress: (p) => progress?.update(describeCrawl(p)),
    log: (level, msg) => {
      if (options.quiet && level !== 'warn') return;
      if (level !== 'debug') process.stderr.write(`${level === 'warn' ? 'WARNING: ' : ''}${msg}\n`);
    },
  });
  progress?.done(describeCrawl(crawl));
  const index = await ctx.indexer(options.dense).runOnce({
    onProgress: (p) =>
      progress?.update(
        `index: pages ${p.indexedPages} · removed ${p.removedPages} · passages ${p.passages} · failed ${p.failed}` +
          (options.dense ? ` · embedded ${p.embedded}` : ''),
      ),
  });
  progress?.done(
    `index: pages ${index.indexedPages} · removed ${index.removedPages} · passages ${index.passages} · failed ${index.failed}` +
      ` · ${(index.passages / Math.max(index.ms / 1000, 1e-3)).toFixed(0)} passages/s` +
      (options.dense ? ` · embedded ${index.embedded}` : ''),
  );
  return { crawl, index };
}

export async function crawlCommand(cfg: NotaryConfig): Promise<void> {
  const seeds = cfg.crawler.seeds;
  if (seeds.length === 0) {
    throw new NotaryError('invalid_seed', 'no seeds: pass URLs (notary crawl https://example.org/) or set crawler.seeds / NOTARY_SEEDS');
  }
  const ctx = await Runtime.open(cfg);
  const abort = new AbortController();
  const onSignal = () => {
    process.stderr.write('\nstopping: finishing requests in flight, then indexing what was fetched (Ctrl-C again to quit now)\n');
    abort.abort();
    process.once('SIGINT', () => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  const dense = await ctx.denseForIndexing().catch(async (err: unknown) => {
    await ctx.close();
    throw err;
  });
  try {
    const { crawl, index } = await crawlAndIndex(ctx, {
      seeds,
      signal: abort.signal,
      progress: new ProgressLine(),
      ...(dense.dense ? { dense: dense.dense } : {}),
    });
    const skipped = Object.entries(crawl.skipped.byReason)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ');
    const counts = await ctx.pages.counts();
    process.stdout.write(
      [
        `run ${crawl.runId}${crawl.aborted ? ' (stopped early)' : ''}`,
        `  fetched    ${crawl.fetched} new or changed, ${crawl.unchanged} unchanged, ${crawl.gone} gone`,
        `  skipped    ${crawl.skipped.total}${skipped ? ` (${skipped})` : ''}`,
        `  failed     ${crawl.failed}`,
        `  speed      ${crawl.pagesPerSecond.toFixed(1)} pages/s over ${(crawl.elapsedMs / 1000).toFixed(1)} s`,
        `  indexed    ${index.indexedPages} pages, ${index.passages} passages, ${index.removedPages} removed, ${index.failed} failed`,
        `  vectors    ${dense.dense ? `${index.embedded} passages embedded with ${dense.dense.embedder.model}` : `none (dense retrieval off: ${dense.off ?? 'not configured'})`}`,
        `  totals     ${counts.pages} pages, ${counts.passages} passages in ${cfg.data_dir}`,
        '',
      ].join('\n'),
    );
  } finally {
    process.removeListener('SIGINT', onSignal);
    await ctx.close();
  }
}
