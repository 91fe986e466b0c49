import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import { sql } from 'kysely';
import { accountsMigration } from './migrations/accounts.js';
import { collectionSettingsMigration, collectionsMigration, collectionsPublicMigration, tenantCollectionsMigration } from './migrations/collections.js';
import { crawlJobsMigration, tenantPrivateNetworksMigration } from './migrations/crawl-jobs.js';
import { crawlFrontierMigration, crawlHostActiveMigration, crawlHostSlotsMigration } from './migrations/crawl.js';

export type Dialect = 'sqlite' | 'postgres';

/** What a plug-in's migration is built from: the engine, and how it spells an auto-increment key. */
export interface MigrationHelpers {
  dialect: Dialect;
  serialId: (col: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
}

/** A plug-in's migration, for either engine. */
export type MigrationFactory = (helpers: MigrationHelpers) => Migration;

const pluginMigrations = new Map<string, MigrationFactory>();

/**
 * Adds a plug-in's migrations (by name; again with the same ones is a no-op). A name is recorded in the database once
 * run, so it never changes; names of different plug-ins must differ.
 */
export function registerMigrations(table: Readonly<Record<string, MigrationFactory>>): void {
  for (const [name, factory] of Object.entries(table)) {
    const known = pluginMigrations.get(name);
    if (known && known !== factory) throw new Error(`migration ${name} is registered twice`);
    pluginMigrations.set(name, factory);
  }
}

/**
 * One set of migrations for both engines (the shared ones here, the registered plug-ins' beside them); the only
 * difference is how an auto-increment key is spelled.
 */
export function migrationProvider(dialect: Dialect): MigrationProvider {
  const serialId = (col: ColumnDefinitionBuilder): ColumnDefinitionBuilder =>
    dialect === 'postgres' ? col.primaryKey().generatedByDefaultAsIdentity() : col.primaryKey().autoIncrement();

  const initial: Migration = {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('pages')
        .addColumn('id', 'integer', serialId)
        .addColumn('url', 'text', (c) => c.notNull().unique())
        .addColumn('final_url', 'text', (c) => c.notNull())
        .addColumn('host', 'text', (c) => c.notNull())
        .addColumn('http_status', 'integer', (c) => c.notNull())
        .addColumn('content_type', 'text')
        .addColumn('etag', 'text')
        .addColumn('last_modified', 'text')
        .addColumn('content_hash', 'text')
        .addColumn('title', 'text')
        .addColumn('html', 'text')
        .addColumn('crawl_depth', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('indexed_hash', 'text')
        .addColumn('fetched_at', 'text', (c) => c.notNull())
        .addColumn('checked_at', 'text', (c) => c.notNull())
        .addColumn('indexed_at', 'text')
        .execute();
      await db.schema.createIndex('pages_content_hash').on('pages').column('content_hash').execute();
      await db.schema.createIndex('pages_state').on('pages').columns(['state', 'checked_at']).execute();

      await db.schema
        .createTable('passages')
        .addColumn('id', 'integer', serialId)
        .addColumn('page_id', 'integer', (c) => c.notNull().references('pages.id').onDelete('cascade'))
        .addColumn('ordinal', 'integer', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('heading_path', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('word_count', 'integer', (c) => c.notNull())
        .addUniqueConstraint('passages_page_ordinal', ['page_id', 'ordinal'])
        .execute();

      await db.schema
        .createTable('crawl_runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('seeds', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('stats', 'text')
        .execute();

      await db.schema
        .createTable('crawl_skips')
        .addColumn('id', 'integer', serialId)
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('detail', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('crawl_skips_run').on('crawl_skips').column('run_id').execute();

      await db.schema
        .createTable('tenants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('credits', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addCheckConstraint('tenants_credits_non_negative', sql`credits >= 0`)
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema.createIndex('api_keys_tenant').on('api_keys').column('tenant_id').execute();

      await db.schema
        .createTable('credit_ledger')
        .addColumn('id', 'integer', serialId)
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('delta', 'integer', (c) => c.notNull())
        .addColumn('balance_after', 'integer', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text')
        .addColumn('key_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('credit_ledger_tenant').on('credit_ledger').columns(['tenant_id', 'id']).execute();
    },
    async down(db: Kysely<unknown>) {
      for (const table of ['credit_ledger', 'api_keys', 'tenants', 'crawl_skips', 'crawl_runs', 'passages', 'pages']) {
        await db.schema.dropTable(table).ifExists().execute();
      }
    },
  };

  const pageLanguage: Migration = {
    async up(db: Kysely<unknown>) {
      for (const column of ['content_language', 'language', 'translation_key']) {
        await db.schema.alterTable('pages').addColumn(column, 'text').execute();
      }
      await db.schema.alterTable('pages').addColumn('navigation', 'integer').execute();
      await db.schema.createIndex('pages_translation_key').on('pages').column('translation_key').execute();
      await db.schema.createIndex('pages_host').on('pages').column('host').execute();
      // Titles, languages and navigation flags are decided at index time: every page is indexed again.
      await sql`update pages set state = 'fetched' where state = 'indexed'`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('pages_host').ifExists().execute();
      await db.schema.dropIndex('pages_translation_key').ifExists().execute();
      for (const column of ['navigation', 'translation_key', 'language', 'content_language']) {
        await db.schema.alterTable('pages').dropColumn(column).execute();
      }
    },
  };
  const paidCalls: Migration = {
    async up(db: Kysely<unknown>) {
      // The first response to each payer's Idempotency-Key. `expires_at` ends the running call's lease while
      // `status` is null, and the replay window once the response is stored.
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('lease', 'text', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('headers', 'text')
        .addColumn('body', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at').execute();
      // A tenant is debited at most once per Idempotency-Key, even when a crashed call's retry runs the work again.
      await db.schema.alterTable('credit_ledger').addColumn('idempotency_key', 'text').execute();
      await db.schema
        .createIndex('credit_ledger_idempotency')
        .on('credit_ledger')
        .columns(['tenant_id', 'idempotency_key'])
        .unique()
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('credit_ledger_idempotency').ifExists().execute();
      await db.schema.alterTable('credit_ledger').dropColumn('idempotency_key').execute();
      await db.schema.dropTable('idempotency_keys').ifExists().execute();
    },
  };

  const rateLimitBuckets: Migration = {
    async up(db: Kysely<unknown>) {
      // GCRA state of the SQL rate-limit store: each key's theoretical arrival time in epoch milliseconds.
      await db.schema
        .createTable('rate_limit_buckets')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('tat', dialect === 'postgres' ? 'double precision' : 'real', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('rate_limit_buckets').ifExists().execute();
    },
  };

  const helpers: MigrationHelpers = { dialect, serialId };
  const migrations: Record<string, Migration> = {
    '0001_initial': initial,
    '0010_paid_calls': paidCalls,
    '0011_page_language_navigation': pageLanguage,
    '0012_crawl_frontier': crawlFrontierMigration(helpers),
    '0017_accounts': accountsMigration(helpers),
    '0019_rate_limit_buckets': rateLimitBuckets,
    '0019_crawl_host_slots': crawlHostSlotsMigration(helpers),
    '0019_crawl_host_active': crawlHostActiveMigration(helpers),
    '0033_collections': collectionsMigration(helpers),
    '0035_collections_public': collectionsPublicMigration(helpers),
    '0036_crawl_jobs': crawlJobsMigration(helpers),
    '0037_collection_settings': collectionSettingsMigration(helpers),
    '0038_tenant_collections': tenantCollectionsMigration(helpers),
    '0039_tenant_private_networks': tenantPrivateNetworksMigration(helpers),
  };
  for (const [name, factory] of pluginMigrations) {
    if (name in migrations) throw new Error(`migration ${name} is registered twice`);
    migrations[name] = factory(helpers);
  }
  return { getMigrations: async () => migrations };
}
