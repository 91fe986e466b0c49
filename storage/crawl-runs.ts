import { hostname } from 'node:os';
import { sql, type Kysely, type Selectable } from 'kysely';
import { newId } from '../core/index.js';
import { nowIso } from './db.js';
import type { CrawlRunStatus, CrawlRunsTable, CrawlSkipsTable, Database } from './schema.js';

export type { CrawlRunStatus };

export type CrawlRun = Selectable<CrawlRunsTable>;
export type CrawlSkip = Selectable<CrawlSkipsTable>;

/** Why a URL was not stored; `http_error` and `fetch_error` are failures, the rest are deliberate skips. */
export type CrawlSkipReason =
  | 'robots_txt'
  | 'non_html'
  | 'out_of_scope'
  | 'max_depth'
  | 'max_pages'
  | 'too_large'
  | 'duplicate'
  | 'http_error'
  | 'fetch_error'
  /** The URL (or a redirect) resolves to an address the address policy refuses. */
  | 'blocked_address';

export interface NewCrawlSkip {
  url: string;
  reason: CrawlSkipReason;
  detail: string | null;
}

/** The crawl_runs and crawl_skips tables: one row per crawl, one row per URL a crawl did not store. */
export class CrawlRunStore {
  constructor(private readonly db: Kysely<Database>) {}

  async start(seeds: string[], options: { resumedFrom?: string; runOptions?: object } = {}): Promise<string> {
    const id = newId('run');
    const now = nowIso();
    await this.db
      .insertInto('crawl_runs')
      .values({
        id,
        seeds: JSON.stringify(seeds),
        started_at: now,
        finished_at: null,
        stats: null,
        status: 'running',
        resumed_from: options.resumedFrom ?? null,
        owner: processOwner(),
        heartbeat_at: now,
        options: options.runOptions ? JSON.stringify(options.runOptions) : null,
      })
      .execute();
    return id;
  }

  /**
   * A frontier shared by several crawler processes: the running shared run with these seeds whose heartbeat is fresh,
   * or a new one. PostgreSQL only (an advisory lock makes the check and the insert one step across processes).
   */
  async joinShared(seeds: string[], runOptions: object, staleMs = STALE_MS): Promise<CrawlRun> {
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${SHARED_RUN_LOCK})`.execute(trx);
      const live = await trx
        .selectFrom('crawl_runs')
        .selectAll()
        .where('status', '=', 'running')
        .where('seeds', '=', JSON.stringify(seeds))
        .where('heartbeat_at', '>=', nowIso(new Date(Date.now() - staleMs)))
        .orderBy('started_at', 'desc')
        .execute();
      const joined = live.find((run) => isShared(run.options));
      if (joined) return joined;
      const now = nowIso();
      const run = {
        id: newId('run'),
        seeds: JSON.stringify(seeds),
        started_at: now,
        finished_at: null,
        stats: null,
        status: 'running' as const,
        resumed_from: null,
        owner: processOwner(),
        heartbeat_at: now,
        options: JSON.stringify({ ...runOptions, shared: true }),
      };
      await trx.insertInto('crawl_runs').values(run).execute();
      return run;
    });
  }

  /** Tells other processes this run is alive. */
  async heartbeat(runId: string): Promise<void> {
    await this.db.updateTable('crawl_runs').set({ heartbeat_at: nowIso() }).where('id', '=', runId).where('status', '=', 'running').execute();
  }

  /** Ends a run: `finished` when its queue ran dry or its page budget was spent, `stopped` when a signal ended it. */
  async finish(runId: string, stats: object, status: 'finished' | 'stopped' = 'finished'): Promise<void> {
    await this.db
      .updateTable('crawl_runs')
      .set({ finished_at: nowIso(), stats: JSON.stringify(stats), status })
      .where('id', '=', runId)
      .execute();
  }

  /** The counts of a run still going (the serve-time worker writes them every few seconds; finish writes the last ones). */
  async progress(runId: string, stats: object): Promise<void> {
    await this.db.updateTable('crawl_runs').set({ stats: JSON.stringify(stats) }).where('id', '=', runId).where('finished_at', 'is', null).execute();
  }

  /** The newest runs, newest first. */
  async recent(limit: number): Promise<CrawlRun[]> {
    return this.db.selectFrom('crawl_runs').selectAll().orderBy('started_at', 'desc').limit(limit).execute();
  }

  /**
   * Marks runs whose process is gone as interrupted: a "running" run owned by a process of this host that no longer
   * exists, or whose heartbeat is older than `staleMs` (another host, or a hung process). Returns their ids.
   */
  async markDead(staleMs = STALE_MS): Promise<string[]> {
    const running = await this.db.selectFrom('crawl_runs').select(['id', 'owner', 'heartbeat_at', 'options']).where('status', '=', 'running').execute();
    // A shared run lives while any of its workers heartbeats: the process that started it may be long gone.
    const dead = running
      .filter((run) => (isShared(run.options) ? !heartbeatFresh(run.heartbeat_at, staleMs) : !isAlive(run.owner, run.heartbeat_at, staleMs)))
      .map((run) => run.id);
    if (dead.length > 0) {
      await this.db.updateTable('crawl_runs').set({ status: 'interrupted' }).where('id', 'in', dead).where('status', '=', 'running').execute();
    }
    return dead;
  }

  /**
   * The newest run that was stopped or interrupted and not resumed since, optionally with exactly these seeds (as
   * runCrawl records them: normalised, see crawler/url.ts normaliseUrl).
   */
  async latestResumable(seeds?: string[]): Promise<CrawlRun | undefined> {
    const resumed = this.db.selectFrom('crawl_runs as later').select('later.resumed_from').where('later.resumed_from', 'is not', null);
    let query = this.db
      .selectFrom('crawl_runs')
      .selectAll()
      .where('status', 'in', ['stopped', 'interrupted'])
      .where('id', 'not in', resumed.$narrowType<{ resumed_from: string }>());
    if (seeds) query = query.where('seeds', '=', JSON.stringify(seeds));
    return query.orderBy('started_at', 'desc').limit(1).executeTakeFirst();
  }

  async addSkips(runId: string, skips: NewCrawlSkip[]): Promise<void> {
    if (skips.length === 0) return;
    const createdAt = nowIso();
    // Chunked so a large batch stays under SQLite's bound-parameter limit.
    for (let i = 0; i < skips.length; i += 500) {
      await this.db
        .insertInto('crawl_skips')
        .values(skips.slice(i, i + 500).map((s) => ({ run_id: runId, url: s.url, reason: s.reason, detail: s.detail, created_at: createdAt })))
        .execute();
    }
  }

  async get(runId: string): Promise<CrawlRun | undefined> {
    return this.db.selectFrom('crawl_runs').selectAll().where('id', '=', runId).executeTakeFirst();
  }

  async latest(): Promise<CrawlRun | undefined> {
    return this.db.selectFrom('crawl_runs').selectAll().orderBy('started_at', 'desc').limit(1).executeTakeFirst();
  }

  async skips(runId: string, reason?: CrawlSkipReason): Promise<CrawlSkip[]> {
    let query = this.db.selectFrom('crawl_skips').selectAll().where('run_id', '=', runId);
    if (reason) query = query.where('reason', '=', reason);
    return query.orderBy('id').execute();
  }
}

const STALE_MS = 120_000;
/** pg_advisory_xact_lock key of joining a shared crawl run ("notary" + issue 19). */
const SHARED_RUN_LOCK = 0x6e6f7419;

function isShared(options: string | null): boolean {
  if (!options) return false;
  try {
    return (JSON.parse(options) as { shared?: unknown }).shared === true;
  } catch {
    return false;
  }
}

function heartbeatFresh(heartbeatAt: string | null, staleMs: number): boolean {
  return heartbeatAt !== null && Date.now() - Date.parse(heartbeatAt) < staleMs;
}

/** `<hostname>:<pid>` of this process. */
export function processOwner(): string {
  return `${hostname()}:${process.pid}`;
}

/** Whether `owner` (host:pid) names a process of this host that no longer exists. */
export function ownerProcessGone(owner: string | null): boolean {
  const [host, pidText] = (owner ?? '').split(':');
  if (host !== hostname() || !pidText) return false;
  const pid = Number(pidText);
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // ESRCH: no such process. EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

function isAlive(owner: string | null, heartbeatAt: string | null, staleMs: number): boolean {
  const [host, pidText] = (owner ?? '').split(':');
  if (host === hostname() && pidText) {
    const pid = Number(pidText);
    if (pid === process.pid) return true;
    try {
      process.kill(pid, 0);
    } catch (err) {
      // ESRCH: no such process. EPERM: it exists but belongs to another user.
      if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
    }
  }
  return heartbeatAt !== null && Date.now() - Date.parse(heartbeatAt) < staleMs;
}
