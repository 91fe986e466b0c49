import { sql, type Kysely } from 'kysely';
import { nowIso } from './db.js';
import type { Dialect } from './migrations.js';
import type { Database } from './schema.js';

export interface FrontierEntry {
  url: string;
  depth: number;
}

export interface LeasedEntry extends FrontierEntry {
  id: number;
}

export interface FrontierCounts {
  queued: number;
  leased: number;
  done: number;
  /** Done rows by outcome. */
  outcomes: Record<string, number>;
}

const CHUNK = 400;

/** Outcomes of done entries that stored a page (what max_pages counts). */
export const STORED_OUTCOMES = ['stored', 'unchanged', 'fresh'] as const;

/**
 * The crawl frontier in the database (table crawl_frontier): each URL a run admitted, queued → leased → done. A lease
 * names its owner and an expiry, and on PostgreSQL is taken with FOR UPDATE SKIP LOCKED, so several crawler
 * processes share one frontier (crawler.shared_frontier: workers join the running cycle, renew their leases, and take
 * over leases that ran out); otherwise one process owns a run, and a resumed run takes over the frontier of the run it
 * resumes.
 */
export class FrontierStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** Queues entries not yet in the run's frontier; returns how many were new. */
  async add(runId: string, entries: readonly FrontierEntry[]): Promise<number> {
    return this.insert(runId, entries, 'queued', null);
  }

  /** Records URLs as seen and done without fetching them (a redirect target, a canonical URL). */
  async addDone(runId: string, entries: readonly FrontierEntry[], outcome: string): Promise<number> {
    return this.insert(runId, entries, 'done', outcome);
  }

  private async insert(runId: string, entries: readonly FrontierEntry[], state: 'queued' | 'done', outcome: string | null): Promise<number> {
    let added = 0;
    const now = nowIso();
    for (let i = 0; i < entries.length; i += CHUNK) {
      const rows = entries.slice(i, i + CHUNK).map((e) => ({
        run_id: runId,
        url: e.url,
        depth: e.depth,
        state,
        outcome,
        lease_owner: null,
        lease_expires_at: null,
        added_at: now,
        finished_at: state === 'done' ? now : null,
      }));
      const result = await this.db
        .insertInto('crawl_frontier')
        .values(rows)
        .onConflict((oc) => oc.columns(['run_id', 'url']).doNothing())
        .executeTakeFirst();
      added += Number(result.numInsertedOrUpdatedRows ?? 0);
    }
    return added;
  }

  /**
   * Leases up to `limit` queued entries, oldest first, to `owner` until `leaseMs` from now. With `reclaimExpired`
   * (a frontier shared by several crawler processes) entries whose lease ran out are taken too: their owner died
   * or hung, and what it held is not lost.
   */
  async lease(runId: string, owner: string, limit: number, leaseMs: number, options: { reclaimExpired?: boolean; maxPages?: number } = {}): Promise<LeasedEntry[]> {
    if (options.maxPages !== undefined && this.dialect === 'postgres') return this.leaseWithinBudget(runId, owner, limit, leaseMs, options.maxPages);
    return this.leaseFrom(this.db, runId, owner, limit, leaseMs, options);
  }

  /**
   * A shared run's lease that reserves against max_pages: every entry leased (by any worker, its lease running or
   * not) counts as a page until it is done, and a done entry counts when it stored a page. New entries are leased
   * only up to what is left of `maxPages`, so the requests in flight across all workers never take the run past it;
   * an entry that ends without a page (an error, a duplicate) gives its place back. Leases that ran out are taken over
   * first (their place is already counted). One run's leases are taken one at a time (a transaction-level advisory
   * lock), so two workers never both take the last place.
   */
  private async leaseWithinBudget(runId: string, owner: string, limit: number, leaseMs: number, maxPages: number): Promise<LeasedEntry[]> {
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`notary-frontier-budget:${runId}`}))`.execute(trx);
      const reclaimed = await this.leaseFrom(trx, runId, owner, limit, leaseMs, { reclaimExpired: true, expiredOnly: true });
      const counted = await sql<{ n: string }>`
        select count(*) as n from crawl_frontier where run_id = ${runId}
          and (state = 'leased' or (state = 'done' and outcome in (${sql.join(STORED_OUTCOMES)})))`.execute(trx);
      const room = Math.min(limit - reclaimed.length, maxPages - Number(counted.rows[0]?.n ?? 0));
      const fresh = room > 0 ? await this.leaseFrom(trx, runId, owner, room, leaseMs, {}) : [];
      return [...reclaimed, ...fresh].sort((a, b) => a.id - b.id);
    });
  }

  private async leaseFrom(
    db: Kysely<Database>,
    runId: string,
    owner: string,
    limit: number,
    leaseMs: number,
    options: { reclaimExpired?: boolean; expiredOnly?: boolean },
  ): Promise<LeasedEntry[]> {
    const now = new Date();
    const expires = nowIso(new Date(now.getTime() + leaseMs));
    const lock = this.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const expired = sql`(state = 'leased' and lease_expires_at < ${nowIso(now)})`;
    const available = options.expiredOnly ? expired : options.reclaimExpired ? sql`(state = 'queued' or ${expired})` : sql`state = 'queued'`;
    const result = await sql<{ id: number; url: string; depth: number }>`
      update crawl_frontier set state = 'leased', lease_owner = ${owner}, lease_expires_at = ${expires}
      where id in (
        select id from crawl_frontier where run_id = ${runId} and ${available} order by id limit ${limit} ${lock}
      )
      returning id, url, depth`.execute(db);
    return result.rows.map((r) => ({ id: Number(r.id), url: r.url, depth: Number(r.depth) })).sort((a, b) => a.id - b.id);
  }

  /**
   * Extends the leases `owner` holds in the run to `leaseMs` from now (a live worker keeps what it holds): all of them,
   * or only those of `urls` (the requests a queue still holds, so a lease whose request is gone runs out).
   */
  async renew(runId: string, owner: string, leaseMs: number, urls?: readonly string[]): Promise<number> {
    const expires = nowIso(new Date(Date.now() + leaseMs));
    const mine = () =>
      this.db.updateTable('crawl_frontier').set({ lease_expires_at: expires }).where('run_id', '=', runId).where('state', '=', 'leased').where('lease_owner', '=', owner);
    if (urls === undefined) return Number((await mine().executeTakeFirst()).numUpdatedRows);
    let renewed = 0;
    for (let i = 0; i < urls.length; i += CHUNK) renewed += Number((await mine().where('url', 'in', urls.slice(i, i + CHUNK)).executeTakeFirst()).numUpdatedRows);
    return renewed;
  }

  /**
   * Work other processes may still add to: entries queued, or leased by another owner with a lease still running.
   * A worker of a shared frontier waits while this is above zero (the pages in flight elsewhere may link to more).
   */
  async outstanding(runId: string, owner: string): Promise<number> {
    const row = await this.db
      .selectFrom('crawl_frontier')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('run_id', '=', runId)
      .where((eb) =>
        eb.or([
          eb('state', '=', 'queued'),
          eb.and([eb('state', '=', 'leased'), eb('lease_owner', '!=', owner), eb('lease_expires_at', '>=', nowIso())]),
          eb.and([eb('state', '=', 'leased'), eb('lease_expires_at', '<', nowIso())]),
        ]),
      )
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Entries of the run leased by other owners (still running or not). */
  async leasedByOthers(runId: string, owner: string): Promise<number> {
    const row = await this.db
      .selectFrom('crawl_frontier')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('run_id', '=', runId)
      .where('state', '=', 'leased')
      .where('lease_owner', '!=', owner)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Marks an entry done with its outcome; `db` is a transaction to join (the page store write it completes). */
  async finish(runId: string, url: string, outcome: string, db: Kysely<Database> = this.db): Promise<void> {
    await db
      .updateTable('crawl_frontier')
      .set({ state: 'done', outcome, finished_at: nowIso(), lease_owner: null, lease_expires_at: null })
      .where('run_id', '=', runId)
      .where('url', '=', url)
      .execute();
  }

  /** Puts leased entries back in the queue (a run stopping with requests not started). */
  async release(runId: string, urls: readonly string[]): Promise<void> {
    for (let i = 0; i < urls.length; i += CHUNK) {
      await this.db
        .updateTable('crawl_frontier')
        .set({ state: 'queued', lease_owner: null, lease_expires_at: null })
        .where('run_id', '=', runId)
        .where('state', '=', 'leased')
        .where('url', 'in', urls.slice(i, i + CHUNK))
        .execute();
    }
  }

  /** Entries a run had leased (in flight when its process stopped). */
  async leased(runId: string): Promise<LeasedEntry[]> {
    const rows = await this.db.selectFrom('crawl_frontier').select(['id', 'url', 'depth']).where('run_id', '=', runId).where('state', '=', 'leased').orderBy('id').execute();
    return rows.map((r) => ({ id: Number(r.id), url: r.url, depth: Number(r.depth) }));
  }

  /** URLs not done yet: queued or leased. */
  async pending(runId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('crawl_frontier').select('url').where('run_id', '=', runId).where('state', '!=', 'done').orderBy('id').execute();
    return rows.map((r) => r.url);
  }

  /** Moves a stopped run's frontier to the run resuming it. */
  async adopt(fromRunId: string, toRunId: string): Promise<void> {
    await this.db.updateTable('crawl_frontier').set({ run_id: toRunId }).where('run_id', '=', fromRunId).execute();
  }

  /** Every URL in the run's frontier (what the run has already seen). */
  async urls(runId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('crawl_frontier').select('url').where('run_id', '=', runId).execute();
    return rows.map((r) => r.url);
  }

  async counts(runId: string): Promise<FrontierCounts> {
    const rows = await this.db
      .selectFrom('crawl_frontier')
      .select(['state', 'outcome', (eb) => eb.fn.countAll<number>().as('n')])
      .where('run_id', '=', runId)
      .groupBy(['state', 'outcome'])
      .execute();
    const counts: FrontierCounts = { queued: 0, leased: 0, done: 0, outcomes: {} };
    for (const row of rows) {
      const n = Number(row.n);
      if (row.state === 'queued') counts.queued += n;
      else if (row.state === 'leased') counts.leased += n;
      else {
        counts.done += n;
        const outcome = row.outcome ?? 'unknown';
        counts.outcomes[outcome] = (counts.outcomes[outcome] ?? 0) + n;
      }
    }
    return counts;
  }

  /** Drops a finished run's frontier: nothing is left to resume. */
  async clear(runId: string): Promise<void> {
    await this.db.deleteFrom('crawl_frontier').where('run_id', '=', runId).execute();
  }
}
