import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Per-host request spacing shared by every crawler process of a deployment (table crawl_host_slots, PostgreSQL):
 * `reserve` books the next start slot of a host `delayMs` after the previous booking, in one statement on the
 * database's clock, so workers on several machines keep to one spacing between them.
 */
export class SharedHostSlots {
  constructor(private readonly db: Kysely<Database>) {}

  /** Books a start slot for `host`; returns how many milliseconds from now it starts (0: now). */
  async reserve(host: string, delayMs: number): Promise<number> {
    if (delayMs <= 0) return 0;
    const now = sql`(extract(epoch from clock_timestamp()) * 1000)::float8`;
    const delay = sql`${delayMs}::float8`;
    const result = await sql<{ wait_ms: number }>`
      insert into crawl_host_slots (host, next_start_at) values (${host}, ${now} + ${delay})
      on conflict (host) do update set next_start_at = greatest(crawl_host_slots.next_start_at, ${now}) + ${delay}
      returning next_start_at - ${delay} - ${now} as wait_ms`.execute(this.db);
    return Math.max(0, Number(result.rows[0]?.wait_ms ?? 0));
  }
}
