import type { Kysely } from 'kysely';
import { nowIso } from '../../../storage/index.js';
import type { Database } from '../../../storage/index.js';
import type { PaymentLedgerRow, PaymentLedgerTable, X402PaymentRow, X402PaymentState } from './tables.js';

export type NewX402Payment = Omit<X402PaymentRow, 'served' | 'attempts' | 'last_error' | 'created_at' | 'updated_at'>;

export type ReserveOutcome = { reserved: true } | { reserved: false; existing: X402PaymentRow | undefined };

/** A payment_ledger row as a mode writes it (the id and the time are the database's). */
export type LedgerEntryInput = Omit<PaymentLedgerTable, 'id' | 'created_at'>;

/**
 * Repository for x402 payments and the payment ledger. Plain SQL through Kysely that runs unchanged on SQLite and
 * PostgreSQL. Every state change is a conditional UPDATE on the state it expects, so two processes never both move
 * one payment; a settlement and its ledger row are written in one transaction.
 */
export class X402PaymentsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the payment unless its challenge or its payment key is taken; then returns the row that holds it. */
  async reserve(row: NewX402Payment): Promise<ReserveOutcome> {
    const now = nowIso();
    const inserted = await this.db
      .insertInto('x402_payments')
      .values({ ...row, served: 0, attempts: 0, last_error: null, created_at: now, updated_at: now })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) return { reserved: true };
    const existing = await this.db
      .selectFrom('x402_payments')
      .selectAll()
      .where((eb) => eb.or([eb('payment_key', '=', row.payment_key), eb('challenge', '=', row.challenge)]))
      .orderBy('created_at')
      .executeTakeFirst();
    return { reserved: false, existing };
  }

  async get(id: string): Promise<X402PaymentRow | undefined> {
    return this.db.selectFrom('x402_payments').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async byTransaction(network: string, transaction: string): Promise<X402PaymentRow | undefined> {
    return this.db.selectFrom('x402_payments').selectAll().where('network', '=', network).where('transaction_hash', '=', transaction).executeTakeFirst();
  }

  /** Moves a payment from one state to another (and renews its lease) only if it is still in `from`. */
  async transition(
    id: string,
    from: readonly X402PaymentState[],
    to: X402PaymentState,
    changes: { leaseUntil?: string; requestId?: string; lastError?: string | null; transaction?: string | null; countAttempt?: boolean; leaseBefore?: string } = {},
  ): Promise<boolean> {
    let query = this.db
      .updateTable('x402_payments')
      .set((eb) => ({
        state: to,
        updated_at: nowIso(),
        ...(changes.leaseUntil !== undefined ? { lease_until: changes.leaseUntil } : {}),
        ...(changes.requestId !== undefined ? { request_id: changes.requestId } : {}),
        ...(changes.lastError !== undefined ? { last_error: changes.lastError } : {}),
        ...(changes.transaction !== undefined ? { transaction_hash: changes.transaction } : {}),
        ...(changes.countAttempt ? { attempts: eb('attempts', '+', 1) } : {}),
      }))
      .where('id', '=', id)
      .where('state', 'in', [...from]);
    if (changes.leaseBefore !== undefined) query = query.where('lease_until', '<=', changes.leaseBefore);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Deletes a payment that was never charged, so its challenge and authorization can be used again. */
  async release(id: string, from: readonly X402PaymentState[]): Promise<boolean> {
    const result = await this.db.deleteFrom('x402_payments').where('id', '=', id).where('state', 'in', [...from]).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /**
   * Records the charge: the payment becomes settled with its transaction and the ledger gets its row, in one
   * transaction. False when the payment was not in one of `from` (someone else settled or released it).
   */
  async settle(id: string, from: readonly X402PaymentState[], transaction: string, served: boolean, ledger: LedgerEntryInput): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('x402_payments')
        .set({ state: 'settled', transaction_hash: transaction, served: served ? 1 : 0, last_error: null, updated_at: nowIso() })
        .where('id', '=', id)
        .where('state', 'in', [...from])
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('payment_ledger')
        .values({ ...ledger, created_at: nowIso() })
        .onConflict((oc) => oc.doNothing())
        .execute();
      return true;
    });
  }

  /** Marks the one response a payment settled by reconciliation may still serve; false when it was served already. */
  async markServed(id: string): Promise<boolean> {
    const result = await this.db
      .updateTable('x402_payments')
      .set({ served: 1, updated_at: nowIso() })
      .where('id', '=', id)
      .where('state', '=', 'settled')
      .where('served', '=', 0)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Payments whose settlement outcome is unknown, and settles whose process died (lease over), oldest first. */
  async undecided(now: string, limit: number): Promise<X402PaymentRow[]> {
    return this.db
      .selectFrom('x402_payments')
      .selectAll()
      .where((eb) => eb.or([eb('state', '=', 'unknown'), eb.and([eb('state', '=', 'settling'), eb('lease_until', '<=', now)])]))
      .orderBy('updated_at')
      .limit(limit)
      .execute();
  }

  async ledger(options: { mode?: string; limit?: number } = {}): Promise<PaymentLedgerRow[]> {
    let query = this.db.selectFrom('payment_ledger').selectAll();
    if (options.mode) query = query.where('mode', '=', options.mode);
    return query
      .orderBy('created_at')
      .orderBy('id')
      .limit(options.limit ?? 1_000_000)
      .execute();
  }

  /** A named secret of the deployment, created with `make` on first use (the first writer wins a race). */
  async secret(name: string, make: () => string): Promise<string> {
    await this.db
      .insertInto('service_secrets')
      .values({ name, value: make(), created_at: nowIso() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await this.db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
    return row.value;
  }
}
