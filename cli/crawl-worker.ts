import { setTimeout as sleep } from 'node:timers/promises';
import { normaliseUrl, type CrawlProgress, type CrawlRun } from '../crawler/index.js';
import type { NotaryConfig } from '../core/index.js';
import type { Runtime } from '../runtime/index.js';
import type { DenseRetrieval } from '../search/index.js';
import { crawlAndIndex } from './crawl.js';

type Seed = Awaited<ReturnType<Runtime['seeds']['list']>>[number];

/** How often a running crawl's counts are written for the status page, and its seed re-read (paused or removed stops it). */
const PROGRESS_MS = 2000;

/**
 * The crawler's settings for one seed: the config's, with the seed's own scope rules. A seed's include patterns
 * replace the config's (include patterns are alternatives, so adding them would widen); without any, the config's
 * hold. Excludes add up.
 */
export function crawlerConfigFor(base: NotaryConfig['crawler'], seed: Pick<Seed, 'options'>): NotaryConfig['crawler'] {
  return {
    ...base,
    ...(seed.options.scope !== null ? { scope: seed.options.scope } : {}),
    include: seed.options.include.length > 0 ? seed.options.include : base.include,
    exclude: [...base.exclude, ...seed.options.exclude],
    ...(seed.options.max_depth !== null ? { max_depth: seed.options.max_depth } : {}),
    ...(seed.options.max_pages !== null ? { max_pages: seed.options.max_pages } : {}),
  };
}

/** The newest stopped or interrupted crawl of this seed that was not resumed yet. */
async function resumableRun(ctx: Runtime, seed: Seed): Promise<CrawlRun | undefined> {
  return ctx.runs.latestResumable([normaliseUrl(seed.url.trim()) ?? seed.url]);
}

/**
 * Crawls one seed and indexes what was fetched; a crawl of it that was stopped (paused, removed, the server shut
 * down) or interrupted (its process died) goes on from its frontier instead of starting over. While it runs, its
 * counts are written to its crawl run every PROGRESS_MS (the operators' status page reads them), and the seed is
 * re-read: pausing or removing it stops the crawl.
 */
async function crawlSeed(ctx: Runtime, seed: Seed, dense: DenseRetrieval | undefined, signal: AbortSignal, log: (msg: string) => void): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let runId: string | undefined;
  let latest: (CrawlProgress & { phase?: string }) | undefined;
  const write = async () => {
    if (!runId || !latest) return;
    await ctx.runs.progress(runId, { ...latest, updated_at: new Date().toISOString() }).catch(() => {});
  };
  const ticker = setInterval(() => {
    void write();
    void ctx.seeds.get(seed.id).then((current) => {
      if (!stop.signal.aborted && (!current || current.paused)) {
        log(`crawl of ${seed.url} stopped: the seed was ${current ? 'paused' : 'removed'}`);
        stop.abort();
      }
    });
  }, PROGRESS_MS);
  const started = new Date().toISOString();
  let finished = true;
  try {
    // A shared frontier (crawler.shared_frontier) is never resumed by one worker: the workers join the running round
    // of the seed (leases that ran out are taken over in it); a round whose every worker died is followed by a new one
    // that skips fresh pages.
    const shared = ctx.config.crawler.shared_frontier;
    const resume = shared ? undefined : await resumableRun(ctx, seed);
    if (resume) log(`resuming crawl ${resume.id} of ${seed.url} (${resume.status ?? 'stopped'}) from its frontier`);
    const { crawl, index } = await crawlAndIndex(ctx, {
      ...(resume ? { resume } : { seeds: [seed.url], skipFresh: true, ...(seed.options.collection !== null ? { collection: seed.options.collection } : {}) }),
      ...(shared ? { shared: true } : {}),
      signal: stop.signal,
      quiet: true,
      crawler: crawlerConfigFor(ctx.config.crawler, seed),
      ...(dense ? { dense } : {}),
      onStart: (id) => {
        runId = id;
        void ctx.seeds.markStarted(seed.id, id);
      },
      onProgress: (p) => {
        latest = p;
      },
    });
    finished = crawl.status === 'finished';
    log(
      `crawl ${crawl.runId} of ${seed.url} ${crawl.status}: ${crawl.stored} stored (${crawl.fetched} new or changed, ${crawl.unchanged} unchanged, ` +
        `${crawl.fresh} fresh), ${crawl.duplicates} duplicates, ${crawl.failed} failed, ${crawl.queued} queued; ` +
        `indexed ${index.indexedPages} pages (${index.passages} passages, ${index.embedded} embedded)`,
    );
  } catch (err) {
    log(`crawl of ${seed.url} failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearInterval(ticker);
    signal.removeEventListener('abort', onAbort);
    // Due again after its recrawl interval, or when an operator asks (also while this crawl ran: the start is recorded).
    // A stopped crawl is due again at once (once its seed is resumed, or the server restarted), to go on from where it stopped.
    if (finished) {
      if (!signal.aborted) await ctx.seeds.markCrawled(seed.id, started);
    } else {
      await ctx.seeds.requestCrawl(seed.id);
    }
  }
}

/**
 * The serve-time crawl worker: the config's seeds are imported once into the seeds operators steer from the
 * dashboard; every `dashboard.seed_poll_s` the seeds that are due (never crawled, asked for, or past their recrawl
 * interval, and not paused) are crawled one after the other.
 */
export async function seedWorker(ctx: Runtime, dense: DenseRetrieval | undefined, signal: AbortSignal, log: (msg: string) => void): Promise<void> {
  const imported = await ctx.seeds.importConfigSeeds(ctx.config.crawler.seeds, Math.round(ctx.config.crawler.recrawl_after_hours * 60));
  if (imported > 0) log(`crawl worker: ${imported} seeds from the configuration added`);
  // A crawl whose process died (SIGKILL, a crash) is marked interrupted, and its seed is due to go on from its frontier.
  for (const id of await ctx.runs.markDead()) log(`crawl ${id} was interrupted (its process is gone): it goes on from its frontier`);
  for (const seed of await ctx.seeds.list()) {
    const resume = await resumableRun(ctx, seed);
    if (resume && resume.id === seed.last_run_id) await ctx.seeds.requestCrawl(seed.id);
  }
  while (!signal.aborted) {
    try {
      for (const seed of await ctx.seeds.due()) {
        if (signal.aborted) break;
        await crawlSeed(ctx, seed, dense, signal, log);
      }
    } catch (err) {
      log(`crawl worker: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      await sleep(ctx.config.dashboard.seed_poll_s * 1000, undefined, { signal });
    } catch {
      return;
    }
  }
}
