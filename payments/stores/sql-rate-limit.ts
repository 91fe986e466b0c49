import { sql, type Kysely } from 'kysely';
import { QueryShape, type Database } from '../../storage/index.js';
import { allowedDecision, emissionIntervalMs, EPSILON_MS, gcra, type RateLimitDecision, type RateLimitStore, type RateLimitTier } from '../rate-limit.js';

/**
 * GCRA in the service's database (SQLite or PostgreSQL): one row per key holding its theoretical arrival time, read
 * under a row lock (PostgreSQL `FOR UPDATE`; SQLite serialises writers) and written in the same transaction, so nodes
 * sharing the database share the limits. The clock is each node's own (keep them in sync); Redis is the faster shared
 * store and uses one clock.
 */
export class SqlRateLimitStore implements RateLimitStore {
  /** SQLite's statements, compiled once (storage/query-shape.ts). */
  private readonly shapes: {
    read: QueryShape<[key: string], { tat: number }>;
    write: QueryShape<[key: string, tat: number], unknown>;
    step: QueryShape<[key: string, firstTat: number, now: number, interval: number, capacity: number, epsilon: number], { tat: number }>;
  };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres',
    private readonly now: () => number = () => Date.now(),
  ) {
    this.shapes = {
      read: new QueryShape(1, (key: string) => db.selectFrom('rate_limit_buckets').select('tat').where('key', '=', key)),
      write: new QueryShape(2, (key: string, tat: number) =>
        db
          .insertInto('rate_limit_buckets')
          .values({ key, tat })
          .onConflict((oc) => oc.column('key').doUpdateSet({ tat })),
      ),
      // gcra's allowed step as one upsert: an unseen key gets now + interval; a known one max(tat, now) + interval
      // where that is allowed, with the same operations in the same order (IEEE doubles in both), else no row.
      step: new QueryShape(6, (key: string, firstTat: number, now: number, interval: number, capacity: number, epsilon: number) =>
        db
          .insertInto('rate_limit_buckets')
          .values({ key, tat: firstTat })
          .onConflict((oc) =>
            oc
              .column('key')
              .doUpdateSet({ tat: sql<number>`max(tat, ${now}) + ${interval}` })
              .where(sql<number>`max(tat, ${now}) + ${interval} - ${capacity} - ${now}`, '<=', sql<number>`${epsilon}`),
          )
          .returning('tat'),
      ),
    };
  }

  async consume(key: string, tier: RateLimitTier): Promise<RateLimitDecision> {
    gcra(0, undefined, tier);
    if (this.dialect === 'sqlite') {
      // An allowed call (nearly every call) is one statement, atomic under SQLite's write lock like the transaction
      // below, without its BEGIN and COMMIT; a denied one writes nothing and is decided by the transaction.
      const now = this.now();
      const interval = emissionIntervalMs(tier);
      const stepped = await this.shapes.step.first(this.db, key, now + interval, now, interval, interval * tier.burst, EPSILON_MS);
      if (stepped) return allowedDecision(now, Number(stepped.tat), tier);
    }
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
      const row = await this.shapes.read.first(trx, key);
      const step = gcra(now, Number(row?.tat ?? 0) || undefined, tier);
      if (step.decision.allowed) await this.shapes.write.run(trx, key, step.tat);
      return step.decision;
    });
  }

  /** Deletes buckets that are full again (their TAT is past). */
  async sweep(): Promise<number> {
    const result = await this.db.deleteFrom('rate_limit_buckets').where('tat', '<=', this.now()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
