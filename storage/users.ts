import { sql, type Kysely } from 'kysely';
import { nowIso } from './db.js';
import type { Database, SessionRow, SigninFailuresTable, Tenant, User, UserRole } from './schema.js';

export interface SessionWithUser {
  session: SessionRow;
  user: User | null;
}

/** Repository of users, dashboard sessions and failed sign-ins. Plain SQL that runs on SQLite and PostgreSQL. */
export class UsersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async getUser(id: string): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async getUserByEmail(email: string): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  async listUsers(filter: { tenantId?: string; role?: UserRole } = {}): Promise<User[]> {
    let query = this.db.selectFrom('users').selectAll();
    if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
    if (filter.role !== undefined) query = query.where('role', '=', filter.role);
    return query.orderBy('created_at').orderBy('id').execute();
  }

  /**
   * A member and its own new tenant (with the opening balance in the ledger), in one transaction: either both exist
   * afterwards or neither. Returns `email_taken` or `tenant_exists` when a unique name is in use.
   */
  async insertMemberWithTenant(input: {
    user: { id: string; email: string; password_hash: string };
    tenant: { id: string; name: string; tier: string; credits: number };
  }): Promise<{ ok: true; user: User; tenant: Tenant } | { ok: false; reason: 'email_taken' | 'tenant_exists' }> {
    return this.db.transaction().execute(async (trx) => {
      const now = nowIso();
      const tenant = await trx
        .insertInto('tenants')
        .values({ id: input.tenant.id, name: input.tenant.name, tier: input.tenant.tier, credits: input.tenant.credits, created_at: now })
        .onConflict((oc) => oc.column('name').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!tenant) return { ok: false, reason: 'tenant_exists' } as const;
      const user = await trx
        .insertInto('users')
        .values({ ...input.user, role: 'member', tenant_id: tenant.id, created_at: now, password_changed_at: now, last_signin_at: null })
        .onConflict((oc) => oc.column('email').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!user) {
        // Undo the tenant: the transaction must leave nothing behind.
        throw new EmailTaken();
      }
      if (input.tenant.credits > 0) {
        await trx
          .insertInto('credit_ledger')
          .values({
            tenant_id: tenant.id,
            delta: input.tenant.credits,
            balance_after: input.tenant.credits,
            reason: 'sign-up credits',
            request_id: null,
            key_id: null,
            idempotency_key: null,
            created_at: now,
          })
          .execute();
      }
      return { ok: true, user, tenant } as const;
    }).catch((err: unknown) => {
      if (err instanceof EmailTaken) return { ok: false, reason: 'email_taken' } as const;
      throw err;
    });
  }

  /** Returns undefined when the email is taken. */
  async insertUser(user: { id: string; email: string; password_hash: string; role: UserRole; tenant_id: string | null }): Promise<User | undefined> {
    const now = nowIso();
    return this.db
      .insertInto('users')
      .values({ ...user, created_at: now, password_changed_at: now, last_signin_at: null })
      .onConflict((oc) => oc.column('email').doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  async setPassword(userId: string, passwordHash: string): Promise<void> {
    await this.db.updateTable('users').set({ password_hash: passwordHash, password_changed_at: nowIso() }).where('id', '=', userId).execute();
  }

  async markSignedIn(userId: string, passwordHash?: string): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ last_signin_at: nowIso(), ...(passwordHash ? { password_hash: passwordHash } : {}) })
      .where('id', '=', userId)
      .execute();
  }

  // Sessions.

  async insertSession(row: SessionRow): Promise<void> {
    await this.db.insertInto('sessions').values(row).execute();
  }

  async findSession(id: string): Promise<SessionWithUser | undefined> {
    const session = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!session) return undefined;
    const user = session.user_id === null ? null : ((await this.getUser(session.user_id)) ?? null);
    return { session, user };
  }

  async touchSession(id: string, at: string): Promise<void> {
    await this.db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  /** Ends every session of a user, except one (the one that asked, after a password change). */
  async deleteUserSessions(userId: string, exceptId?: string): Promise<number> {
    let query = this.db.deleteFrom('sessions').where('user_id', '=', userId);
    if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async deleteExpiredSessions(now: string, idleBefore: string): Promise<void> {
    await this.db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<', idleBefore)]))
      .execute();
  }

  // Failed sign-ins.

  async failures(keys: readonly string[]): Promise<Array<Omit<SigninFailuresTable, never>>> {
    if (keys.length === 0) return [];
    return this.db.selectFrom('signin_failures').selectAll().where('key', 'in', [...keys]).execute();
  }

  async putFailure(row: SigninFailuresTable): Promise<void> {
    await this.db
      .insertInto('signin_failures')
      .values(row)
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          failures: row.failures,
          first_failure_at: row.first_failure_at,
          last_failure_at: row.last_failure_at,
          locked_until: row.locked_until,
        }),
      )
      .execute();
  }

  /**
   * Counts one attempt under `key` in one statement (an upsert), so concurrent attempts each get their own count: a
   * row whose window began before `cutoff` starts again at 1. Returns the count and when its window began.
   */
  async countAttempt(key: string, now: string, cutoff: string): Promise<{ count: number; since: string }> {
    const row = await this.db
      .insertInto('signin_failures')
      .values({ key, failures: 1, first_failure_at: now, last_failure_at: now, locked_until: null })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          failures: sql<number>`CASE WHEN signin_failures.first_failure_at < ${cutoff} THEN 1 ELSE signin_failures.failures + 1 END`,
          first_failure_at: sql<string>`CASE WHEN signin_failures.first_failure_at < ${cutoff} THEN ${now} ELSE signin_failures.first_failure_at END`,
          last_failure_at: now,
        }),
      )
      .returning(['failures', 'first_failure_at'])
      .executeTakeFirstOrThrow();
    return { count: Number(row.failures), since: row.first_failure_at };
  }

  async clearFailures(key: string): Promise<void> {
    await this.db.deleteFrom('signin_failures').where('key', '=', key).execute();
  }
}

class EmailTaken extends Error {}
