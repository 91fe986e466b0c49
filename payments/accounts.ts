import type { Kysely } from 'kysely';
import { narrowCollections, parseCollectionIds, NotaryError, newId } from '../core/index.js';
import {
  AccountsRepository,
  type ApiKeyRecord,
  type LedgerFilter,
  type MultiDebitOutcome,
  type PartyDebit,
  nowIso,
} from '../storage/index.js';
import type { Database, LedgerEntry, Tenant } from '../storage/index.js';
import { apiKeyHashesEqual, generateApiKey, parseApiKey, type ApiKeyEnvironment, type ParsedApiKey } from './api-keys.js';
import type { Operation } from './pricing.js';
import { usageRow, type UsageRecord } from './usage.js';
import './modes/api-key/errors.js'; // registers the API-key error codes this file throws

export type { ApiKeyRecord, LedgerFilter, MultiDebitOutcome, PartyDebit } from '../storage/index.js';

/** What a key may call. */
export const KEY_SCOPES = ['search', 'extract', 'map', 'crawl'] as const satisfies readonly Operation[];
export type KeyScope = (typeof KEY_SCOPES)[number];

export interface KeyOptions {
  name?: string | null;
  /** After this instant the key is refused with expired_api_key. */
  expiresAt?: Date | null;
  /** Default: every scope. */
  scopes?: readonly KeyScope[];
  /** live (default) or test. */
  environment?: ApiKeyEnvironment;
  /** The ids of the only collections the key may read (at least one); absent or null: every collection. */
  collections?: readonly string[] | null;
}

/** The collection ids a key may read, as stored with it; null: every collection (a value it cannot read: none). */
export function keyCollections(record: { collections: string | null }): readonly string[] | null {
  return parseCollectionIds(record.collections);
}

/** The scopes stored with a key. */
export function keyScopes(record: { scopes: string }): KeyScope[] {
  return record.scopes.split(',').filter((scope): scope is KeyScope => (KEY_SCOPES as readonly string[]).includes(scope));
}
export type { LedgerEntry, Tenant } from '../storage/index.js';

export interface AccountsOptions {
  /** Known tier names (or where to read them: operators edit tiers while serving); when given, tenants can only be put on one of these. */
  tiers?: readonly string[] | (() => readonly string[]);
  /** Tier of a tenant created without one. */
  defaultTier?: string;
  /** last_used_at is written at most this often per key, to keep authentication read-mostly. Default 60 s. */
  touchIntervalMs?: number;
}

export interface TenantOptions {
  tier?: string;
  /** Opening balance, recorded in the ledger. */
  credits?: number;
}

export interface CreatedKey {
  /** The plaintext key: returned once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

export interface AuthenticatedKey {
  tenant: Tenant;
  keyId: string;
  environment: ApiKeyEnvironment;
  scopes: KeyScope[];
  /** The ids of the only collections the key may read; null: every collection. */
  collections: readonly string[] | null;
}

export interface DebitRequest {
  tenantId: string;
  credits: number;
  requestId: string;
  keyId?: string | null;
  reason?: string;
  /** Makes the debit single-use: a second debit with the same key takes nothing and reports the first. */
  idempotencyKey?: string | null;
  /** The call's usage row, written in the debit's transaction (DebitResult.usageRecorded says whether it was). */
  usage?: UsageRecord;
}

export interface DebitResult {
  balance: number;
  already: boolean;
  /** Present (true) when the request's usage row was written with the debit. */
  usageRecorded?: true;
}

function requireCredits(credits: number, allowZero: boolean): void {
  if (!Number.isSafeInteger(credits) || credits < 0 || (!allowZero && credits === 0)) {
    throw new NotaryError('invalid_request', `credits must be a ${allowZero ? 'non-negative' : 'positive'} integer, got ${credits}`);
  }
}

/**
 * Tenants, API keys and the credit ledger: the framework-free core that every payment mode (API key, x402, MPP)
 * charges through. Works on SQLite and PostgreSQL.
 */
export class Accounts {
  readonly repository: AccountsRepository;
  private readonly tiers: (() => readonly string[]) | undefined;
  private readonly defaultTier: string;
  private readonly touchIntervalMs: number;

  constructor(db: Kysely<Database>, options: AccountsOptions = {}) {
    this.repository = new AccountsRepository(db);
    const tiers = options.tiers;
    this.tiers = tiers === undefined ? undefined : typeof tiers === 'function' ? tiers : () => tiers;
    this.defaultTier = options.defaultTier ?? 'free';
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
  }

  private checkTenantInput(name: string, options: TenantOptions): { name: string; tier: string; credits: number } {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 200) throw new NotaryError('invalid_request', 'tenant name must be 1 to 200 characters');
    const tier = options.tier ?? this.defaultTier;
    this.checkTier(tier);
    const credits = options.credits ?? 0;
    requireCredits(credits, true);
    return { name: trimmed, tier, credits };
  }

  /** Throws invalid_request for a tier that is not defined. */
  checkTier(tier: string): void {
    const known = this.tiers?.();
    if (known && !known.includes(tier)) throw new NotaryError('invalid_request', `unknown tier "${tier}" (known: ${known.join(', ')})`);
  }

  /** Creates a tenant; NotaryError('tenant_exists') when the name is taken. */
  async createTenant(name: string, options: TenantOptions = {}): Promise<Tenant> {
    const input = this.checkTenantInput(name, options);
    const tenant = await this.repository.insertTenant({ id: newId('ten'), ...input, reason: 'opening balance' });
    if (!tenant) throw new NotaryError('tenant_exists', `a tenant named "${input.name}" already exists`);
    return tenant;
  }

  /** The tenant with this name, created (with the opening credits) only if it does not exist yet. */
  async ensureTenant(name: string, options: TenantOptions = {}): Promise<Tenant> {
    const input = this.checkTenantInput(name, options);
    const existing = await this.repository.getTenantByName(input.name);
    if (existing) return existing;
    const created = await this.repository.insertTenant({ id: newId('ten'), ...input, reason: 'opening balance' });
    if (created) return created;
    // Lost a race with a concurrent ensureTenant of the same name.
    const winner = await this.repository.getTenantByName(input.name);
    if (!winner) throw new NotaryError('internal_error', `tenant "${input.name}" vanished during creation`);
    return winner;
  }

  async getTenant(tenantId: string): Promise<Tenant> {
    const tenant = await this.repository.getTenant(tenantId);
    if (!tenant) throw new NotaryError('tenant_not_found', `no tenant with id ${tenantId}`);
    return tenant;
  }

  /**
   * The tenant a command names with `--tenant` (`--credits`, `--tier`): created when new, granted the credits when it
   * exists (`notary keys create`, `notary parties add-key`). What it did is told to `say` (standard error).
   */
  async tenantFromOptions(
    opts: { tenant: string; credits?: number; tier?: string },
    say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  ): Promise<Tenant> {
    const existing = (await this.listTenants()).find((t) => t.name === opts.tenant);
    if (!existing) {
      const tenant = await this.createTenant(opts.tenant, {
        ...(opts.tier ? { tier: opts.tier } : {}),
        ...(opts.credits !== undefined ? { credits: opts.credits } : {}),
      });
      say(`created tenant ${tenant.name} (${tenant.id}), tier ${tenant.tier}, ${tenant.credits} credits`);
      return tenant;
    }
    if (opts.credits !== undefined && opts.credits > 0) {
      const { balance } = await this.grantCredits(existing.id, opts.credits, 'cli_grant');
      say(`granted ${opts.credits} credits to ${existing.name}: balance ${balance}`);
    }
    return existing;
  }

  async listTenants(): Promise<Tenant[]> {
    return this.repository.listTenants();
  }

  async balance(tenantId: string): Promise<number> {
    return (await this.getTenant(tenantId)).credits;
  }

  /** A new key: the plaintext is in the result only, never stored (its SHA-256 is). A name alone is accepted for older callers. */
  async createKey(tenantId: string, options: KeyOptions | string = {}): Promise<CreatedKey> {
    const opts: KeyOptions = typeof options === 'string' ? { name: options } : options;
    await this.getTenant(tenantId);
    const name = opts.name?.trim() || null;
    if (name !== null && name.length > 100) throw new NotaryError('invalid_request', 'a key name is at most 100 characters');
    const scopes = [...new Set(opts.scopes ?? KEY_SCOPES)];
    if (scopes.length === 0 || scopes.some((scope) => !(KEY_SCOPES as readonly string[]).includes(scope))) {
      throw new NotaryError('invalid_request', `scopes must be a non-empty subset of ${KEY_SCOPES.join(', ')}`);
    }
    const expiresAt = opts.expiresAt ?? null;
    if (expiresAt !== null && !(expiresAt.getTime() > Date.now())) throw new NotaryError('invalid_request', 'expires_at must be in the future');
    const collections = opts.collections === undefined || opts.collections === null ? null : [...new Set(opts.collections)];
    if (collections !== null && collections.length === 0) throw new NotaryError('invalid_request', 'a key limited to collections names at least one');
    const generated = generateApiKey(opts.environment ?? 'live');
    const record = await this.repository.insertKey({
      id: newId('key'),
      tenant_id: tenantId,
      key_hash: generated.hash,
      prefix: generated.displayPrefix,
      last4: generated.last4,
      name,
      created_at: nowIso(),
      expires_at: expiresAt ? nowIso(expiresAt) : null,
      scopes: KEY_SCOPES.filter((scope) => scopes.includes(scope)).join(','),
      environment: generated.environment,
      collections: collections === null ? null : JSON.stringify(collections),
    });
    return { key: generated.key, record };
  }

  /** Revokes a key; with `tenantId`, only a key of that tenant (another tenant's key is "not found"). */
  async revokeKey(keyId: string, tenantId?: string): Promise<ApiKeyRecord> {
    const record = await this.repository.revokeKey(keyId, tenantId);
    if (!record) throw new NotaryError('api_key_not_found', `no API key with id ${keyId}`);
    return record;
  }

  /** Operators: tier, suspension and feature overrides of a tenant. */
  async updateTenant(tenantId: string, patch: { tier?: string; suspended?: boolean; features?: readonly string[] | null; collections?: readonly string[] | null; allowPrivateNetworks?: boolean }): Promise<Tenant> {
    const update: { tier?: string; suspended_at?: string | null; features?: string | null; collections?: string | null; allow_private_networks?: number } = {};
    if (patch.tier !== undefined) {
      this.checkTier(patch.tier);
      update.tier = patch.tier;
    }
    if (patch.suspended !== undefined) update.suspended_at = patch.suspended ? nowIso() : null;
    if (patch.features !== undefined) update.features = patch.features === null ? null : JSON.stringify([...new Set(patch.features)]);
    if (patch.allowPrivateNetworks !== undefined) update.allow_private_networks = patch.allowPrivateNetworks ? 1 : 0;
    if (patch.collections !== undefined) update.collections = patch.collections === null ? null : JSON.stringify([...new Set(patch.collections)]);
    const tenant = await this.repository.updateTenant(tenantId, update);
    if (!tenant) throw new NotaryError('tenant_not_found', `no tenant with id ${tenantId}`);
    return tenant;
  }

  /**
   * Grants the tier's monthly credits when the tenant has not had this month's grant yet (at most once per calendar
   * month, UTC, however many nodes ask). Returns the tenant as it is afterwards.
   */
  async applyMonthlyGrant(tenant: Tenant, monthlyCredits: number, now: Date = new Date()): Promise<Tenant> {
    const period = now.toISOString().slice(0, 7);
    if (monthlyCredits <= 0 || (tenant.grant_period !== null && tenant.grant_period >= period)) return tenant;
    const balance = await this.repository.grantMonthly(tenant.id, period, monthlyCredits, `monthly grant ${period} (tier ${tenant.tier})`);
    return balance === undefined ? this.getTenant(tenant.id) : { ...tenant, credits: balance, grant_period: period };
  }

  async ledgerPage(tenantId: string, filter: LedgerFilter): Promise<LedgerEntry[]> {
    return this.repository.ledgerPage(tenantId, filter);
  }

  async listKeys(tenantId?: string): Promise<ApiKeyRecord[]> {
    return this.repository.listKeys(tenantId);
  }

  /**
   * The tenant a presented key belongs to. Shape and checksum are checked before any database work; then the
   * stored hash is looked up and compared in constant time. Throws invalid_api_key or revoked_api_key.
   */
  async authenticate(key: string | ParsedApiKey): Promise<AuthenticatedKey> {
    const parsed = typeof key === 'string' ? parseApiKey(key) : key;
    const found = await this.repository.findKeyByHash(parsed.hash);
    if (!found || !apiKeyHashesEqual(found.key.key_hash, parsed.hash)) {
      throw new NotaryError('invalid_api_key', 'The API key is not known');
    }
    if (found.key.revoked_at !== null) {
      throw new NotaryError('revoked_api_key', `The API key ${found.key.prefix}...${found.key.last4} was revoked at ${found.key.revoked_at}`);
    }
    const now = Date.now();
    if (found.key.expires_at !== null && Date.parse(found.key.expires_at) <= now) {
      throw new NotaryError('expired_api_key', `The API key ${found.key.prefix}...${found.key.last4} expired at ${found.key.expires_at}`);
    }
    if (found.tenant.suspended_at !== null) {
      throw new NotaryError('tenant_suspended', `The tenant ${found.tenant.name} is suspended; ask the operator of this service`);
    }
    const lastUsed = found.key.last_used_at ? Date.parse(found.key.last_used_at) : 0;
    if (now - lastUsed >= this.touchIntervalMs) await this.repository.touchKey(found.key.id, nowIso(new Date(now)));
    return {
      tenant: found.tenant,
      keyId: found.key.id,
      environment: found.key.environment === 'test' ? 'test' : 'live',
      scopes: keyScopes(found.key),
      // The key's own list, narrowed by its tenant's (an operator's limit holds for every key the tenant has or makes).
      collections: narrowCollections(keyCollections(found.key), parseCollectionIds(found.tenant.collections)),
    };
  }

  async grantCredits(tenantId: string, credits: number, reason: string): Promise<{ balance: number }> {
    requireCredits(credits, false);
    const balance = await this.repository.grant(tenantId, credits, reason);
    if (balance === undefined) throw new NotaryError('tenant_not_found', `no tenant with id ${tenantId}`);
    return { balance };
  }

  /**
   * Takes `credits` from the tenant in one atomic step with its ledger row, or throws insufficient_credits with
   * `required_credits` and `available_credits` in `extra`. The balance never goes below zero.
   */
  async debit(request: DebitRequest): Promise<DebitResult> {
    requireCredits(request.credits, true);
    const outcome = await this.repository.debit({
      tenantId: request.tenantId,
      credits: request.credits,
      reason: request.reason ?? 'search',
      requestId: request.requestId,
      keyId: request.keyId ?? null,
      idempotencyKey: request.idempotencyKey ?? null,
      ...(request.usage ? { usage: usageRow(request.usage) } : {}),
    });
    if (outcome.ok) return { balance: outcome.balance, already: outcome.already, ...(outcome.usageRecorded ? { usageRecorded: true as const } : {}) };
    if (outcome.reason === 'tenant_not_found') throw new NotaryError('tenant_not_found', `no tenant with id ${request.tenantId}`);
    throw insufficientCredits(request.credits, outcome.available);
  }

  /**
   * Debits several tenants at once, all or none (one transaction on SQLite and PostgreSQL); a refusal is returned,
   * naming the tenant, so the caller can name the party at fault. See {@link AccountsRepository.debitMany}.
   */
  async debitMany(
    request: { debits: readonly PartyDebit[]; requestId: string; idempotencyKey?: string | null },
    within?: Parameters<AccountsRepository['debitMany']>[1],
  ): Promise<MultiDebitOutcome> {
    if (request.debits.length === 0) throw new NotaryError('invalid_request', 'a multi-party debit needs at least one tenant');
    for (const debit of request.debits) requireCredits(debit.credits, true);
    return this.repository.debitMany(request, within);
  }

  /** Gives credits back once under `key` (the settlement of a hold); see {@link AccountsRepository.creditOnce}. */
  async creditOnce(request: { credits: readonly PartyDebit[]; key: string; requestId: string | null; keyId?: string | null }): Promise<{ already: boolean; deltas: Map<string, number> }> {
    for (const credit of request.credits) requireCredits(credit.credits, true);
    return this.repository.creditOnce(request);
  }

  /** Balances of several tenants in one read (a pre-check only: debits are authoritative). */
  async balances(tenantIds: readonly string[]): Promise<Map<string, number>> {
    return this.repository.balances(tenantIds);
  }

  async ledger(tenantId: string): Promise<LedgerEntry[]> {
    return this.repository.ledger(tenantId);
  }
}

export function insufficientCredits(required: number, available: number): NotaryError {
  return new NotaryError('insufficient_credits', `This call costs ${required} credits; the balance is ${available}`, {
    required_credits: required,
    available_credits: available,
  });
}
