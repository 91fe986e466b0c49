import type { Kysely } from 'kysely';
import { narrowCollections, parseCollectionIds, NotaryError } from '../../../core/index.js';
import { nowIso } from '../../../storage/index.js';
import { PartiesRepository } from './repository.js';
import type { Database, Tenant } from '../../../storage/index.js';
import type { PartyKey } from './tables.js';
import { ED25519_PUBLIC_KEY_LENGTH } from '../../crypto/ed25519.js';
import { fromBase64Url } from '../../crypto/encoding.js';
import { jwkThumbprint } from '../../crypto/jwk.js';
import type { ParsedEnvelope } from './envelope.js';
import { verifyPartySignature } from './envelope.js';
import { mppError } from './errors.js';

export type { PartyKey } from './tables.js';

/** A party key as listed: the key and the name of its tenant. */
export interface PartyKeyListing extends PartyKey {
  tenant: string;
}

/** A party of an envelope whose key and signature were verified. */
export interface VerifiedParty {
  party: string;
  tenant: Tenant;
  kid: string;
  /** The collection ids the key may read; null: every collection. */
  collections: readonly string[] | null;
}

/** The x member of an Ed25519 public JWK (`{"kty":"OKP","crv":"Ed25519","x":...}`), or undefined. */
function jwkX(text: string): string | undefined {
  try {
    const jwk = JSON.parse(text) as Record<string, unknown>;
    return jwk['kty'] === 'OKP' && jwk['crv'] === 'Ed25519' && typeof jwk['x'] === 'string' && jwk['d'] === undefined ? jwk['x'] : undefined;
  } catch {
    return undefined;
  }
}

/** The raw 32 bytes of a base64url Ed25519 public key (or of its public JWK), or invalid_public_key. */
export function parsePublicKey(text: string): Uint8Array {
  const trimmed = text.trim();
  const raw = trimmed.startsWith('{') ? (jwkX(trimmed) ?? '') : trimmed;
  const bytes = fromBase64Url(raw.replace(/={1,2}$/, ''));
  if (!bytes || bytes.length !== ED25519_PUBLIC_KEY_LENGTH) {
    // A private JWK (with "d") is refused without echoing it.
    const shown = trimmed.startsWith('{') ? 'a JWK that is not a public Ed25519 key' : JSON.stringify(trimmed.slice(0, 60));
    throw new NotaryError('invalid_public_key', `the public key must be the raw ${ED25519_PUBLIC_KEY_LENGTH}-byte Ed25519 key in base64url (43 characters) or its public JWK, got ${shown}`);
  }
  return bytes;
}

/**
 * Parties of multi-party payments: tenants (the party's name in an envelope is the tenant's name) with registered
 * Ed25519 public keys, each named by its RFC 7638 thumbprint (kid). Keys are registered, listed and revoked here
 * (the CLI now, the dashboard later) and looked up for every MPP call.
 */
export class Parties {
  readonly repository: PartiesRepository;

  constructor(db: Kysely<Database>) {
    this.repository = new PartiesRepository(db);
  }

  /**
   * Registers a public key for a tenant and returns it with its kid. Registering the same key for the same tenant
   * again returns the existing record; a key registered for another tenant, or revoked, is refused (party_key_exists).
   */
  async addKey(tenant: Tenant, publicKey: string, name?: string, collections?: readonly string[]): Promise<{ key: PartyKey; created: boolean }> {
    const bytes = parsePublicKey(publicKey);
    const kid = jwkThumbprint(bytes);
    if (collections !== undefined && collections.length === 0) throw new NotaryError('invalid_request', 'a party key limited to collections names at least one');
    const limit = collections === undefined ? null : JSON.stringify([...new Set(collections)]);
    const row = { kid, tenant_id: tenant.id, public_key: Buffer.from(bytes).toString('base64url'), name: name ?? null, created_at: nowIso(), collections: limit };
    if (await this.repository.insertKey(row)) return { key: { ...row, revoked_at: null }, created: true };
    const existing = await this.repository.getKey(kid);
    if (!existing) throw new NotaryError('internal_error', `party key ${kid} vanished during registration`);
    if (existing.tenant_id !== tenant.id) throw new NotaryError('party_key_exists', `this public key (kid ${kid}) is registered for another tenant; each party needs its own key`);
    if (existing.revoked_at !== null) throw new NotaryError('party_key_exists', `this public key (kid ${kid}) was revoked at ${existing.revoked_at}; a revoked key cannot be registered again, generate a new one`);
    return { key: existing, created: false };
  }

  /** Revokes a key; with `tenantId` only one of that tenant's (another tenant's kid is not found, as in the dashboard). */
  async revokeKey(kid: string, tenantId?: string): Promise<PartyKey> {
    const key = await this.repository.revokeKey(kid, tenantId);
    if (!key) throw new NotaryError('party_key_not_found', `no party key with kid ${kid}`);
    return key;
  }

  async listKeys(tenants: readonly Tenant[], tenantId?: string): Promise<PartyKeyListing[]> {
    const names = new Map(tenants.map((t) => [t.id, t.name]));
    const keys = await this.repository.listKeys(tenantId);
    return keys.map((key) => ({ ...key, tenant: names.get(key.tenant_id) ?? key.tenant_id }));
  }

  /**
   * Each party of the envelope with its tenant, in envelope order, once its kid is a live key of that tenant and its
   * signature verifies. One query for all keys; a second only to tell an unknown party from an unknown key. Throws
   * the MPP error of the first party at fault.
   */
  async verify(parsed: ParsedEnvelope): Promise<VerifiedParty[]> {
    const parties = parsed.envelope.parties;
    const found = await this.repository.findKeys(parties.map((p) => p.kid));
    const unmatched = parties.filter((p) => found.get(p.kid)?.tenant.name !== p.party).map((p) => p.party);
    const known = unmatched.length > 0 ? await this.repository.existingTenantNames(unmatched) : new Set<string>();
    const verified: VerifiedParty[] = [];
    for (const [index, { party, kid }] of parties.entries()) {
      const entry = found.get(kid);
      if (!entry || entry.tenant.name !== party) {
        if (!known.has(party)) throw mppError('mpp_unknown_party', `No party (tenant) is named "${party}"`, party);
        throw mppError('mpp_unknown_key', `kid ${kid} is not a registered key of party "${party}"`, party, { kid });
      }
      if (entry.key.revoked_at !== null) throw mppError('mpp_key_revoked', `The key ${kid} of party "${party}" was revoked at ${entry.key.revoked_at}`, party, { kid });
      const publicKey = fromBase64Url(entry.key.public_key);
      if (!publicKey || !verifyPartySignature(parsed, index, publicKey)) {
        throw mppError('mpp_bad_signature', `The signature of party "${party}" does not verify with its key ${kid}`, party, { kid });
      }
      if (entry.tenant.suspended_at !== null) {
        throw mppError('tenant_suspended', `The party "${party}" is suspended by the operator of this service; nothing was charged`, party);
      }
      verified.push({ party, tenant: entry.tenant, kid, collections: narrowCollections(parseCollectionIds(entry.key.collections), parseCollectionIds(entry.tenant.collections)) });
    }
    return verified;
  }
}
