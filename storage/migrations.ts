import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import { sql } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** One set of migrations for both engines; the only difference is how an auto-increment key is spelled. */
export function migrationProvider(dialect: Dialect): MigrationProvider {
  const serialId = (col: ColumnDefinitionBuilder) =>
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

  const passageVectors: Migration = {
    async up(db: Kysely<unknown>) {
      // One embedding per passage (of whichever model wrote it last); `seq` is the write generation that stored the
      // row, so a reader can tell from count(*) and max(seq) alone whether its cached copy is still current.
      await db.schema
        .createTable('passage_vectors')
        .addColumn('passage_id', 'integer', (c) => c.primaryKey().references('passages.id').onDelete('cascade'))
        .addColumn('page_id', 'integer', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('dimensions', 'integer', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('vector', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('passage_vectors_model')
        .on('passage_vectors')
        .columns(['model', 'dimensions', 'seq'])
        .execute();
      // A single row: every write to passage_vectors increments it in the same transaction, which serialises writers
      // and makes `seq` grow in commit order.
      await db.schema
        .createTable('passage_vector_generation')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('generation', 'integer', (c) => c.notNull())
        .execute();
      await sql`insert into passage_vector_generation (id, generation) values (1, 0)`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('passage_vector_generation').ifExists().execute();
      await db.schema.dropTable('passage_vectors').ifExists().execute();
    },
  };

  const receiptLog: Migration = {
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

  const migrations: Record<string, Migration> = {
    '0001_initial': initial,
    '0002_passage_vectors': passageVectors,
    '0010_paid_calls': paidCalls,
    '0014_receipt_log': receiptLog,
  };
  return { getMigrations: async () => migrations };
}
