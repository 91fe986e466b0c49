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
      if (this.dialect === 'postgres') {
        // The row must exist for FOR UPDATE to lock it.
        await trx.insertInto('rate_limit_buckets').values({ key, tat: 0 }).onConflict((oc) => oc.column('key').doNothing()).execute();
        const row = await sql<{ tat: number }>`select tat from rate_limit_buckets where key = ${key} for update`.execute(trx);
        const step = gcra(now, Number(row.rows[0]?.tat ?? 0) || undefined, tier);
        if (step.decision.allowed) await trx.updateTable('rate_limit_buckets').set({ tat: step.tat }).where('key', '=', key).execute();
        return step.decision;
      }
      // SQLite: the transaction holds the database's write lock from its start (BEGIN IMMEDIATE), so a read then one
      // upsert is as safe as the row lock, two statements a call instead of three.
      const row = await sql<{ tat: number }>`select tat from rate_limit_buckets where key = ${key}`.execute(trx);
      const step = gcra(now, Number(row.rows[0]?.tat ?? 0) || undefined, tier);
      if (step.decision.allowed) {
        await trx
          .insertInto('rate_limit_buckets')
          .values({ key, tat: step.tat })
          .onConflict((oc) => oc.column('key').doUpdateSet({ tat: step.tat }))
          .execute();
      }
      return step.decision;
    });
  }

  /** Deletes buckets that are full again (their TAT is past). */
  async sweep(): Promise<number> {
    const result = await this.db.deleteFrom('rate_limit_buckets').where('tat', '<=', this.now()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
