import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from '../migrations.js';

export const crawlFrontierMigration: MigrationFactory = ({ serialId }) => ({
  async up(db: Kysely<unknown>) {
    // The crawl frontier: every URL a crawl admitted, with its state. It outlives the process, so a crawl stopped
    // by a signal, a crash or SIGKILL resumes from it; leases (owner + expiry) let several workers share one later.
    await db.schema
      .createTable('crawl_frontier')
      .addColumn('id', 'integer', serialId)
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('depth', 'integer', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text')
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('added_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .addUniqueConstraint('crawl_frontier_run_url', ['run_id', 'url'])
      .execute();
    await db.schema.createIndex('crawl_frontier_next').on('crawl_frontier').columns(['run_id', 'state', 'id']).execute();
    await db.schema.alterTable('crawl_runs').addColumn('status', 'text').execute();
    await db.schema.alterTable('crawl_runs').addColumn('resumed_from', 'text').execute();
    await db.schema.alterTable('crawl_runs').addColumn('owner', 'text').execute();
    await db.schema.alterTable('crawl_runs').addColumn('heartbeat_at', 'text').execute();
    await db.schema.alterTable('crawl_runs').addColumn('options', 'text').execute();
    // Runs recorded before this migration: finished ones are finished, the rest can no longer be resumed.
    await sql`update crawl_runs set status = case when finished_at is null then 'interrupted' else 'finished' end`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('crawl_frontier').ifExists().execute();
    for (const column of ['status', 'resumed_from', 'owner', 'heartbeat_at', 'options']) {
      await db.schema.alterTable('crawl_runs').dropColumn(column).execute();
    }
  },
});

export const crawlHostSlotsMigration: MigrationFactory = ({ dialect }) => ({
  async up(db: Kysely<unknown>) {
    // Per-host politeness across crawler processes: the earliest start of the next request to each host, epoch ms.
    await db.schema
      .createTable('crawl_host_slots')
      .addColumn('host', 'text', (c) => c.primaryKey())
      .addColumn('next_start_at', dialect === 'postgres' ? 'double precision' : 'real', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('crawl_host_slots').ifExists().execute();
  },
});

export const crawlHostActiveMigration: MigrationFactory = ({ dialect }) => ({
  async up(db: Kysely<unknown>) {
    // Per-host concurrency across crawler processes: slot `slot` (0 .. per_host_concurrency - 1) of a host is held by
    // `owner` until `expires_at` (epoch ms, database clock; renewed while held, so a dead worker's slots run out).
    await db.schema
      .createTable('crawl_host_active')
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('slot', 'integer', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('expires_at', dialect === 'postgres' ? 'double precision' : 'real', (c) => c.notNull())
      .addPrimaryKeyConstraint('crawl_host_active_pk', ['host', 'slot'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('crawl_host_active').ifExists().execute();
  },
});
