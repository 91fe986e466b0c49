import type { Kysely } from 'kysely';
import type { MigrationFactory } from '../migrations.js';

/**
 * 0036_crawl_jobs (issue 33): crawl jobs tenants order over the API (POST /v1/crawl). A job outlives the process that
 * runs it: its lease (owner + expiry) lets any crawl worker of the deployment take it over, its crawl run's frontier
 * is what a restart resumes, and its payment hold (JSON, the mode's record) is settled once when it ends.
 */
export const crawlJobsMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('crawl_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('payer', 'text', (c) => c.notNull())
      .addColumn('tenant_id', 'text')
      .addColumn('tier', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('collection_id', 'text', (c) => c.notNull())
      .addColumn('collection_name', 'text', (c) => c.notNull())
      .addColumn('seeds', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('max_pages', 'integer', (c) => c.notNull())
      .addColumn('max_depth', 'integer', (c) => c.notNull())
      .addColumn('include', 'text', (c) => c.notNull())
      .addColumn('exclude', 'text', (c) => c.notNull())
      .addColumn('webhook', 'text')
      .addColumn('credits_quoted', 'integer', (c) => c.notNull())
      .addColumn('credits_used', 'integer')
      .addColumn('hold', 'text', (c) => c.notNull())
      .addColumn('run_id', 'text')
      .addColumn('stored', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('queued', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('pages_per_minute', 'real')
      .addColumn('eta_seconds', 'integer')
      .addColumn('error_code', 'text')
      .addColumn('error_detail', 'text')
      .addColumn('owner', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text')
      .addColumn('ended_at', 'text')
      .addColumn('settled_at', 'text')
      .execute();
    await db.schema.createIndex('crawl_jobs_payer').on('crawl_jobs').columns(['payer', 'created_at']).execute();
    await db.schema.createIndex('crawl_jobs_unsettled').on('crawl_jobs').columns(['settled_at', 'created_at']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('crawl_jobs').ifExists().execute();
  },
});

/**
 * 0039_tenant_private_networks (issue 33): an operator may let one tenant's crawl jobs reach private addresses (its
 * intranet) while the deployment's policy stays strict for the others; each job records what it was allowed.
 */
export const tenantPrivateNetworksMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('tenants').addColumn('allow_private_networks', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('crawl_jobs').addColumn('allow_private', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('crawl_jobs').dropColumn('allow_private').execute();
    await db.schema.alterTable('tenants').dropColumn('allow_private_networks').execute();
  },
});
