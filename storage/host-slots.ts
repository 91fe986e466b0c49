import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The database's clock in epoch milliseconds (every process of a deployment reads the same clock). */
const NOW_MS = sql`(extract(epoch from clock_timestamp()) * 1000)::float8`;
/** How long a worker waits before asking again for a concurrency slot of a busy host. */
const POLL_MS = 40;

/**
 * Per-host politeness shared by every crawler process of a deployment (PostgreSQL):
 * - spacing (table crawl_host_slots): `reserve` books the next start slot of a host `delayMs` after the previous
 *   booking, in one statement on the database's clock, so workers on several machines keep to one spacing;
 * - concurrency (table crawl_host_active): `acquire` takes one of a host's `limit` slots for the length of a request,
 *   so at most `limit` requests to a host are in flight across all workers. A held slot is renewed while held; the
 *   slots of a worker that died run out after `ttlMs`.
 */
export class SharedHostSlots {
  constructor(private readonly db: Kysely<Database>) {}

  /** Books a start slot for `host`; returns how many milliseconds from now it starts (0: now). */
  async reserve(host: string, delayMs: number): Promise<number> {
    if (delayMs <= 0) return 0;
    const delay = sql`${delayMs}::float8`;
    const result = await sql<{ wait_ms: number }>`
      insert into crawl_host_slots (host, next_start_at) values (${host}, ${NOW_MS} + ${delay})
      on conflict (host) do update set next_start_at = greatest(crawl_host_slots.next_start_at, ${NOW_MS}) + ${delay}
      returning next_start_at - ${delay} - ${NOW_MS} as wait_ms`.execute(this.db);
    return Math.max(0, Number(result.rows[0]?.wait_ms ?? 0));
  }

  /**
   * Takes a free concurrency slot of `host` (one of `limit`) for `owner`, waiting while all are held by live holders.
   * Returns the release (idempotent). A slot whose holder stopped renewing it (`ttlMs`) counts as free.
   */
  async acquire(host: string, limit: number, owner: string, options: { ttlMs: number; signal?: AbortSignal | undefined }): Promise<() => Promise<void>> {
    const ttl = sql`${options.ttlMs}::float8`;
    for (;;) {
      options.signal?.throwIfAborted();
      // The lowest slot free now; two workers choosing the same one meet in the insert, and the loser's conditional
      // update finds the slot live and returns nothing (it asks again).
      const result = await sql<{ slot: number }>`
        with free as (
          select s from generate_series(0, ${limit - 1}::int) s
          where not exists (select 1 from crawl_host_active a where a.host = ${host} and a.slot = s and a.expires_at >= ${NOW_MS})
          order by s limit 1)
        insert into crawl_host_active (host, slot, owner, expires_at) select ${host}, s, ${owner}, ${NOW_MS} + ${ttl} from free
        on conflict (host, slot) do update set owner = excluded.owner, expires_at = excluded.expires_at
          where crawl_host_active.expires_at < ${NOW_MS}
        returning slot`.execute(this.db);
      const slot = result.rows[0]?.slot;
      if (slot !== undefined) return this.held(host, Number(slot), owner, options.ttlMs);
      await sleep(POLL_MS + Math.random() * POLL_MS, undefined, { signal: options.signal });
    }
  }

  private held(host: string, slot: number, owner: string, ttlMs: number): () => Promise<void> {
    const mine = () => this.db.updateTable('crawl_host_active').where('host', '=', host).where('slot', '=', slot).where('owner', '=', owner);
    const renew = setInterval(() => void mine().set({ expires_at: sql`${NOW_MS} + ${ttlMs}::float8` }).execute().catch(() => {}), Math.max(50, ttlMs / 3));
    renew.unref();
    let released: Promise<void> | undefined;
    return () => {
      released ??= (async () => {
        clearInterval(renew);
        await this.db.deleteFrom('crawl_host_active').where('host', '=', host).where('slot', '=', slot).where('owner', '=', owner).execute();
      })();
      return released;
    };
  }
}
