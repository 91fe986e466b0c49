import { createHash, createPublicKey } from 'node:crypto';
import { NotaryError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { nowIso } from '../storage/db.js';
import type { PartyKeysRepository } from '../storage/party-keys.js';
import type { PartyKeyRow } from '../storage/schema.js';

export type { PartyKeyRow } from '../storage/schema.js';

const BASE64URL_32 = /^[A-Za-z0-9_-]{43}$/;

/** RFC 7638 thumbprint of an Ed25519 public key (x: base64url of its 32 bytes): base64url SHA-256 of the canonical JWK. */
export function ed25519Thumbprint(x: string): string {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}

/**
 * The raw public key (base64url, 32 bytes) from what a person pastes: the raw key in base64url or base64, or a JWK
 * (`{"kty":"OKP","crv":"Ed25519","x":...}`). Throws invalid_public_key.
 */
export function parseEd25519PublicKey(input: unknown): string {
  let x: string | undefined;
  const text = typeof input === 'string' ? input.trim() : '';
  if (text.startsWith('{')) {
    try {
      const jwk = JSON.parse(text) as Record<string, unknown>;
      if (jwk['kty'] === 'OKP' && jwk['crv'] === 'Ed25519' && typeof jwk['x'] === 'string') x = jwk['x'];
    } catch {
      x = undefined;
    }
  } else if (text) {
    x = Buffer.from(text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url').toString('base64url');
    if (x.length !== 43) x = undefined;
  }
  if (x === undefined || !BASE64URL_32.test(x)) {
    throw new NotaryError('invalid_public_key', 'Paste the raw 32-byte Ed25519 public key in base64url (43 characters), or its JWK');
  }
  try {
    createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  } catch {
    throw new NotaryError('invalid_public_key', 'This is not a valid Ed25519 public key');
  }
  return x;
}

/** Ed25519 public keys of a tenant's MPP parties: register, list, revoke; the MPP mode finds them by kid. */
export class PartyKeys {
  constructor(private readonly repository: PartyKeysRepository) {}

  async register(tenantId: string, publicKey: unknown, label?: unknown): Promise<PartyKeyRow> {
    const x = parseEd25519PublicKey(publicKey);
    const name = typeof label === 'string' ? label.trim() : '';
    if (name.length > 100) throw new NotaryError('invalid_request', 'a label is at most 100 characters');
    const row: PartyKeyRow = { id: newId('pkey'), tenant_id: tenantId, kid: ed25519Thumbprint(x), public_key: x, label: name || null, created_at: nowIso(), revoked_at: null };
    if (!(await this.repository.insert(row))) throw new NotaryError('party_key_exists', `The key ${row.kid} is registered already`, { kid: row.kid });
    return row;
  }

  async list(tenantId: string): Promise<PartyKeyRow[]> {
    return this.repository.list(tenantId);
  }

  async revoke(id: string, tenantId: string): Promise<PartyKeyRow> {
    const row = await this.repository.revoke(id, tenantId, nowIso());
    if (!row) throw new NotaryError('party_key_not_found', `no party key with id ${id}`);
    return row;
  }

  /** The registered key with this kid (revoked ones too: the caller decides). */
  async byKid(kid: string): Promise<PartyKeyRow | undefined> {
    return this.repository.byKid(kid);
  }
}
