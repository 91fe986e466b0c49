import type { Kysely } from 'kysely';
import type { MigrationFactory } from '../migrations.js';

export const accountsMigration: MigrationFactory = ({ serialId }) => ({
  async up(db: Kysely<unknown>) {
    // People who sign in to the dashboard: members of one tenant, or operators (no tenant).
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('tenant_id', 'text', (c) => c.references('tenants.id'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('password_changed_at', 'text', (c) => c.notNull())
      .addColumn('last_signin_at', 'text')
      .execute();
    await db.schema.createIndex('users_tenant').on('users').column('tenant_id').execute();
    // Dashboard sessions: the id is the SHA-256 of the cookie's token, so a database leak does not leak sessions.
    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('client_address', 'text')
      .addColumn('user_agent', 'text')
      .execute();
    await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
    await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
    // Failed sign-ins per email and per client address, for throttling; kept in the database so every node agrees.
    await db.schema
      .createTable('signin_failures')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('first_failure_at', 'text', (c) => c.notNull())
      .addColumn('last_failure_at', 'text', (c) => c.notNull())
      .addColumn('locked_until', 'text')
      .execute();
    // Operators' edits of prices and tiers (JSON), overriding the config file's defaults.
    await db.schema
      .createTable('settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('updated_by', 'text')
      .execute();
    // One row per paid call that was served (any payment mode, live or test): usage charts and revenue.
    await db.schema
      .createTable('usage_events')
      .addColumn('id', 'integer', serialId)
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('tenant_id', 'text')
      .addColumn('key_id', 'text')
      .addColumn('payer', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('depth', 'integer')
      .addColumn('render', 'text')
      .addColumn('credits', 'integer', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('asset', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('usage_events_tenant').on('usage_events').columns(['tenant_id', 'created_at']).execute();
    await db.schema.createIndex('usage_events_created').on('usage_events').columns(['created_at', 'mode']).execute();
    // Crawl seeds steered by operators (the config's seeds are imported once); `options` is JSON scope rules.
    await db.schema
      .createTable('crawl_seeds')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('url', 'text', (c) => c.notNull().unique())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('options', 'text', (c) => c.notNull())
      .addColumn('recrawl_minutes', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('removed_at', 'text')
      .addColumn('crawl_requested_at', 'text')
      .addColumn('last_run_id', 'text')
      .addColumn('last_crawled_at', 'text')
      .execute();
    await db.schema.alterTable('api_keys').addColumn('expires_at', 'text').execute();
    await db.schema.alterTable('api_keys').addColumn('scopes', 'text', (c) => c.notNull().defaultTo('search,extract')).execute();
    await db.schema.alterTable('api_keys').addColumn('environment', 'text', (c) => c.notNull().defaultTo('live')).execute();
    await db.schema.alterTable('tenants').addColumn('suspended_at', 'text').execute();
    await db.schema.alterTable('tenants').addColumn('features', 'text').execute();
    await db.schema.alterTable('tenants').addColumn('grant_period', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    for (const column of ['grant_period', 'features', 'suspended_at']) await db.schema.alterTable('tenants').dropColumn(column).execute();
    for (const column of ['environment', 'scopes', 'expires_at']) await db.schema.alterTable('api_keys').dropColumn(column).execute();
    for (const table of ['crawl_seeds', 'usage_events', 'settings', 'signin_failures', 'sessions', 'users']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
});
