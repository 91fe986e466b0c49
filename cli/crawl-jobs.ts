import { setTimeout as sleep } from 'node:timers/promises';
import { isNotaryError } from '../core/index.js';
import type { CrawlProgress, CrawlRun } from '../crawler/index.js';
import { notifyCrawlJobEnded, processOwner, type CrawlJobRow, type CrawlJobStatus, type JobProgress, type Runtime } from '../runtime/index.js';
import type { DenseRetrieval } from '../search/index.js';
import { presentJob } from '../api/index.js';
import { crawlAndIndex } from './crawl.js';

/** How often a running job's progress is written, its lease renewed and its cancellation looked for. */
const PROGRESS_MS = 2000;

/** The end hook of `notary serve` and `notary crawl-worker`: the job's webhook, queued once (the timer posts it). */
export function webhookOnEnded(ctx: Runtime, log: (msg: string) => void): (job: CrawlJobRow) => Promise<void> {
  return async (job) => {
    try {
      if (await notifyCrawlJobEnded(ctx.webhooks, job, presentJob(job))) log(`crawl job ${job.id}: crawl.${job.status} queued for ${job.webhook ?? ''}`);
    } catch (err) {
      // An endpoint deleted since the job was made (webhook_not_found): the job's end stands, nothing is sent.
      log(`crawl job ${job.id}: its webhook was not queued: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
}

export interface CrawlJobWorkerOptions {
  /** Called once per job when it reaches its final state (completed, cancelled, failed) and is settled. */
  onEnded?: (job: CrawlJobRow) => void | Promise<void>;
  /** How often to look for a job when there is none (default 1 s). */
  pollMs?: number;
  log: (msg: string) => void;
}

/** The job's counts as the API shows them; a rate and a time left only once something was fetched. */
export function jobProgress(p: CrawlProgress): JobProgress {
  const rated = p.stored + p.failed > 0 && p.pagesPerSecond > 0;
  return {
    stored: p.stored,
    queued: p.queued,
    failed: p.failed,
    pages_per_minute: rated ? Math.round(p.pagesPerSecond * 60 * 10) / 10 : null,
    eta_seconds: rated && p.etaMs !== null ? Math.round(p.etaMs / 1000) : null,
  };
}

function runStored(run: CrawlRun | undefined): JobProgress | undefined {
  if (!run?.stats) return undefined;
  const stats = JSON.parse(run.stats) as Partial<CrawlProgress>;
  return { stored: stats.stored ?? 0, queued: stats.queued ?? 0, failed: stats.failed ?? 0, pages_per_minute: null, eta_seconds: null };
}

/**
 * The crawl-job worker of `notary serve` and `notary crawl-worker`: claims the oldest job not over (a lease, so two
 * workers never run one job and a dead worker's job is taken over), crawls and indexes it into its collection under
 * the strict address policy (resuming its crawl run's frontier after a restart), writes its progress every 2 s,
 * stops it when cancelled, and settles its payment hold once at its end for the pages it stored.
 */
export async function crawlJobWorker(ctx: Runtime, dense: DenseRetrieval | undefined, signal: AbortSignal, options: CrawlJobWorkerOptions): Promise<void> {
  const owner = processOwner();
  const leaseMs = ctx.config.crawler.lease_seconds * 1000;
  while (!signal.aborted) {
    let ran = false;
    try {
      const job = await ctx.crawlJobs.claim(owner, leaseMs);
      if (job) {
        ran = true;
        await runJob(ctx, job, { owner, leaseMs, dense, signal, options });
      }
    } catch (err) {
      options.log(`crawl jobs: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (ran) continue;
    try {
      await sleep(options.pollMs ?? 1000, undefined, { signal });
    } catch {
      return;
    }
  }
}

interface JobContext {
  owner: string;
  leaseMs: number;
  dense: DenseRetrieval | undefined;
  signal: AbortSignal;
  options: CrawlJobWorkerOptions;
}

async function runJob(ctx: Runtime, job: CrawlJobRow, jc: JobContext): Promise<void> {
  const { log } = jc.options;
  if (job.status === 'cancelled') {
    // Cancelled before it ran, or while a worker that is gone ran it: charged for what it stored until then.
    const progress = runStored(job.run_id ? await ctx.runs.get(job.run_id) : undefined) ?? { stored: job.stored, queued: 0, failed: job.failed, pages_per_minute: null, eta_seconds: null };
    await settle(ctx, job, 'cancelled', progress, jc.options);
    return;
  }
  let resume: CrawlRun | undefined;
  if (job.run_id) {
    await ctx.runs.markDead();
    const run = await ctx.runs.get(job.run_id);
    if (run?.status === 'finished') {
      // It crawled to the end and its worker died before settling: settle now.
      await settle(ctx, job, 'completed', runStored(run) ?? progressOf(job), jc.options);
      return;
    }
    if (run && (run.status === 'stopped' || run.status === 'interrupted')) resume = run;
    if (run?.status === 'running') {
      log(`crawl job ${job.id}: its run ${run.id} is still running elsewhere; left to its worker`);
      return;
    }
  }
  await ctx.crawlJobs.start(job.id, jc.owner);
  log(`crawl job ${job.id}: ${resume ? `resuming run ${resume.id}` : 'starting'} (${job.seeds}, max ${job.max_pages} pages)`);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  jc.signal.addEventListener('abort', onAbort, { once: true });
  let latest: CrawlProgress | undefined;
  let lost = false;
  let cancelled = false;
  const ticker = setInterval(() => {
    void ctx.crawlJobs.heartbeat(job.id, jc.owner, jc.leaseMs, latest ? jobProgress(latest) : null).then(
      (status) => {
        if (status === null) lost = true;
        if (status === 'cancelled') cancelled = true;
        if (lost || cancelled) stop.abort();
      },
      (err: unknown) => log(`crawl job ${job.id}: progress not written: ${err instanceof Error ? err.message : String(err)}`),
    );
  }, PROGRESS_MS);
  let outcome: { status: CrawlJobStatus; progress: JobProgress; error?: { code: string; detail: string } };
  try {
    const base = ctx.config.crawler;
    const { crawl } = await crawlAndIndex(ctx, {
      ...(resume ? { resume } : { seeds: JSON.parse(job.seeds) as string[], collection: job.collection_name }),
      maxPages: job.max_pages,
      signal: stop.signal,
      quiet: true,
      exemptSeedOrigins: false,
      allowPrivateNetworks: job.allow_private === 1 || ctx.config.extract.allow_private_networks,
      crawler: {
        ...base,
        scope: job.scope as 'path' | 'host' | 'domain',
        include: JSON.parse(job.include) as string[],
        exclude: [...base.exclude, ...(JSON.parse(job.exclude) as string[])],
        max_depth: job.max_depth,
        max_pages: job.max_pages,
      },
      ...(jc.dense ? { dense: jc.dense } : {}),
      onStart: (runId) => void ctx.crawlJobs.setRun(job.id, runId),
      onProgress: (p) => {
        latest = p;
      },
    });
    if (lost) {
      log(`crawl job ${job.id}: another worker took it over; stopped here`);
      return;
    }
    if (crawl.status === 'stopped' && !cancelled && jc.signal.aborted) {
      // This process is stopping: the job goes on from its frontier in the next worker that claims it.
      await ctx.crawlJobs.heartbeat(job.id, jc.owner, 0, jobProgress(crawl));
      log(`crawl job ${job.id}: stopped with the worker; it resumes from its frontier`);
      return;
    }
    const nothing = crawl.stored === 0 && crawl.failed > 0;
    outcome = {
      status: cancelled ? 'cancelled' : nothing ? 'failed' : 'completed',
      progress: jobProgress(crawl),
      ...(nothing && !cancelled ? { error: { code: 'nothing_stored', detail: `No page could be stored: ${crawl.failed} failed (${Object.entries(crawl.failures).map(([why, n]) => `${why} ${n ?? 0}`).join(', ')}); nothing was charged` } } : {}),
    };
  } catch (err) {
    if (lost) return;
    const detail = err instanceof Error ? err.message : String(err);
    outcome = { status: 'failed', progress: latest ? jobProgress(latest) : progressOf(job), error: { code: isNotaryError(err) ? err.code : 'internal_error', detail } };
    log(`crawl job ${job.id} failed: ${detail}`);
  } finally {
    clearInterval(ticker);
    jc.signal.removeEventListener('abort', onAbort);
  }
  await settle(ctx, job, outcome.status, outcome.progress, jc.options, outcome.error);
}

function progressOf(job: CrawlJobRow): JobProgress {
  return { stored: job.stored, queued: job.queued, failed: job.failed, pages_per_minute: null, eta_seconds: null };
}

/** Settles the job once (runtime/crawl-jobs.ts) and tells the end hook, once. */
async function settle(
  ctx: Runtime,
  job: CrawlJobRow,
  status: CrawlJobStatus,
  progress: JobProgress,
  options: CrawlJobWorkerOptions,
  error?: { code: string; detail: string },
): Promise<void> {
  const { ended, stored, creditsUsed, creditsHeld, already } = await ctx.settleCrawlJob(job, { status, progress, ...(error ? { error } : {}) });
  if (!ended) return;
  options.log(`crawl job ${job.id} ${ended.status}: ${stored} pages stored, ${creditsUsed} of ${creditsHeld} credits charged${already ? ' (settled before)' : ''}`);
  try {
    await options.onEnded?.(ended);
  } catch (err) {
    options.log(`crawl job ${job.id}: the end hook failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}
