import { sql, type Insertable, type Kysely } from 'kysely';
import type { Database, UsageEventsTable } from './schema.js';

/** What a usage series is broken down by. */
export type UsageDimension = 'operation' | 'depth' | 'mode' | 'environment';

export interface UsageFilter {
  /** One tenant's calls; undefined: every call (operators). */
  tenantId?: string;
  /** ISO timestamps, from inclusive, to exclusive. */
  from: string;
  to: string;
  environment?: 'live' | 'test';
  mode?: string;
}

export interface UsageBucket {
  /** YYYY-MM-DD (UTC). */
  day: string;
  /** The dimension's value: search/extract, a depth, a payment mode, live/test. */
  key: string;
  calls: number;
  credits: number;
  /** Sum of the money amounts in the asset's smallest units, a decimal string. */
  amount: string;
  asset: string;
}

const DAY = sql<string>`substr(created_at, 1, 10)`;

/** The usage_events table: one row per served paid call. Runs unchanged on SQLite and PostgreSQL. */
export class UsageRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: Insertable<UsageEventsTable>): Promise<void> {
    await this.db.insertInto('usage_events').values(row).execute();
  }

  /** Calls, credits and money per day and per value of `dimension`, oldest day first. */
  async daily(filter: UsageFilter, dimension: UsageDimension): Promise<UsageBucket[]> {
    const key =
      dimension === 'depth' ? sql<string>`cast(depth as text)` : dimension === 'operation' ? sql<string>`operation` : dimension === 'mode' ? sql<string>`mode` : sql<string>`environment`;
    let query = this.db
      .selectFrom('usage_events')
      .select([
        DAY.as('day'),
        key.as('key'),
        'asset',
        sql<number | string>`count(*)`.as('calls'),
        sql<number | string>`sum(credits)`.as('credits'),
        // Summed as 64-bit integers and returned as text, so no driver rounds it through a float.
        sql<string | null>`cast(sum(cast(amount as bigint)) as text)`.as('amount'),
      ])
      .where('created_at', '>=', filter.from)
      .where('created_at', '<', filter.to);
    if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
    if (filter.environment) query = query.where('environment', '=', filter.environment);
    if (filter.mode) query = query.where('mode', '=', filter.mode);
    if (dimension === 'depth') query = query.where('operation', '=', 'search');
    const rows = await query.groupBy([DAY, key, 'asset']).orderBy(DAY).orderBy(key).execute();
    return rows.map((row) => ({
      day: row.day,
      key: String(row.key),
      asset: row.asset,
      calls: Number(row.calls),
      credits: Number(row.credits),
      amount: String(row.amount ?? 0),
    }));
  }

  /**
   * Money that pay-per-call modes settled (the payments ledger: one row per settled payment, x402 and MPP), per day,
   * mode and asset. Settlements decided later by reconciliation count on the day they were booked.
   */
  async settled(from: string, to: string): Promise<UsageBucket[]> {
    const rows = await this.db
      .selectFrom('payment_ledger')
      .select([
        DAY.as('day'),
        'mode',
        'asset',
        sql<number | string>`count(*)`.as('calls'),
        sql<number | string>`sum(credits)`.as('credits'),
        // Summed as 64-bit integers and returned as text, so no driver rounds it through a float.
        sql<string | null>`cast(sum(cast(amount as bigint)) as text)`.as('amount'),
      ])
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .groupBy([DAY, 'mode', 'asset'])
      .orderBy(DAY)
      .execute();
    return rows.map((row) => ({ day: row.day, key: row.mode, asset: row.asset, calls: Number(row.calls), credits: Number(row.credits), amount: String(row.amount ?? 0) }));
  }
}
