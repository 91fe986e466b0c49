import type { JSX } from 'preact';
import { api } from '../api';
import { ActionResult, Badge, ErrorNotice, Loading, Page, TableHead, formatDate, formatNumber, useAction, useLoad } from '../components';
import type { CrawlJobView } from '../types';

const STATUS_KIND: Record<CrawlJobView['status'], 'ok' | 'warn' | 'bad' | 'neutral'> = { queued: 'neutral', running: 'ok', completed: 'neutral', cancelled: 'warn', failed: 'bad' };

function progressText(job: CrawlJobView): string {
  const p = job.progress;
  const parts = [`${formatNumber(p.stored)} of ${formatNumber(job.max_pages)} pages stored`, `${formatNumber(p.queued)} queued`];
  if (p.failed > 0) parts.push(`${formatNumber(p.failed)} failed`);
  if (p.pages_per_minute !== null) parts.push(`${p.pages_per_minute} pages/min`);
  if (p.eta_seconds !== null && (job.status === 'running' || job.status === 'queued')) parts.push(`about ${Math.max(1, Math.round(p.eta_seconds / 60))} min left`);
  return parts.join(' · ');
}

/** The jobs table of both pages: a member's own jobs, or every payer's for operators (with the payer). */
function JobsTable(props: { path: string; operator: boolean }): JSX.Element {
  const jobs = useLoad(() => api<{ jobs: CrawlJobView[] }>('GET', props.path), [], 3000);
  const cancel = useAction();
  return (
    <>
      <ErrorNotice error={jobs.error} />
      {!jobs.data ? <Loading /> : null}
      {jobs.data && jobs.data.jobs.length === 0 ? <p class="muted">No crawl job yet: POST /v1/crawl submits one (see docs/crawl-jobs.md).</p> : null}
      {jobs.data && jobs.data.jobs.length > 0 ? (
        <div class="table-wrap" tabIndex={0}>
          <table data-testid="crawl-jobs-table" aria-live="polite" aria-busy={jobs.loading}>
            <TableHead columns={['Job', 'Seeds and collection', 'State', 'Progress', 'Credits']} actions />
            <tbody>
              {jobs.data.jobs.map((job) => (
                <tr key={job.id} data-job-status={job.status}>
                  <th scope="row" class="mono small">
                    {job.id}
                    {props.operator && job.payer ? <div class="muted">{job.payer}</div> : null}
                  </th>
                  <td class="small break">
                    {job.seeds.join(', ')} → {job.collection}
                    <div class="muted">{formatDate(job.created_at)}</div>
                  </td>
                  <td>
                    <Badge kind={STATUS_KIND[job.status]}>{job.status}</Badge>
                    {job.error ? <div class="small muted">{job.error.detail}</div> : null}
                  </td>
                  <td class="small">{progressText(job)}</td>
                  <td class="small">{job.credits_used !== null ? `${formatNumber(job.credits_used)} charged` : `${formatNumber(job.credits_quoted)} held`}</td>
                  <td class="actions">
                    {job.status === 'queued' || job.status === 'running' ? (
                      <button
                        type="button"
                        class="button-small button-danger"
                        onClick={() =>
                          void cancel.run(async () => {
                            await api('POST', `${props.path}/${job.id}/cancel`);
                            await jobs.reload();
                            return `Cancelled ${job.id}: charged for the pages stored so far.`;
                          })
                        }
                      >
                        Cancel<span class="visually-hidden"> {job.id}</span>
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <ActionResult action={cancel} />
    </>
  );
}

export function CrawlJobs(): JSX.Element {
  return (
    <Page title="Crawl jobs" intro="The crawls your keys asked for (POST /v1/crawl): progress updates live; a job is charged for the pages it stored.">
      <JobsTable path="/crawl-jobs" operator={false} />
    </Page>
  );
}

export function OperatorCrawlJobs(): JSX.Element {
  return (
    <Page title="Crawl jobs" intro="Every tenant's crawl jobs (POST /v1/crawl): stop any; it is charged for the pages stored by then.">
      <JobsTable path="/operator/crawl-jobs" operator={true} />
    </Page>
  );
}
