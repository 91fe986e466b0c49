import type { Kysely, Transaction } from 'kysely';
import { nowIso } from '../../../storage/index.js';
import type { Database, Tenant } from '../../../storage/index.js';
import type { PartyKey } from './tables.js';

export interface PartyKeyWithTenant {
  key: PartyKey;
  tenant: Tenant;
}

/**
 * Repository for party_keys (the Ed25519 keys tenants sign MPP envelopes with) and mpp_nonces (each envelope's nonce,
 * single use). Plain SQL through Kysely that runs unchanged on SQLite and PostgreSQL.
 */
export class PartiesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts a key; false when its kid is registered already (nothing written). */
  async insertKey(row: Omit<PartyKey, 'revoked_at'>): Promise<boolean> {
    const inserted = await this.db
      .insertInto('party_keys')
      .values({ ...row, revoked_at: null })
      .onConflict((oc) => oc.column('kid').doNothing())
      .returning('kid')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async getKey(kid: string): Promise<PartyKey | undefined> {
    return this.db.selectFrom('party_keys').selectAll().where('kid', '=', kid).executeTakeFirst();
  }

  async listKeys(tenantId?: string): Promise<PartyKey[]> {
    let query = this.db.selectFrom('party_keys').selectAll();
    if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
    return query.orderBy('created_at').orderBy('kid').execute();
  }

  /**
   * Sets revoked_at once (a second revocation keeps the first time); undefined for an unknown kid, or one of another
   * tenant than `tenantId` when it is given.
   */
  async revokeKey(kid: string, tenantId?: string): Promise<PartyKey | undefined> {
    let update = this.db.updateTable('party_keys').set({ revoked_at: nowIso() }).where('kid', '=', kid).where('revoked_at', 'is', null);
    if (tenantId !== undefined) update = update.where('tenant_id', '=', tenantId);
    await update.execute();
    const key = await this.getKey(kid);
    return key && (tenantId === undefined || key.tenant_id === tenantId) ? key : undefined;
  }

  /** The keys with these kids and their tenants, in one query (this runs on every MPP call). */
  async findKeys(kids: readonly string[]): Promise<Map<string, PartyKeyWithTenant>> {
    if (kids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('party_keys')
      .innerJoin('tenants', 'tenants.id', 'party_keys.tenant_id')
      .select([
        'party_keys.kid',
        'party_keys.tenant_id as key_tenant_id',
        'party_keys.public_key',
        'party_keys.name as key_name',
        'party_keys.created_at as key_created_at',
        'party_keys.revoked_at',
        'party_keys.collections as key_collections',
        'tenants.id as tenant_id',
        'tenants.name as tenant_name',
        'tenants.tier',
        'tenants.credits',
        'tenants.created_at as tenant_created_at',
        'tenants.suspended_at',
        'tenants.features',
        'tenants.grant_period',
        'tenants.collections as tenant_collections',
        'tenants.allow_private_networks',
      ])
      .where('party_keys.kid', 'in', [...kids])
      .execute();
    return new Map(
      rows.map((row) => [
        row.kid,
        {
          key: {
            kid: row.kid,
            tenant_id: row.key_tenant_id,
            public_key: row.public_key,
            name: row.key_name,
            created_at: row.key_created_at,
            revoked_at: row.revoked_at,
            collections: row.key_collections,
          },
          tenant: {
            id: row.tenant_id,
            name: row.tenant_name,
            tier: row.tier,
            credits: row.credits,
            created_at: row.tenant_created_at,
            suspended_at: row.suspended_at,
            features: row.features,
            grant_period: row.grant_period,
            collections: row.tenant_collections,
            allow_private_networks: row.allow_private_networks,
          },
        },
      ]),
    );
  }

  /** Names among these that are tenants. */
  async existingTenantNames(names: readonly string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await this.db.selectFrom('tenants').select('name').where('name', 'in', [...names]).execute();
    return new Set(rows.map((r) => r.name));
  }

  async nonceUsed(nonce: string): Promise<boolean> {
    const row = await this.db.selectFrom('mpp_nonces').select('nonce').where('nonce', '=', nonce).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Records a nonce as used, inside the caller's transaction; false when it was used already. On PostgreSQL a
   * concurrent claim of the same nonce waits for the first transaction and then finds the row.
   */
  async claimNonce(trx: Transaction<Database>, row: { nonce: string; env_id: string; request_id: string; expires_at: string }): Promise<boolean> {
    const inserted = await trx
      .insertInto('mpp_nonces')
      .values({ ...row, created_at: nowIso() })
      .onConflict((oc) => oc.column('nonce').doNothing())
      .returning('nonce')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  /** Deletes nonces whose envelopes expired before `before` (no envelope can use them any more). */
  async pruneNonces(before: string): Promise<number> {
    const result = await this.db.deleteFrom('mpp_nonces').where('expires_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
