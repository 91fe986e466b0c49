import type { PaymentMode, HeldPayment, MoneyAmount, UsageRecorder } from '../payments/index.js';
import type { CrawlJobRow, CrawlJobStatus, CrawlJobStore, JobProgress } from '../storage/index.js';
import { notifyWebhook, type WebhookOutbox } from '../webhooks/index.js';

export type { CrawlJobRow, CrawlJobStatus, JobProgress } from '../storage/index.js';
export { processOwner } from '../storage/index.js';

export interface JobSettlement {
  /** The job as it ended, or undefined when it had ended before (nothing was done now). */
  ended: CrawlJobRow | undefined;
  stored: number;
  creditsUsed: number;
  creditsHeld: number;
  already: boolean;
}

/**
 * Settles a crawl job's hold for the pages it stored (the quote's per-page share of them; none: all of it given
 * back), once: the mode's settlement is single-use under the job's id, and the job ends once (a conditional update),
 * so a worker that dies between the two settles again for nothing and ends it.
 */
export async function settleCrawlJob(
  jobs: CrawlJobStore,
  modes: readonly PaymentMode[],
  job: CrawlJobRow,
  outcome: { status: CrawlJobStatus; progress: JobProgress; error?: { code: string; detail: string } },
  /** Where the charge is recorded for usage and revenue (once: by the settlement that ended the job). */
  usage?: { recorder: UsageRecorder; amountFor(credits: number): MoneyAmount },
): Promise<JobSettlement> {
  const held = JSON.parse(job.hold) as HeldPayment;
  const mode = modes.find((m) => m.name === held.mode);
  if (!mode?.settleHold) throw new Error(`crawl job ${job.id}: its payment mode ${held.mode} is not enabled, so its hold cannot be settled`);
  const stored = Math.min(outcome.progress.stored, job.max_pages);
  const credits = Math.floor((held.credits * stored) / job.max_pages);
  const settled = await mode.settleHold(held, { key: job.id, credits, reason: `crawl job ${job.id}, ${stored} of ${job.max_pages} pages`, requestId: job.request_id });
  const ended = await jobs.end(job.id, { status: outcome.status, creditsUsed: settled.creditsUsed, progress: { ...outcome.progress, stored }, ...(outcome.error ? { error: outcome.error } : {}) });
  if (ended && usage) {
    const amount = usage.amountFor(settled.creditsUsed);
    const keyId = held.record['key_id'];
    await usage.recorder
      .record({
        at: new Date().toISOString(),
        tenantId: job.tenant_id,
        keyId: typeof keyId === 'string' ? keyId : null,
        payer: job.payer,
        mode: held.mode,
        environment: held.test === true ? 'test' : 'live',
        operation: 'crawl',
        depth: null,
        render: null,
        credits: settled.creditsUsed,
        amount: held.test === true ? '0' : amount.atomic.toString(),
        asset: amount.asset,
        requestId: job.request_id,
      })
      .catch(() => undefined);
  }
  return { ended, stored, creditsUsed: settled.creditsUsed, creditsHeld: held.credits, already: settled.already };
}

/**
 * Queues a crawl job's end (crawl.completed, crawl.failed or crawl.cancelled, with the job as the API shows it) for
 * the webhook endpoint it named, once: a second call for the same job queues nothing. A job without an endpoint, or
 * paid without an account (no tenant owns an endpoint), sends nothing.
 */
export async function notifyCrawlJobEnded(webhooks: WebhookOutbox, job: CrawlJobRow, data: Record<string, unknown>): Promise<boolean> {
  if (job.webhook === null || job.tenant_id === null) return false;
  if (job.status !== 'completed' && job.status !== 'failed' && job.status !== 'cancelled') return false;
  const { created } = await notifyWebhook(webhooks, { endpointId: job.webhook, tenantId: job.tenant_id, type: `crawl.${job.status}`, data });
  return created;
}
