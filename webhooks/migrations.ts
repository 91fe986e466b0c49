import type { Kysely } from 'kysely';
import { registerMigrations, type MigrationFactory } from '../storage/index.js';

/** 0033_webhooks: endpoints, messages (the outbox) and their attempts (name kept once released). */
export const webhooksMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text')
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('disabled_at', 'text')
      .execute();
    await db.schema.createIndex('webhook_endpoints_tenant').on('webhook_endpoints').column('tenant_id').execute();
    await db.schema
      .createTable('webhook_messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('claim_token', 'text')
      .addColumn('claimed_until', 'text')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    await db.schema.createIndex('webhook_messages_due').on('webhook_messages').columns(['state', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_messages_endpoint').on('webhook_messages').columns(['endpoint_id', 'created_at']).execute();
    await db.schema
      .createTable('webhook_attempts')
      .addColumn('message_id', 'text', (c) => c.notNull().references('webhook_messages.id'))
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('error_code', 'text')
      .addColumn('error', 'text')
      .addPrimaryKeyConstraint('webhook_attempts_pk', ['message_id', 'attempt'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ['webhook_attempts', 'webhook_messages', 'webhook_endpoints']) await db.schema.dropTable(table).ifExists().execute();
  },
});

/** Adds the webhook tables to the migrations; call before the storage is opened (migrateToLatest). */
export function registerWebhookMigrations(): void {
  registerMigrations({ '0033_webhooks': webhooksMigration });
}
