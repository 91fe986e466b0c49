import type { Insertable, Kysely, Transaction } from 'kysely';
import { nowIso } from './db.js';
import { debitShapes, type DebitShapes } from './credit-ledger-shapes.js';
import type { Database, LedgerEntry, Tenant, UsageEventsTable } from './schema.js';

export type Executor = Kysely<Database> | Transaction<Database>;

export type DebitOutcome =
  /**
   * `already`: the tenant was debited for this Idempotency-Key before; nothing was taken now. `usageRecorded`: the
   * usage row given with the debit was written in its transaction.
   */
  | { ok: true; balance: number; ledgerId: number; already: boolean; usageRecorded?: boolean }
  | { ok: false; reason: 'insufficient_credits'; available: number }
  | { ok: false; reason: 'tenant_not_found' };

/** One party's part of a multi-party debit. */
export interface PartyDebit {
  tenantId: string;
  credits: number;
  /** Ledger wording for this party's row. */
  reason: string;
}

export type MultiDebitOutcome =
  /** `already`: these tenants were debited for this Idempotency-Key before; nothing was taken now. */
  | { ok: true; balances: Map<string, number>; already: boolean }
  | { ok: false; reason: 'insufficient_credits'; tenantId: string; required: number; available: number }
  | { ok: false; reason: 'tenant_not_found'; tenantId: string };

/** Thrown inside a transaction to roll it back, and turned into its outcome outside. */
class DebitRefused extends Error {
  constructor(readonly outcome: MultiDebitOutcome) {
    super('debit refused');
  }
}

export interface LedgerFilter {
  /** debit: calls paid; credit: grants. */
  kind?: 'debit' | 'credit';
  /** ISO timestamps, from inclusive, to exclusive. */
  from?: string;
  to?: string;
  keyId?: string;
  beforeId?: number;
  limit: number;
}

/**
 * The credit ledger: grants, debits (single-party and multi-party, each at most once per Idempotency-Key) and balances.
 * A balance change and its ledger row are always written in one transaction.
 */
export class CreditLedgerRepository {
  /** The debit's statements, compiled once (a paid call runs them every time). */
  private readonly shapes: DebitShapes;

  constructor(protected readonly db: Kysely<Database>) {
    this.shapes = debitShapes(db);
  }

  async getTenant(id: string, executor: Executor = this.db): Promise<Tenant | undefined> {
    return executor.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Grants a tier's monthly credits once per calendar month: the period moves forward and the balance grows in one
   * conditional statement, so two nodes (or two concurrent calls) never grant the same month twice. Returns the new
   * balance, or undefined when this month was granted already.
   */
  async grantMonthly(tenantId: string, period: string, credits: number, reason: string): Promise<number | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('tenants')
        .set((eb) => ({ grant_period: period, credits: eb('credits', '+', credits) }))
        .where('id', '=', tenantId)
        .where((eb) => eb.or([eb('grant_period', 'is', null), eb('grant_period', '<', period)]))
        .returning('credits')
        .executeTakeFirst();
      if (!updated) return undefined;
      if (credits > 0) {
        await trx
          .insertInto('credit_ledger')
          .values({ tenant_id: tenantId, delta: credits, balance_after: updated.credits, reason, request_id: null, key_id: null, idempotency_key: null, created_at: nowIso() })
          .execute();
      }
      return updated.credits;
    });
  }

  /** Ledger rows of a tenant, newest first, filtered; `beforeId` pages backwards. */
  async ledgerPage(tenantId: string, filter: LedgerFilter): Promise<LedgerEntry[]> {
    let query = this.db.selectFrom('credit_ledger').selectAll().where('tenant_id', '=', tenantId);
    if (filter.kind === 'debit') query = query.where('delta', '<', 0);
    if (filter.kind === 'credit') query = query.where('delta', '>', 0);
    if (filter.from) query = query.where('created_at', '>=', filter.from);
    if (filter.to) query = query.where('created_at', '<', filter.to);
    if (filter.keyId) query = query.where('key_id', '=', filter.keyId);
    if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
    return query.orderBy('id', 'desc').limit(filter.limit).execute();
  }

  async grant(tenantId: string, credits: number, reason: string): Promise<number | undefined> {
    return this.db.transaction().execute(async (trx) => this.addCredits(trx, tenantId, credits, reason, null, null));
  }

  /**
   * The balance check and the debit are one statement (`... WHERE credits >= ? RETURNING credits`), so concurrent
   * debits can never overdraw: on PostgreSQL the row lock makes a waiting UPDATE re-check the condition against the
   * committed balance; on SQLite the database-wide write lock serialises writers. A debit with an Idempotency-Key is
   * single-use: the ledger's unique (tenant, key) index refuses a second one, which then reports the first. `usage`,
   * the call's usage row, is written in the same transaction (one commit a paid call instead of two): the outcome
   * says whether it was (not when a concurrent debit with the same key won, which the caller then records itself).
   */
  async debit(entry: {
    tenantId: string;
    credits: number;
    reason: string;
    requestId: string | null;
    keyId: string | null;
    idempotencyKey?: string | null;
    usage?: Insertable<UsageEventsTable>;
  }): Promise<DebitOutcome> {
    const idempotencyKey = entry.idempotencyKey ?? null;
    try {
      return await this.debitOnce(entry, idempotencyKey);
    } catch (err) {
      // A concurrent debit with the same key committed first: report it (the unique index did its job).
      const previous = idempotencyKey === null ? undefined : await this.keyedDebit(this.db, entry.tenantId, idempotencyKey);
      if (previous) return previous;
      throw err;
    }
  }

  private async keyedDebit(executor: Executor, tenantId: string, idempotencyKey: string): Promise<DebitOutcome | undefined> {
    const row = await this.shapes.keyedDebit.first(executor, tenantId, idempotencyKey);
    return row ? { ok: true, balance: row.balance_after, ledgerId: row.id, already: true } : undefined;
  }

  private async debitOnce(
    entry: { tenantId: string; credits: number; reason: string; requestId: string | null; keyId: string | null; usage?: Insertable<UsageEventsTable> },
    idempotencyKey: string | null,
  ): Promise<DebitOutcome> {
    return this.db.transaction().execute(async (trx): Promise<DebitOutcome> => {
      const withUsage = async (outcome: DebitOutcome & { ok: true }): Promise<DebitOutcome> => {
        if (!entry.usage) return outcome;
        const usage = this.shapes.usageRow(entry.usage);
        if (usage) await usage.shape.run(trx, ...usage.values);
        else await trx.insertInto('usage_events').values(entry.usage).execute();
        return { ...outcome, usageRecorded: true };
      };
      if (idempotencyKey !== null) {
        const previous = await this.keyedDebit(trx, entry.tenantId, idempotencyKey);
        if (previous?.ok) return withUsage(previous);
        if (previous) return previous;
      }
      const updated = await this.shapes.takeCredits.first(trx, entry.tenantId, entry.credits);
      if (!updated) {
        const tenant = await this.getTenant(entry.tenantId, trx);
        return tenant ? { ok: false, reason: 'insufficient_credits', available: tenant.credits } : { ok: false, reason: 'tenant_not_found' };
      }
      const ledger = await this.shapes.ledgerRow.first(trx, entry.tenantId, -entry.credits, updated.credits, entry.reason, entry.requestId, entry.keyId, idempotencyKey, nowIso());
      if (!ledger) throw new Error('the ledger row was not written');
      return withUsage({ ok: true, balance: updated.credits, ledgerId: ledger.id, already: false });
    });
  }

  /**
   * Debits several tenants in ONE transaction, each by its own amount with its own ledger row, or none of them: the
   * first tenant short of credits rolls everything back (and is reported). `within` runs first inside the same
   * transaction (MPP claims its envelope's nonce there) and rolls it all back by throwing. Rows are updated in
   * tenant-id order, so two multi-party debits over the same tenants never deadlock on PostgreSQL. With an
   * Idempotency-Key the debit is single-use per tenant, like {@link debit}.
   */
  async debitMany(
    entry: { debits: readonly PartyDebit[]; requestId: string | null; idempotencyKey?: string | null },
    within?: (trx: Transaction<Database>) => Promise<void>,
  ): Promise<MultiDebitOutcome> {
    const tenantIds = entry.debits.map((d) => d.tenantId);
    if (new Set(tenantIds).size !== tenantIds.length) throw new Error('a multi-party debit names a tenant twice');
    const idempotencyKey = entry.idempotencyKey ?? null;
    try {
      return await this.db.transaction().execute(async (trx): Promise<MultiDebitOutcome> => {
        if (idempotencyKey !== null) {
          const previous = await this.keyedDebits(trx, tenantIds, idempotencyKey);
          if (previous) return previous;
        }
        if (within) await within(trx);
        const balances = new Map<string, number>();
        const ordered = [...entry.debits].sort((a, b) => (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0));
        for (const debit of ordered) {
          const updated = await trx
            .updateTable('tenants')
            .set((eb) => ({ credits: eb('credits', '-', debit.credits) }))
            .where('id', '=', debit.tenantId)
            .where('credits', '>=', debit.credits)
            .returning('credits')
            .executeTakeFirst();
          if (!updated) {
            const tenant = await this.getTenant(debit.tenantId, trx);
            throw new DebitRefused(
              tenant
                ? { ok: false, reason: 'insufficient_credits', tenantId: debit.tenantId, required: debit.credits, available: tenant.credits }
                : { ok: false, reason: 'tenant_not_found', tenantId: debit.tenantId },
            );
          }
          balances.set(debit.tenantId, updated.credits);
        }
        const createdAt = nowIso();
        await trx
          .insertInto('credit_ledger')
          .values(
            entry.debits.map((debit) => ({
              tenant_id: debit.tenantId,
              // 0 - x, not -x: a zero share is a 0 delta, never -0.
              delta: 0 - debit.credits,
              balance_after: balances.get(debit.tenantId) ?? 0,
              reason: debit.reason,
              request_id: entry.requestId,
              key_id: null,
              idempotency_key: idempotencyKey,
              created_at: createdAt,
            })),
          )
          .execute();
        return { ok: true, balances, already: false };
      });
    } catch (err) {
      // A concurrent call with the same key committed first (the unique index, or its nonce, stopped this one).
      const previous = idempotencyKey === null ? undefined : await this.keyedDebits(this.db, tenantIds, idempotencyKey);
      if (previous) return previous;
      if (err instanceof DebitRefused) return err.outcome;
      throw err;
    }
  }

  private async keyedDebits(executor: Executor, tenantIds: readonly string[], idempotencyKey: string): Promise<MultiDebitOutcome | undefined> {
    const rows = await executor
      .selectFrom('credit_ledger')
      .select(['tenant_id', 'balance_after'])
      .where('tenant_id', 'in', [...tenantIds])
      .where('idempotency_key', '=', idempotencyKey)
      .execute();
    if (rows.length === 0) return undefined;
    return { ok: true, balances: new Map(rows.map((r) => [r.tenant_id, r.balance_after])), already: true };
  }

  /**
   * Gives credits back to several tenants in ONE transaction, each with its own ledger row under `key` (a row of 0
   * credits too: it records that the settlement happened), or, when rows under `key` exist already (a settlement run
   * again after a crash, or by two processes at once: the unique (tenant, key) index lets one in), nothing: the rows of
   * the first are reported with `already`.
   */
  async creditOnce(entry: { credits: readonly PartyDebit[]; key: string; requestId: string | null; keyId?: string | null }): Promise<{ already: boolean; deltas: Map<string, number> }> {
    const tenantIds = entry.credits.map((c) => c.tenantId);
    if (new Set(tenantIds).size !== tenantIds.length) throw new Error('a multi-party credit names a tenant twice');
    const previous = async (executor: Executor) => {
      const rows = await executor.selectFrom('credit_ledger').select(['tenant_id', 'delta']).where('tenant_id', 'in', tenantIds).where('idempotency_key', '=', entry.key).execute();
      return rows.length > 0 ? { already: true, deltas: new Map(rows.map((r) => [r.tenant_id, r.delta])) } : undefined;
    };
    try {
      return await this.db.transaction().execute(async (trx) => {
        const done = await previous(trx);
        if (done) return done;
        const ordered = [...entry.credits].sort((a, b) => (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0));
        const createdAt = nowIso();
        for (const credit of ordered) {
          const updated = await trx
            .updateTable('tenants')
            .set((eb) => ({ credits: eb('credits', '+', credit.credits) }))
            .where('id', '=', credit.tenantId)
            .returning('credits')
            .executeTakeFirst();
          if (!updated) throw new Error(`no tenant ${credit.tenantId} to give credits back to`);
          await trx
            .insertInto('credit_ledger')
            .values({
              tenant_id: credit.tenantId,
              delta: credit.credits,
              balance_after: updated.credits,
              reason: credit.reason,
              request_id: entry.requestId,
              key_id: entry.keyId ?? null,
              idempotency_key: entry.key,
              created_at: createdAt,
            })
            .execute();
        }
        return { already: false, deltas: new Map(entry.credits.map((c) => [c.tenantId, c.credits])) };
      });
    } catch (err) {
      const done = await previous(this.db);
      if (done) return done;
      throw err;
    }
  }

  /** Whether any of these tenants has a debit recorded under this Idempotency-Key. */
  async hasKeyedDebits(tenantIds: readonly string[], idempotencyKey: string): Promise<boolean> {
    return (await this.keyedDebits(this.db, tenantIds, idempotencyKey)) !== undefined;
  }

  /** Balances of several tenants in one query (tenants that do not exist are absent). */
  async balances(tenantIds: readonly string[]): Promise<Map<string, number>> {
    if (tenantIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('tenants').select(['id', 'credits']).where('id', 'in', [...tenantIds]).execute();
    return new Map(rows.map((r) => [r.id, r.credits]));
  }

  /** Ledger rows of a tenant, oldest first. */
  async ledger(tenantId: string): Promise<LedgerEntry[]> {
    return this.db.selectFrom('credit_ledger').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
  }

  protected async addCredits(
    trx: Transaction<Database>,
    tenantId: string,
    credits: number,
    reason: string,
    requestId: string | null,
    keyId: string | null,
  ): Promise<number | undefined> {
    const updated = await trx
      .updateTable('tenants')
      .set((eb) => ({ credits: eb('credits', '+', credits) }))
      .where('id', '=', tenantId)
      .returning('credits')
      .executeTakeFirst();
    if (!updated) return undefined;
    await trx
      .insertInto('credit_ledger')
      .values({
        tenant_id: tenantId,
        delta: credits,
        balance_after: updated.credits,
        reason,
        request_id: requestId,
        key_id: keyId,
        idempotency_key: null,
        created_at: nowIso(),
      })
      .execute();
    return updated.credits;
  }
}
