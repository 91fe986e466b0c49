import type { Kysely } from 'kysely';
import type { Database, PartyKeyRow } from './schema.js';

/** The party_keys table: Ed25519 public keys tenants register for their MPP parties. */
export class PartyKeysRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Returns false when the kid (the same public key) is registered already. */
  async insert(row: PartyKeyRow): Promise<boolean> {
    const inserted = await this.db.insertInto('party_keys').values(row).onConflict((oc) => oc.column('kid').doNothing()).returning('id').executeTakeFirst();
    return inserted !== undefined;
  }

  async list(tenantId: string): Promise<PartyKeyRow[]> {
    return this.db.selectFrom('party_keys').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  }

  async byKid(kid: string): Promise<PartyKeyRow | undefined> {
    return this.db.selectFrom('party_keys').selectAll().where('kid', '=', kid).executeTakeFirst();
  }

  /** Revokes a key of this tenant (once); undefined when the tenant has no such key. */
  async revoke(id: string, tenantId: string, at: string): Promise<PartyKeyRow | undefined> {
    await this.db.updateTable('party_keys').set({ revoked_at: at }).where('id', '=', id).where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).execute();
    return this.db.selectFrom('party_keys').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  }
}
