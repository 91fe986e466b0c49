import type { Selectable } from 'kysely';
import type { Timestamp } from '../../../storage/index.js';

/** An Ed25519 public key a tenant signs MPP envelopes with (issue 16). */
export interface PartyKeysTable {
  /** RFC 7638 thumbprint of the key: what an envelope names. */
  kid: string;
  tenant_id: string;
  /** The raw 32-byte public key, base64url without padding. */
  public_key: string;
  name: string | null;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  /** JSON list of the collection ids the key may read (core/collections.ts); null: every collection. */
  collections: string | null;
}

/** MPP envelope nonces, each usable once until its envelope expires. */
export interface MppNoncesTable {
  nonce: string;
  env_id: string;
  /** The call whose charge used the nonce. */
  request_id: string;
  /** When the envelope expires; the row may go some time after. */
  expires_at: Timestamp;
  created_at: Timestamp;
}

declare module '../../../storage/schema.js' {
  interface Database {
    party_keys: PartyKeysTable;
    mpp_nonces: MppNoncesTable;
  }
}

export type PartyKey = Selectable<PartyKeysTable>;
