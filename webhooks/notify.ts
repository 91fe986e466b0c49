import type { WebhookOutbox } from './outbox.js';

/** The events a crawl job's end sends. */
export const CRAWL_EVENT_TYPES = ['crawl.completed', 'crawl.failed', 'crawl.cancelled'] as const;
export type CrawlEventType = (typeof CRAWL_EVENT_TYPES)[number];

export interface WebhookNotice {
  /** The endpoint (`whe_...`) the tenant named. */
  endpointId: string;
  /** The tenant the endpoint must belong to: another tenant's endpoint is webhook_not_found. */
  tenantId: string;
  type: CrawlEventType;
  data: Record<string, unknown>;
  /**
   * What makes this notice one message: a second call with the same key (a runner retrying after a crash) queues
   * nothing. Default: `data.id` (the job's id) and the type, e.g. `job_123:crawl.completed`.
   */
  key?: string;
}

/**
 * Queues a crawl job's end for its tenant's endpoint, once: the message id is derived from the endpoint and the key,
 * so calling again after a crash sends nothing more (`created` false). The delivery timer of `notary serve` and
 * `notary crawl-worker` posts it.
 */
export async function notifyWebhook(outbox: WebhookOutbox, notice: WebhookNotice): Promise<{ id: string; created: boolean }> {
  const endpoint = await outbox.endpointOf(notice.endpointId, notice.tenantId);
  const jobId = notice.data['id'];
  const key = notice.key ?? (typeof jobId === 'string' ? `${jobId}:${notice.type}` : undefined);
  if (key === undefined) throw new Error('notifyWebhook needs a key, or data.id naming the job');
  return outbox.enqueue(endpoint, notice.type, notice.data, { key });
}
