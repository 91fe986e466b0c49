import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { nowIso } from './db.js';
import type { Dialect } from './migrations.js';
import { ownerProcessGone } from './crawl-runs.js';
import type { CrawlJobsTable, Database } from './schema.js';

export type CrawlJobRow = Selectable<CrawlJobsTable>;

export type CrawlJobStatus = 'queued' | 'running' | 'completed' | 'cancelled' | 'failed';

export type NewCrawlJob = Omit<
  CrawlJobRow,
  'status' | 'credits_used' | 'run_id' | 'stored' | 'queued' | 'failed' | 'pages_per_minute' | 'eta_seconds' | 'error_code' | 'error_detail' | 'owner' | 'lease_until' | 'started_at' | 'ended_at' | 'settled_at'
>;

export interface JobProgress {
  stored: number;
  queued: number;
  failed: number;
  pages_per_minute: number | null;
  eta_seconds: number | null;
}

/**
 * The crawl_jobs table. A job is claimed by one worker at a time through its lease (owner + expiry, taken with a
 * compare-and-set, so two workers never both win); a lease that ran out, or whose owner process on this host is gone,
 * is taken over. A job is over for good once `settled_at` is set, which happens once (a conditional update).
 */
export class CrawlJobStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect = 'sqlite',
  ) {}

  /**
   * Creates the job only if the payer's jobs still leave room for it (`limits.check` throws otherwise), counted and
   * inserted as one step: two orders at once cannot both pass a tier's crawl_concurrent_jobs or crawl_pages_per_day.
   * SQLite's read-write transactions hold the write lock from their start (storage/db.ts); PostgreSQL takes a
   * transaction-level advisory lock per payer.
   */
  async createWithinLimits(job: NewCrawlJob, limits: { since: string; check(active: number, pagesSince: number): void }): Promise<CrawlJobRow> {
    return this.db.transaction().execute(async (trx) => {
      if (this.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`notary-crawl-jobs:${job.payer}`}))`.execute(trx);
      limits.check(await this.activeIn(trx, job.payer), await this.pagesSinceIn(trx, job.payer, limits.since));
      return this.create(job, trx);
    });
  }

  async create(job: NewCrawlJob, executor: Kysely<Database> | Transaction<Database> = this.db): Promise<CrawlJobRow> {
    const row: CrawlJobRow = {
      ...job,
      status: 'queued',
      credits_used: null,
      run_id: null,
      stored: 0,
      queued: 0,
      failed: 0,
      pages_per_minute: null,
      eta_seconds: null,
      error_code: null,
      error_detail: null,
      owner: null,
      lease_until: null,
      started_at: null,
      ended_at: null,
      settled_at: null,
    };
    await executor.insertInto('crawl_jobs').values(row).execute();
    return row;
  }

  async get(id: string): Promise<CrawlJobRow | undefined> {
    return this.db.selectFrom('crawl_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The job if it is this payer's; another payer's job is as absent as an unknown id. */
  async getFor(id: string, payer: string): Promise<CrawlJobRow | undefined> {
    return this.db.selectFrom('crawl_jobs').selectAll().where('id', '=', id).where('payer', '=', payer).executeTakeFirst();
  }

  /** A payer's jobs, newest first; `before` (a job id) pages backwards. */
  async list(payer: string, limit: number, before?: CrawlJobRow): Promise<CrawlJobRow[]> {
    let query = this.db.selectFrom('crawl_jobs').selectAll().where('payer', '=', payer);
    if (before) {
      query = query.where((eb) => eb.or([eb('created_at', '<', before.created_at), eb.and([eb('created_at', '=', before.created_at), eb('id', '<', before.id)])]));
    }
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Jobs of a payer not over yet (queued, running, or cancelled and still stopping). */
  async active(payer: string): Promise<number> {
    return this.activeIn(this.db, payer);
  }

  private async activeIn(executor: Kysely<Database> | Transaction<Database>, payer: string): Promise<number> {
    const row = await executor.selectFrom('crawl_jobs').select((eb) => eb.fn.countAll<number | string>().as('n')).where('payer', '=', payer).where('settled_at', 'is', null).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Pages a payer's jobs ordered since `since` may take: what ended ones stored, the budget of the others. */
  async pagesSince(payer: string, since: string): Promise<number> {
    return this.pagesSinceIn(this.db, payer, since);
  }

  private async pagesSinceIn(executor: Kysely<Database> | Transaction<Database>, payer: string, since: string): Promise<number> {
    const rows = await executor.selectFrom('crawl_jobs').select(['stored', 'max_pages', 'settled_at']).where('payer', '=', payer).where('created_at', '>=', since).execute();
    return rows.reduce((sum, row) => sum + (row.settled_at === null ? row.max_pages : row.stored), 0);
  }

  /**
   * Cancels a job that is not over: it shows as cancelled at once, and the worker running it stops at its next
   * progress write (a queued one is settled by the next worker that looks). Returns the job as it is now.
   */
  async cancel(id: string, payer: string): Promise<CrawlJobRow | undefined> {
    await this.db
      .updateTable('crawl_jobs')
      .set({ status: 'cancelled' })
      .where('id', '=', id)
      .where('payer', '=', payer)
      .where('settled_at', 'is', null)
      .where('status', 'in', ['queued', 'running'])
      .execute();
    return this.getFor(id, payer);
  }

  /** A tenant's jobs (whatever paid them), newest first, at most `limit`: its members' view. */
  async listByTenant(tenantId: string, limit: number): Promise<CrawlJobRow[]> {
    return this.db.selectFrom('crawl_jobs').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Cancels a tenant's job that is not over, as `cancel` does; undefined when it is not the tenant's. */
  async cancelByTenant(id: string, tenantId: string): Promise<CrawlJobRow | undefined> {
    const row = await this.get(id);
    return row && row.tenant_id === tenantId ? this.cancel(id, row.payer) : undefined;
  }

  /** Every payer's jobs, newest first (the operators' view), at most `limit`. */
  async recent(limit: number): Promise<CrawlJobRow[]> {
    return this.db.selectFrom('crawl_jobs').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Cancels any payer's job that is not over (an operator's stop), as `cancel` does; the job as it is now. */
  async cancelAny(id: string): Promise<CrawlJobRow | undefined> {
    const row = await this.get(id);
    return row ? this.cancel(id, row.payer) : undefined;
  }

  /**
   * Claims the oldest job not over whose lease is free (never taken, run out, or held by a process of this host that
   * is gone) for `owner`, for `leaseMs`. Null when there is none.
   */
  async claim(owner: string, leaseMs: number): Promise<CrawlJobRow | null> {
    const now = nowIso();
    const open = await this.db.selectFrom('crawl_jobs').selectAll().where('settled_at', 'is', null).orderBy('created_at').limit(50).execute();
    for (const job of open) {
      const free = job.lease_until === null || job.lease_until < now || ownerProcessGone(job.owner);
      if (!free) continue;
      let update = this.db
        .updateTable('crawl_jobs')
        .set({ owner, lease_until: nowIso(new Date(Date.now() + leaseMs)) })
        .where('id', '=', job.id)
        .where('settled_at', 'is', null);
      // Compare-and-set on the lease read: a worker that claimed it meanwhile changed it, and this update misses.
      update = job.lease_until === null ? update.where('lease_until', 'is', null) : update.where('lease_until', '=', job.lease_until);
      update = job.owner === null ? update.where('owner', 'is', null) : update.where('owner', '=', job.owner);
      const result = await update.executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return { ...job, owner };
    }
    return null;
  }

  /** A queued job starts: running from now (a job resumed after a restart keeps its first start). */
  async start(id: string, owner: string): Promise<void> {
    await this.db
      .updateTable('crawl_jobs')
      .set((eb) => ({ status: 'running', started_at: eb.fn.coalesce('started_at', eb.val(nowIso())) }))
      .where('id', '=', id)
      .where('owner', '=', owner)
      .where('status', '=', 'queued')
      .execute();
  }

  async setRun(id: string, runId: string): Promise<void> {
    await this.db.updateTable('crawl_jobs').set({ run_id: runId }).where('id', '=', id).execute();
  }

  /**
   * Writes progress and renews the lease; returns the job's status now (cancelled: stop), or null when the lease is
   * no longer this worker's (another took the job over: stop without settling).
   */
  async heartbeat(id: string, owner: string, leaseMs: number, progress: JobProgress | null): Promise<string | null> {
    const result = await this.db
      .updateTable('crawl_jobs')
      .set({ lease_until: nowIso(new Date(Date.now() + leaseMs)), ...(progress ?? {}) })
      .where('id', '=', id)
      .where('owner', '=', owner)
      .where('settled_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return null;
    return (await this.get(id))?.status ?? null;
  }

  /**
   * Ends a job for good, once: its final status (a cancelled job stays cancelled), what it was charged, its last
   * counts. Returns the row when this call ended it, undefined when it was over already.
   */
  async end(id: string, outcome: { status: CrawlJobStatus; creditsUsed: number; progress: JobProgress; error?: { code: string; detail: string } }): Promise<CrawlJobRow | undefined> {
    const now = nowIso();
    const result = await this.db
      .updateTable('crawl_jobs')
      .set((eb) => ({
        status: eb.case().when('status', '=', 'cancelled').then('cancelled').else(outcome.status).end(),
        credits_used: outcome.creditsUsed,
        ...outcome.progress,
        pages_per_minute: null,
        eta_seconds: null,
        error_code: outcome.error?.code ?? null,
        error_detail: outcome.error?.detail ?? null,
        ended_at: now,
        settled_at: now,
        owner: null,
        lease_until: null,
      }))
      .where('id', '=', id)
      .where('settled_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    return this.get(id);
  }
}
