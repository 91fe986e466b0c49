import { sql, type Kysely } from 'kysely';
import type { Database } from '../../storage/index.js';
import { gcra, type RateLimitDecision, type RateLimitStore, type RateLimitTier } from '../rate-limit.js';

/**
 * GCRA in the service's database (SQLite or PostgreSQL): one row per key holding its theoretical arrival time, read
 * under a row lock (PostgreSQL `FOR UPDATE`; SQLite serialises writers) and written in the same transaction, so nodes
 * sharing the database share the limits. The clock is each node's own (keep them in sync); Redis is the faster shared
 * store and uses one clock.
 */
export class SqlRateLimitStore implements RateLimitStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres',
    private readonly now: () => number = () => Date.now(),
  ) {}

  async consume(key: string, tier: RateLimitTier): Promise<RateLimitDecision> {
    gcra(0, undefined, tier);
    return this.db.transaction().execute(async (trx) => {
      const now = this.now();
      await trx.insertInto('rate_limit_buckets').values({ key, tat: 0 }).onConflict((oc) => oc.column('key').doNothing()).execute();
      const lock = this.dialect === 'postgres' ? sql`for update` : sql``;
      const row = await sql<{ tat: number }>`select tat from rate_limit_buckets where key = ${key} ${lock}`.execute(trx);
      const stored = Number(row.rows[0]?.tat ?? 0);
      const step = gcra(now, stored > 0 ? stored : undefined, tier);
      if (step.decision.allowed) await trx.updateTable('rate_limit_buckets').set({ tat: step.tat }).where('key', '=', key).execute();
      return step.decision;
    });
  }

  /** Deletes buckets that are full again (their TAT is past). */
  async sweep(): Promise<number> {
    const result = await this.db.deleteFrom('rate_limit_buckets').where('tat', '<=', this.now()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
