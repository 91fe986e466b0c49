import type { Kysely } from 'kysely';
import type { Database } from '../../storage/index.js';
import type { IdempotencyBegin, IdempotencyBeginInput, IdempotencyLease, IdempotencyStore, StoredResponse } from './idempotency.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const PURGE_EVERY = 500;
/** A takeover that loses a race reads the row again; more than a few rounds means something else is wrong. */
const MAX_ROUNDS = 4;

/**
 * Idempotency records in the service's database (SQLite or PostgreSQL), so a restart keeps them. The key is the
 * primary key: of concurrent first requests exactly one inserts the row and runs; the others read it.
 */
export class SqlIdempotencyStore implements IdempotencyStore {
  private begins = 0;

  constructor(private readonly db: Kysely<Database>) {}

  async begin(input: IdempotencyBeginInput): Promise<IdempotencyBegin> {
    if (++this.begins % PURGE_EVERY === 0) await this.purgeExpired(input.now);
    const now = iso(input.now);
    const leaseEnd = iso(input.now + input.leaseMs);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values({
          scope: input.scope,
          key: input.key,
          fingerprint: input.fingerprint,
          lease: input.requestId,
          status: null,
          headers: null,
          body: null,
          created_at: now,
          expires_at: leaseEnd,
        })
        .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
        .returning('lease')
        .executeTakeFirst();
      if (inserted) return { state: 'started', lease: input.requestId };

      const row = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('scope', '=', input.scope)
        .where('key', '=', input.key)
        .executeTakeFirst();
      if (!row) continue; // abandoned or purged in between: try the insert again
      if (row.expires_at > now) {
        if (row.fingerprint !== input.fingerprint) return { state: 'mismatch' };
        if (row.status === null || row.body === null) return { state: 'in_progress' };
        return { state: 'replay', response: { status: row.status, headers: JSON.parse(row.headers ?? '{}') as Record<string, string>, body: row.body } };
      }
      // Expired (a replay window that ended, or the lease of a call whose process is gone): take it over, unless
      // another request did so first.
      const taken = await this.db
        .updateTable('idempotency_keys')
        .set({ fingerprint: input.fingerprint, lease: input.requestId, status: null, headers: null, body: null, created_at: now, expires_at: leaseEnd })
        .where('scope', '=', input.scope)
        .where('key', '=', input.key)
        .where('lease', '=', row.lease)
        .where('expires_at', '<=', now)
        .returning('lease')
        .executeTakeFirst();
      if (taken) return { state: 'started', lease: input.requestId };
    }
    return { state: 'in_progress' };
  }

  async complete(lease: IdempotencyLease, response: StoredResponse, expiresAt: number): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ status: response.status, headers: JSON.stringify(response.headers), body: response.body, expires_at: iso(expiresAt) })
      .where('scope', '=', lease.scope)
      .where('key', '=', lease.key)
      .where('lease', '=', lease.lease)
      .where('status', 'is', null)
      .execute();
  }

  async abandon(lease: IdempotencyLease): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('scope', '=', lease.scope)
      .where('key', '=', lease.key)
      .where('lease', '=', lease.lease)
      .where('status', 'is', null)
      .execute();
  }

  /** Deletes records whose replay window (or lease) has ended. */
  async purgeExpired(now: number): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', iso(now)).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
