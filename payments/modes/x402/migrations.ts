import type { Kysely } from 'kysely';
import type { MigrationFactory } from '../../../storage/index.js';

/** 0015_x402_payments: x402 payments, the pay-per-call ledger and the service secrets (name kept: databases have it recorded). */
export const x402PaymentsMigration: MigrationFactory = ({ serialId }) => ({
  async up(db: Kysely<unknown>) {
    // One row per x402 payment presented for a call. The unique challenge and payment key make a payment and a
    // challenge single-use across concurrent requests and across both flows; a row is deleted when the call fails
    // before anything was charged, so the same payment can be retried. `state` records settlements whose
    // outcome is unknown (a settle that timed out) until reconciliation on chain decides them.
    await db.schema
      .createTable('x402_payments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('flow', 'text', (c) => c.notNull())
      .addColumn('challenge', 'text', (c) => c.notNull().unique())
      .addColumn('payment_key', 'text', (c) => c.notNull().unique())
      .addColumn('payer', 'text', (c) => c.notNull())
      .addColumn('network', 'text', (c) => c.notNull())
      .addColumn('asset', 'text', (c) => c.notNull())
      .addColumn('pay_to', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('credits', 'integer', (c) => c.notNull())
      .addColumn('auth_nonce', 'text')
      .addColumn('valid_before', 'text')
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('served', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('transaction_hash', 'text')
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('x402_payments_transaction').on('x402_payments').columns(['network', 'transaction_hash']).unique().execute();
    await db.schema.createIndex('x402_payments_state').on('x402_payments').columns(['state', 'updated_at']).execute();
    // The books of every settled pay-per-call charge, whatever the mode: one row per call, one per transaction.
    await db.schema
      .createTable('payment_ledger')
      .addColumn('id', 'integer', serialId)
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('payer', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('asset', 'text', (c) => c.notNull())
      .addColumn('network', 'text', (c) => c.notNull())
      .addColumn('pay_to', 'text')
      .addColumn('transaction_hash', 'text')
      .addColumn('credits', 'integer', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('reference', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('payment_ledger_transaction').on('payment_ledger').columns(['mode', 'network', 'transaction_hash']).unique().execute();
    await db.schema.createIndex('payment_ledger_reference').on('payment_ledger').columns(['mode', 'reference']).unique().execute();
    await db.schema.createIndex('payment_ledger_created').on('payment_ledger').columns(['created_at', 'id']).execute();
    await db.schema
      .createTable('service_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ['service_secrets', 'payment_ledger', 'x402_payments']) await db.schema.dropTable(table).ifExists().execute();
  },
});
