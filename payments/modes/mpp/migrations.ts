import type { Kysely } from 'kysely';
import type { MigrationFactory } from '../../../storage/index.js';

/** 0016_mpp_parties: party keys and single-use envelope nonces (name kept: databases have it recorded). */
export const mppPartiesMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    // Parties of multi-party payments are tenants with registered Ed25519 keys, named in envelopes by kid.
    await db.schema
      .createTable('party_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('party_keys_tenant').on('party_keys').column('tenant_id').execute();
    // The primary key makes a nonce single-use: the charge inserts it in the transaction of the debits.
    await db.schema
      .createTable('mpp_nonces')
      .addColumn('nonce', 'text', (c) => c.primaryKey())
      .addColumn('env_id', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('mpp_nonces_expires').on('mpp_nonces').column('expires_at').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('mpp_nonces').ifExists().execute();
    await db.schema.dropTable('party_keys').ifExists().execute();
  },
});

/**
 * 0034_party_key_collections: the collections a party key may read (issue 33), a JSON list of collection ids as API
 * keys hold them; null: every collection. An envelope reads a collection only when every party's key may.
 */
export const mppPartyKeyCollectionsMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('party_keys').addColumn('collections', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('party_keys').dropColumn('collections').execute();
  },
});
