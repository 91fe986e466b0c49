import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardClient } from './support/dashboard.js';
import { startDashboard, type DashboardHarness } from './support/dashboard.js';

interface JobView {
  id: string;
  status: string;
  payer?: string;
}

/**
 * Issue 33, item 4: the dashboard shows crawl jobs; a member sees and cancels their tenant's own, never another's; an
 * operator sees every tenant's, with the payer, and cancels any. No worker runs here: the jobs stay queued until
 * cancelled.
 */
describe('dashboard: crawl jobs', () => {
  let h: DashboardHarness;
  beforeAll(async () => {
    h = await startDashboard({ extract: { allow_private_networks: true }, default_tier: 'bulk' });
  });
  afterAll(async () => {
    await h?.close();
  });

  const submit = async (member: DashboardClient): Promise<string> => {
    const made = await member.post('keys', { name: 'crawler' });
    expect(made.status, made.text).toBe(201);
    const key = made.body['key'] as string;
    const res = await fetch(`${h.url}/v1/crawl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/docs/', max_pages: 5 }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(202);
    return (JSON.parse(text) as { id: string }).id;
  };

  it('a member sees and cancels their own jobs only; an operator sees and cancels any', async () => {
    const alice = await h.member('alice@jobs.test', 'Alice Co');
    const bob = await h.member('bob@jobs.test', 'Bob Co');
    const aliceJob = await submit(alice);
    const bobJob = await submit(bob);

    const mine = (await alice.get('crawl-jobs')).body['jobs'] as JobView[];
    expect(mine.map((j) => [j.id, j.status])).toEqual([[aliceJob, 'queued']]);
    expect(mine[0]?.payer).toBeUndefined();
    // Another tenant's job is as absent as an unknown one, and stays queued.
    const refused = await alice.post(`crawl-jobs/${bobJob}/cancel`);
    expect(refused.status).toBe(404);
    expect(refused.body['code']).toBe('crawl_job_not_found');
    expect(((await bob.get('crawl-jobs')).body['jobs'] as JobView[]).map((j) => j.status)).toEqual(['queued']);
    // Members may not use the operators' view.
    expect((await alice.get('operator/crawl-jobs')).status).toBe(403);

    const cancelled = await alice.post(`crawl-jobs/${aliceJob}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect((cancelled.body['job'] as JobView).status).toBe('cancelled');

    const operator = await h.operator();
    const all = (await operator.get('operator/crawl-jobs')).body['jobs'] as JobView[];
    expect(all.map((j) => j.id).sort()).toEqual([aliceJob, bobJob].sort());
    expect(all.every((j) => typeof j.payer === 'string' && j.payer.startsWith('tenant:'))).toBe(true);
    const stopped = await operator.post(`operator/crawl-jobs/${bobJob}/cancel`);
    expect(stopped.status, stopped.text).toBe(200);
    expect((stopped.body['job'] as JobView).status).toBe('cancelled');
    expect(((await bob.get('crawl-jobs')).body['jobs'] as JobView[]).map((j) => j.status)).toEqual(['cancelled']);
    expect((await operator.post('operator/crawl-jobs/crawl_nope/cancel')).status).toBe(404);
  });
});
