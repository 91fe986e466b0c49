import { sql, type Kysely } from 'kysely';
import { DEFAULT_COLLECTION_ID, DEFAULT_COLLECTION_NAME } from '../../core/index.js';
import type { MigrationFactory } from '../migrations.js';

/**
 * Collections (issue 33): the collections table with the default collection, which every page stored so far joins;
 * page membership; the collections an API key may read (JSON array of collection ids, null: all); and the collection
 * ids each passage vector was stored with (JSON array, null: the default collection), which vector searches filter on.
 */
export const collectionsMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('collections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await sql`insert into collections (id, name, created_at) values (${DEFAULT_COLLECTION_ID}, ${DEFAULT_COLLECTION_NAME}, ${new Date().toISOString()})`.execute(db);
    await db.schema
      .createTable('page_collections')
      .addColumn('page_id', 'integer', (c) => c.notNull().references('pages.id').onDelete('cascade'))
      .addColumn('collection_id', 'text', (c) => c.notNull().references('collections.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('page_collections_pk', ['page_id', 'collection_id'])
      .execute();
    await db.schema.createIndex('page_collections_collection').on('page_collections').columns(['collection_id', 'page_id']).execute();
    await sql`insert into page_collections (page_id, collection_id) select id, ${DEFAULT_COLLECTION_ID} from pages`.execute(db);
    await db.schema.alterTable('api_keys').addColumn('collections', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('api_keys').dropColumn('collections').execute();
    await db.schema.dropTable('page_collections').ifExists().execute();
    await db.schema.dropTable('collections').ifExists().execute();
  },
});

/**
 * 0035_collections_public: which collections payers without an account (pay-per-call) may read. The default collection is
 * public, so such payers keep reading what they read before collections; a new collection is private until the
 * operator says otherwise (notary collections set NAME --public).
 */
export const collectionsPublicMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('collections').addColumn('public', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await sql`update collections set public = 1 where id = ${DEFAULT_COLLECTION_ID}`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('collections').dropColumn('public').execute();
  },
});

/**
 * 0038_tenant_collections: the collections a tenant may read (JSON array of ids; null: every collection), set by an
 * operator; every key of the tenant (and its party keys) reads at most those, whatever the key's own list says.
 */
export const tenantCollectionsMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('tenants').addColumn('collections', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('tenants').dropColumn('collections').execute();
  },
});

/**
 * 0037_collection_settings: a collection's own search prices (JSON array of credits by depth, as
 * pricing.search.credits_by_depth; null: the price list's) and its own maximum search depth (null: search.max_depth).
 */
export const collectionSettingsMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('collections').addColumn('credits_by_depth', 'text').execute();
    await db.schema.alterTable('collections').addColumn('max_depth', 'integer').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('collections').dropColumn('max_depth').execute();
    await db.schema.alterTable('collections').dropColumn('credits_by_depth').execute();
  },
});
