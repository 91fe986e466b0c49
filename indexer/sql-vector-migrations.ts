import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { registerMigrations, type MigrationFactory, type MigrationHelpers } from '../storage/index.js';

/**
 * The SQL vector store's migrations (its tables: sql-vector-tables.ts). Their names were recorded by databases made
 * when they lived among the shared migrations, so they never change. Importing this module registers them.
 */

/** 0002_passage_vectors: one embedding per passage, and the write generation. */
const passageVectors = ({ dialect }: MigrationHelpers): Migration => ({
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
});

/** 0020_passage_vector_changes: the change count a search reads to tell whether its cached vectors are current. */
const passageVectorChanges = ({ dialect }: MigrationHelpers): Migration => ({
  async up(db: Kysely<unknown>) {
    // SQLite: every row inserted, updated or deleted in passage_vectors (ON DELETE CASCADE from passages and rows
    // written by hand included) counts here, so a search tells whether its cached vectors are current from one
    // one-row read instead of counting the model's rows. SQLite has one writer at a time, so the row never
    // orders writers against each other; PostgreSQL, where a counter row would (an embedding write and a cascade
    // from the indexer could deadlock on it), keeps the count check and gets no triggers.
    await db.schema
      .createTable('passage_vector_changes')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('changes', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into passage_vector_changes (id, changes) values (1, 0)`.execute(db);
    if (dialect === 'sqlite') {
      for (const event of ['insert', 'update', 'delete']) {
        await sql
          .raw(
            `create trigger passage_vectors_${event} after ${event} on passage_vectors ` +
              `begin update passage_vector_changes set changes = changes + 1 where id = 1; end`,
          )
          .execute(db);
      }
    }
  },
  async down(db: Kysely<unknown>) {
    if (dialect === 'sqlite') {
      for (const event of ['insert', 'update', 'delete']) await sql.raw(`drop trigger if exists passage_vectors_${event}`).execute(db);
    }
    await db.schema.dropTable('passage_vector_changes').ifExists().execute();
  },
});

/** 0021_passage_vector_facts: what domain and date filters read inside a vector search. */
const passageVectorFacts = (): Migration => ({
  async up(db: Kysely<unknown>) {
    // What domain and date filters read inside a vector search (indexer/filter-facts.ts): the passage's host and
    // its page's publication date (epoch ms); null until the passage is embedded again.
    await db.schema.alterTable('passage_vectors').addColumn('host', 'text').execute();
    await db.schema.alterTable('passage_vectors').addColumn('published', 'bigint').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('passage_vectors').dropColumn('published').execute();
    await db.schema.alterTable('passage_vectors').dropColumn('host').execute();
  },
});

/**
 * 0033_passage_vector_collections: the collections of a passage's page when it was embedded (issue 33). Databases made
 * before this store had migrations of its own got the column from the shared 0033_collections: then it is left as is.
 */
const passageVectorCollections = (): Migration => ({
  async up(db: Kysely<unknown>) {
    const table = (await db.introspection.getTables()).find((t) => t.name === 'passage_vectors');
    if (table?.columns.some((c) => c.name === 'collections')) return;
    await db.schema.alterTable('passage_vectors').addColumn('collections', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('passage_vectors').dropColumn('collections').execute();
  },
});

export const SQL_VECTOR_MIGRATIONS: Readonly<Record<string, MigrationFactory>> = {
  '0002_passage_vectors': passageVectors,
  '0020_passage_vector_changes': passageVectorChanges,
  '0021_passage_vector_facts': passageVectorFacts,
  '0033_passage_vector_collections': passageVectorCollections,
};

registerMigrations(SQL_VECTOR_MIGRATIONS);
