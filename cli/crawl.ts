import { DEFAULT_COLLECTION_ID, isCollectionName, NotaryError } from '../core/index.js';
import type { NotaryConfig } from '../core/index.js';
import { normaliseUrl, runCrawl, type CrawlerConfig, type CrawlProgress, type CrawlRun, type CrawlSummary } from '../crawler/index.js';
import type { IndexerRunResult } from '../indexer/index.js';
import { Runtime, stderrLog } from '../runtime/index.js';
import type { DenseRetrieval } from '../search/index.js';
import { crawlProgressLine, formatDuration, ProgressLine, RateMeter } from './progress.js';

function byReason(counts: Partial<Record<string, number>>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([reason, n]) => `${reason} ${n}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** The crawl part of the summary `notary crawl` prints; every count of it adds up to `found`. */
export function crawlSummaryLines(crawl: CrawlSummary): string[] {
  const lines = [
    `run ${crawl.runId}${crawl.resumedFrom ? ` (resumes ${crawl.resumedFrom})` : ''}: ${crawl.status === 'stopped' ? 'STOPPED before the end: `notary crawl --resume` goes on from here' : 'finished'}`,
    `  ${crawl.scope}`,
    `  found      ${crawl.found} URLs = stored + duplicates + failed + skipped + queued`,
    `  stored     ${crawl.stored} of max ${crawl.maxPages} pages: ${crawl.fetched} new or changed, ${crawl.unchanged} unchanged` +
      (crawl.fresh > 0 ? `, ${crawl.fresh} fresh (checked within recrawl_after_hours)` : '') +
      (crawl.storedBefore > 0 ? `, ${crawl.storedBefore} stored before the resume` : ''),
    `  duplicates ${crawl.duplicates}`,
    `  failed     ${crawl.failed}${byReason(crawl.failures)}${crawl.gone > 0 ? `; ${crawl.gone} stored pages now gone` : ''}`,
    `  skipped    ${crawl.skipped.total}${byReason(crawl.skipped.byReason)}`,
  ];
  for (const o of crawl.outOfScope) lines.push(`               out of scope: ${o.count} under ${o.where} (${o.why})`);
  lines.push(`  queued     ${crawl.queued}${crawl.queued > 0 ? ' (left in the frontier for --resume)' : ''}`);
  lines.push(`  speed      ${crawl.pagesPerSecond.toFixed(1)} pages/s over ${formatDuration(crawl.elapsedMs)}`);
  return lines;
}

/** Crawl (or resume a crawl) then index, reporting progress; used by `notary crawl` and by the serve worker. */
export async function crawlAndIndex(
  ctx: Runtime,
  options: {
    seeds?: string[];
    skipFresh?: boolean;
    resume?: CrawlRun;
    maxPages?: number;
    signal?: AbortSignal;
    progress?: ProgressLine;
    quiet?: boolean;
    dense?: DenseRetrieval;
    /** Crawl on the frontier shared with the deployment's other crawler processes (crawler.shared_frontier). */
    shared?: boolean;
    /** The crawler's settings for this crawl (a seed's own scope rules); default: the config's. */
    crawler?: CrawlerConfig;
    /**
     * The collection (by name) the crawled pages join, made when new; default: the default collection (a resume keeps
     * the one it was started with).
     */
    collection?: string;
    /** False for seeds a tenant submitted (crawl jobs): the address policy alone decides, their origins are not exempt. */
    exemptSeedOrigins?: boolean;
    /** Private addresses reachable for this crawl (a crawl job of a tenant the operator allowed); default: the config's. */
    allowPrivateNetworks?: boolean;
    onStart?: (runId: string) => void;
    onProgress?: (p: CrawlProgress) => void;
  },
): Promise<{ crawl: CrawlSummary; index: IndexerRunResult }> {
  const progress = options.progress;
  const collection = await crawlCollection(ctx, options.collection, options.resume !== undefined);
  const crawl = await runCrawl({
    config: options.crawler ?? ctx.config.crawler,
    pages: ctx.pages,
    runs: ctx.runs,
    // The crawler's requests pass the same address policy as /v1/extract.
    addressPolicy: {
      allowPrivateNetworks: options.allowPrivateNetworks ?? ctx.config.extract.allow_private_networks,
      allowedPrivateRanges: ctx.config.extract.allowed_private_ranges,
    },
    frontier: ctx.frontier,
    ...(options.exemptSeedOrigins === false ? { exemptSeedOrigins: false } : {}),
    ...(collection !== undefined ? { collection } : {}),
    ...(options.seeds ? { seeds: options.seeds } : {}),
    ...(options.skipFresh ? { skipFresh: true } : {}),
    ...(options.resume ? { resume: options.resume } : {}),
    ...(options.maxPages !== undefined ? { maxPages: options.maxPages } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.shared ? { shared: { leaseMs: ctx.config.crawler.lease_seconds * 1000, hostSlots: ctx.hostSlots } } : {}),
    onProgress: (p) => {
      progress?.update(crawlProgressLine(p));
      options.onProgress?.(p);
    },
    ...(options.onStart ? { onStart: options.onStart } : {}),
    log: (level, msg) => {
      if (options.quiet && level !== 'warn') return;
      if (level === 'debug') return;
      const line = `${level === 'warn' ? 'WARNING: ' : ''}${msg}`;
      if (progress) progress.interrupt(line);
      else process.stderr.write(`${line}\n`);
    },
  });
  progress?.done(crawlProgressLine(crawl, true));
  const indexer = ctx.indexer(options.dense);
  const waiting = await ctx.pages.counts();
  const pagesMeter = new RateMeter(waiting.pending + waiting.gone);
  let embedMeter: RateMeter | null = null;
  // One indexer at a time across the deployment: two would each replace a page's passages and race on the index.
  const index = await ctx.exclusiveIndexing(() => indexer.runOnce({
    onProgress: (p) => {
      if (p.phase === 'embed') {
        embedMeter ??= new RateMeter(p.embedTotal);
        progress?.update(`embed: ${embedMeter.describe(p.embedded, 'passages')}`);
      } else {
        progress?.update(`index: ${pagesMeter.describe(p.indexedPages + p.removedPages + p.failed, 'pages')} · passages ${p.passages}`);
      }
    },
  }));
  const seconds = Math.max(index.ms / 1000, 1e-3);
  progress?.done(
    `index: pages ${index.indexedPages} · removed ${index.removedPages} · passages ${index.passages} · failed ${index.failed}` +
      ` · ${(index.passages / Math.max((index.ms - index.embedMs) / 1000, 1e-3)).toFixed(0)} passages/s` +
      (options.dense ? ` · embedded ${index.embedded} in ${formatDuration(index.embedMs)} (${(index.embedded / Math.max(index.embedMs / 1000, 1e-3)).toFixed(1)} passages/s)` : '') +
      ` · ${formatDuration(seconds * 1000)}`,
  );
  return { crawl, index };
}

/**
 * The id of the collection a crawl's pages join: the named one (made when new), else the default collection, except
 * for a resume, which keeps the one it was started with.
 */
async function crawlCollection(ctx: Runtime, name: string | undefined, resuming: boolean): Promise<string | undefined> {
  if (name === undefined) return resuming ? undefined : DEFAULT_COLLECTION_ID;
  if (!isCollectionName(name)) {
    throw new NotaryError('invalid_collection', `--collection "${name.slice(0, 80)}": a collection name is 1 to 64 lower-case letters, digits, "-" and "_", starting with a letter or digit`);
  }
  return (await ctx.collections.ensure(name)).id;
}

export async function crawlCommand(cfg: NotaryConfig, flags: { resume: boolean; seedsGiven: boolean; maxPagesGiven: boolean; collection?: string }): Promise<void> {
  const seeds = cfg.crawler.seeds;
  if (seeds.length === 0 && !flags.resume) {
    throw new NotaryError('invalid_seed', 'no seeds: pass URLs (notary crawl https://example.org/) or set crawler.seeds / NOTARY_SEEDS');
  }
  const ctx = await Runtime.open(cfg);
  let resume: CrawlRun | undefined;
  try {
    await ctx.runs.markDead();
    const resumable = await ctx.runs.latestResumable(flags.resume && !flags.seedsGiven ? undefined : seeds.map((s) => normaliseUrl(s.trim()) ?? s));
    if (flags.resume) {
      if (!resumable) {
        throw new NotaryError(
          'nothing_to_resume',
          `no stopped or interrupted crawl${flags.seedsGiven ? ` of ${seeds.join(', ')}` : ''} to resume in ${cfg.data_dir}; start one with notary crawl <url>`,
        );
      }
      resume = resumable;
    } else if (resumable) {
      stderrLog('info', `crawl ${resumable.id} of these seeds stopped before the end (${resumable.status}); notary crawl --resume would continue it. Starting a new crawl.`);
    }
  } catch (err) {
    await ctx.close();
    throw err;
  }
  const abort = new AbortController();
  const onSignal = (signal: string) => () => {
    process.stderr.write(`\n${signal}: finishing requests in flight, then indexing what was fetched; the rest stays queued for notary crawl --resume (Ctrl-C again to quit now)\n`);
    abort.abort();
    process.once('SIGINT', () => process.exit(130));
  };
  const onSigint = onSignal('SIGINT');
  const onSigterm = onSignal('SIGTERM');
  process.once('SIGINT', onSigint);
  process.once('SIGTERM', onSigterm);
  const dense = await ctx.denseForIndexing().catch(async (err: unknown) => {
    await ctx.close();
    throw err;
  });
  try {
    const { crawl, index } = await crawlAndIndex(ctx, {
      ...(resume ? { resume } : { seeds }),
      // A resume keeps the page budget it was started with unless --max-pages says otherwise.
      ...(resume && flags.maxPagesGiven ? { maxPages: cfg.crawler.max_pages } : {}),
      signal: abort.signal,
      ...(flags.collection !== undefined ? { collection: flags.collection } : {}),
      progress: new ProgressLine(),
      ...(dense.dense ? { dense: dense.dense } : {}),
    });
    const counts = await ctx.pages.counts();
    process.stdout.write(
      [
        ...crawlSummaryLines(crawl),
        `  indexed    ${index.indexedPages} pages, ${index.passages} passages, ${index.removedPages} removed, ${index.failed} failed`,
        `  vectors    ${dense.dense ? `${index.embedded} passages embedded with ${dense.dense.embedder.model}` : `none (dense retrieval off: ${dense.off ?? 'not configured'})`}`,
        `  totals     ${counts.pages} pages, ${counts.passages} passages in ${cfg.data_dir}`,
        '',
      ].join('\n'),
    );
  } finally {
    process.removeListener('SIGINT', onSigint);
    process.removeListener('SIGTERM', onSigterm);
    await ctx.close();
  }
}
