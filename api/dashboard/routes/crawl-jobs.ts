import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotaryError } from '../../../core/index.js';
import type { CrawlJobRow } from '../../../storage/index.js';
import { presentJob } from '../../routes/crawl-job.js';
import type { DashboardDeps } from '../deps.js';
import { requireMember, requireOperator } from '../session.js';

const idParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

/** Jobs a dashboard page lists at most. */
const LIST_LIMIT = 100;

function notFound(id: string): NotaryError {
  return new NotaryError('crawl_job_not_found', `No crawl job ${id} of yours`, { id });
}

/**
 * Crawl jobs in the dashboard (issue 33): a member sees and cancels their tenant's jobs (those it paid for);
 * an operator sees every payer's jobs, with the payer, and cancels any. Cancelling is the API's DELETE: the job shows
 * cancelled at once, its worker stops at its next progress write and it is charged for the pages stored by then.
 */
export async function crawlJobRoutes(app: FastifyInstance, { deps }: { deps: DashboardDeps }): Promise<void> {
  const memberTenant = (request: FastifyRequest) => requireMember(request).tenant_id;
  const operatorView = (row: CrawlJobRow) => ({ ...presentJob(row), payer: row.payer, tenant_id: row.tenant_id });

  app.get('/crawl-jobs', async (request) => ({ jobs: (await deps.crawlJobs.listByTenant(memberTenant(request), LIST_LIMIT)).map(presentJob) }));
  app.post('/crawl-jobs/:id/cancel', { schema: { params: idParam } }, async (request) => {
    const { id } = request.params as { id: string };
    const row = await deps.crawlJobs.cancelByTenant(id, memberTenant(request));
    if (!row) throw notFound(id);
    return { job: presentJob(row) };
  });

  app.get('/operator/crawl-jobs', async (request) => {
    requireOperator(request);
    return { jobs: (await deps.crawlJobs.recent(LIST_LIMIT)).map(operatorView) };
  });
  app.post('/operator/crawl-jobs/:id/cancel', { schema: { params: idParam } }, async (request) => {
    requireOperator(request);
    const { id } = request.params as { id: string };
    const row = await deps.crawlJobs.cancelAny(id);
    if (!row) throw notFound(id);
    return { job: operatorView(row) };
  });
}
