import { nowIso } from './db.js';
import { CreditLedgerRepository } from './credit-ledger.js';
import type { ApiKeyRow, Tenant } from './schema.js';

export type { DebitOutcome, LedgerFilter, MultiDebitOutcome, PartyDebit } from './credit-ledger.js';

/** An API key as it may be shown: never the hash, never the plaintext. */
export type ApiKeyRecord = Omit<ApiKeyRow, 'key_hash'>;

export interface ApiKeyWithTenant {
  key: ApiKeyRow;
  tenant: Tenant;
}

const keyRecordColumns = ['id', 'tenant_id', 'prefix', 'last4', 'name', 'created_at', 'revoked_at', 'last_used_at', 'expires_at', 'scopes', 'environment', 'collections'] as const;



/**
 * Repository for tenants and api_keys (the credit ledger's part is CreditLedgerRepository). Plain SQL through Kysely that runs unchanged on SQLite and
 * PostgreSQL; balance changes and their ledger rows are always written in one transaction.
 */
export class AccountsRepository extends CreditLedgerRepository {

  async getTenantByName(name: string): Promise<Tenant | undefined> {
    return this.db.selectFrom('tenants').selectAll().where('name', '=', name).executeTakeFirst();
  }

  async listTenants(): Promise<Tenant[]> {
    return this.db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  /**
   * Inserts a tenant with a zero balance and, when `credits` > 0, grants them with a ledger row in the same
   * transaction. Returns undefined when the name is taken (nothing written).
   */
  async insertTenant(tenant: { id: string; name: string; tier: string; credits: number; reason: string }): Promise<Tenant | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('tenants')
        .values({ id: tenant.id, name: tenant.name, tier: tenant.tier, credits: 0, created_at: nowIso() })
        .onConflict((oc) => oc.column('name').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) return undefined;
      if (tenant.credits > 0) await this.addCredits(trx, tenant.id, tenant.credits, tenant.reason, null, null);
      return this.getTenant(tenant.id, trx);
    });
  }

  async insertKey(row: Omit<ApiKeyRow, 'revoked_at' | 'last_used_at'>): Promise<ApiKeyRecord> {
    await this.db.insertInto('api_keys').values({ ...row, revoked_at: null, last_used_at: null }).execute();
    const { key_hash: _hash, ...record } = { ...row, revoked_at: null, last_used_at: null };
    return record;
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.db.selectFrom('api_keys').select(keyRecordColumns).where('id', '=', id).executeTakeFirst();
  }

  async listKeys(tenantId?: string): Promise<ApiKeyRecord[]> {
    let query = this.db.selectFrom('api_keys').select(keyRecordColumns);
    if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
    return query.orderBy('created_at').orderBy('id').execute();
  }

  /**
   * Sets revoked_at once; revoking a revoked key keeps the first time. Returns undefined for an unknown id, or for a
   * key of another tenant when `tenantId` is given.
   */
  async revokeKey(id: string, tenantId?: string): Promise<ApiKeyRecord | undefined> {
    let update = this.db.updateTable('api_keys').set({ revoked_at: nowIso() }).where('id', '=', id).where('revoked_at', 'is', null);
    if (tenantId !== undefined) update = update.where('tenant_id', '=', tenantId);
    await update.execute();
    const key = await this.getKey(id);
    return key && (tenantId === undefined || key.tenant_id === tenantId) ? key : undefined;
  }

  async updateTenant(id: string, patch: { tier?: string; suspended_at?: string | null; features?: string | null }): Promise<Tenant | undefined> {
    if (Object.keys(patch).length > 0) await this.db.updateTable('tenants').set(patch).where('id', '=', id).execute();
    return this.getTenant(id);
  }

  /** The key with this hash and its tenant, in one query (this runs on every authenticated request). */
  async findKeyByHash(keyHash: string): Promise<ApiKeyWithTenant | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
      .select([
        'api_keys.id as key_id',
        'api_keys.tenant_id as key_tenant_id',
        'api_keys.key_hash',
        'api_keys.prefix',
        'api_keys.last4',
        'api_keys.name as key_name',
        'api_keys.created_at as key_created_at',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
        'api_keys.expires_at',
        'api_keys.scopes',
        'api_keys.environment',
        'api_keys.collections',
        'tenants.id as tenant_id',
        'tenants.name as tenant_name',
        'tenants.tier',
        'tenants.credits',
        'tenants.created_at as tenant_created_at',
        'tenants.suspended_at',
        'tenants.features',
        'tenants.grant_period',
      ])
      .where('api_keys.key_hash', '=', keyHash)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      key: {
        id: row.key_id,
        tenant_id: row.key_tenant_id,
        key_hash: row.key_hash,
        prefix: row.prefix,
        last4: row.last4,
        name: row.key_name,
        created_at: row.key_created_at,
        revoked_at: row.revoked_at,
        last_used_at: row.last_used_at,
        expires_at: row.expires_at,
        scopes: row.scopes,
        environment: row.environment,
        collections: row.collections,
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
      },
    };
  }

  async touchKey(id: string, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

}
