import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from '../../storage/index.js';

/** 0014_receipt_log: the receipt log's tree, entries and checkpoints (name kept: databases have it recorded). */
export const receiptLogMigration: MigrationFactory = ({ dialect }) => ({
  async up(db: Kysely<unknown>) {
    const bytes = dialect === 'postgres' ? 'bytea' : 'blob';
    // One row: the tree size. Every append increments it first, which serialises appenders across processes.
    await db.schema
      .createTable('receipt_log_state')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('tree_size', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into receipt_log_state (id, tree_size) values (1, 0)`.execute(db);
    await db.schema
      .createTable('receipt_log_entries')
      .addColumn('leaf_index', 'bigint', (c) => c.primaryKey())
      .addColumn('leaf_hash', bytes, (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('kid', 'text', (c) => c.notNull())
      .addColumn('issued_at', 'text', (c) => c.notNull())
      .addColumn('receipt', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('receipt_log_entries_leaf_hash').on('receipt_log_entries').column('leaf_hash').execute();
    await db.schema.createIndex('receipt_log_entries_request_id').on('receipt_log_entries').column('request_id').execute();
    // Every complete subtree hash: (0, i) is leaf i's hash, (l, i) covers leaves [i*2^l, (i+1)*2^l).
    await db.schema
      .createTable('receipt_log_nodes')
      .addColumn('level', 'integer', (c) => c.notNull())
      .addColumn('node_index', 'bigint', (c) => c.notNull())
      .addColumn('hash', bytes, (c) => c.notNull())
      .addPrimaryKeyConstraint('receipt_log_nodes_pk', ['level', 'node_index'])
      .execute();
    await db.schema
      .createTable('receipt_log_checkpoints')
      .addColumn('tree_size', 'bigint', (c) => c.primaryKey())
      .addColumn('root_hash', bytes, (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ['receipt_log_checkpoints', 'receipt_log_nodes', 'receipt_log_entries', 'receipt_log_state']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
});
