import type { Insertable, Kysely } from 'kysely';
import { QueryShape } from './query-shape.js';
import type { Database, UsageEventsTable } from './schema.js';

/** The usage_events columns a call's row gives (payments/usage.ts usageRow), in the order the shape takes them. */
const USAGE_COLUMNS = ['created_at', 'tenant_id', 'key_id', 'payer', 'mode', 'environment', 'operation', 'depth', 'render', 'credits', 'amount', 'asset', 'request_id'] as const;
type UsageColumn = (typeof USAGE_COLUMNS)[number];
type UsageValues = { [K in UsageColumn]: Insertable<UsageEventsTable>[K] };

/**
 * The statements of a paid call's debit (CreditLedgerRepository.debit), compiled once (query-shape.ts): the
 * Idempotency-Key's earlier debit, the conditional balance update, its ledger row and the call's usage row.
 */
export function debitShapes(db: Kysely<Database>) {
  const usage = new QueryShape(USAGE_COLUMNS.length, (...values: UsageValues[UsageColumn][]) =>
    db.insertInto('usage_events').values(Object.fromEntries(USAGE_COLUMNS.map((column, i) => [column, values[i]])) as UsageValues),
  );
  return {
    keyedDebit: new QueryShape(2, (tenantId: string, idempotencyKey: string) =>
      db.selectFrom('credit_ledger').select(['id', 'balance_after']).where('tenant_id', '=', tenantId).where('idempotency_key', '=', idempotencyKey),
    ),
    takeCredits: new QueryShape(2, (tenantId: string, credits: number) =>
      db
        .updateTable('tenants')
        .set((eb) => ({ credits: eb('credits', '-', credits) }))
        .where('id', '=', tenantId)
        .where('credits', '>=', credits)
        .returning('credits'),
    ),
    ledgerRow: new QueryShape(
      8,
      (tenantId: string, delta: number, balanceAfter: number, reason: string, requestId: string | null, keyId: string | null, idempotencyKey: string | null, createdAt: string) =>
        db
          .insertInto('credit_ledger')
          .values({
            tenant_id: tenantId,
            delta,
            balance_after: balanceAfter,
            reason,
            request_id: requestId,
            key_id: keyId,
            idempotency_key: idempotencyKey,
            created_at: createdAt,
          })
          .returning('id'),
    ),
    /**
     * The usage row as Kysely would insert it; a row that leaves a column out (undefined) is not this shape's, and
     * is inserted by Kysely itself (the column's default applies).
     */
    usageRow(row: Insertable<UsageEventsTable>): { shape: typeof usage; values: UsageValues[UsageColumn][] } | null {
      const values = USAGE_COLUMNS.map((column) => row[column]);
      if (values.some((value) => value === undefined) || Object.keys(row).length !== USAGE_COLUMNS.length) return null;
      return { shape: usage, values };
    },
  };
}

export type DebitShapes = ReturnType<typeof debitShapes>;
