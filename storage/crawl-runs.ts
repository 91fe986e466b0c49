import type { Kysely, Selectable } from 'kysely';
import { newId } from '../core/ids.js';
import { nowIso } from './db.js';
import type { CrawlRunsTable, CrawlSkipsTable, Database } from './schema.js';

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

  async start(seeds: string[]): Promise<string> {
    const id = newId('run');
    await this.db
      .insertInto('crawl_runs')
      .values({ id, seeds: JSON.stringify(seeds), started_at: nowIso(), finished_at: null, stats: null })
      .execute();
    return id;
  }

  async finish(runId: string, stats: object): Promise<void> {
    await this.db
      .updateTable('crawl_runs')
      .set({ finished_at: nowIso(), stats: JSON.stringify(stats) })
      .where('id', '=', runId)
      .execute();
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
