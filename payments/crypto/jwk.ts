import { sha256 } from './digest.js';
import { ED25519_PUBLIC_KEY_LENGTH } from './ed25519.js';
import { fromBase64Url, toBase64Url } from './encoding.js';

/** A public Ed25519 key as published in the JWKS (RFC 8037), with its validity window in NumericDate seconds. */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
  /** Not before: the first second receipts may carry this key. */
  nbf: number;
  /** Expiry: the last second receipts may carry this key; absent on the current key. */
  exp?: number;
}

export interface Jwks {
  keys: PublicJwk[];
}

/**
 * RFC 7638 thumbprint of an Ed25519 public key: SHA-256 of `{"crv":"Ed25519","kty":"OKP","x":"..."}` (the required
 * members in lexicographic order, no whitespace), base64url without padding.
 */
export function jwkThumbprint(publicKey: Uint8Array): string {
  if (publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) throw new RangeError('an Ed25519 public key is 32 bytes');
  const members = `{"crv":"Ed25519","kty":"OKP","x":"${toBase64Url(publicKey)}"}`;
  return toBase64Url(sha256(members));
}

/** A key of a JWKS that verifies receipts, decoded. */
export interface VerificationKey {
  kid: string;
  publicKey: Uint8Array;
  /** Seconds since the epoch, inclusive. */
  notBefore: number;
  /** Seconds since the epoch, inclusive; null while the key is current. */
  notAfter: number | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads the Ed25519 signing keys of a JWKS document. Keys of other types are skipped (a JWKS may list others); an
 * Ed25519 key whose kid is not the thumbprint of its `x`, or whose window is malformed, is an error: it would let
 * a receipt name one key and be checked against another.
 */
export function parseJwks(document: unknown): VerificationKey[] {
  if (!isRecord(document) || !Array.isArray(document['keys'])) throw new Error('not a JWKS document (no "keys" array)');
  const keys: VerificationKey[] = [];
  for (const [i, entry] of document['keys'].entries()) {
    if (!isRecord(entry) || entry['kty'] !== 'OKP' || entry['crv'] !== 'Ed25519') continue;
    const x = typeof entry['x'] === 'string' ? fromBase64Url(entry['x']) : null;
    if (!x || x.length !== ED25519_PUBLIC_KEY_LENGTH) throw new Error(`JWKS key ${i}: "x" is not a 32-byte base64url Ed25519 public key`);
    const kid = entry['kid'];
    if (typeof kid !== 'string' || kid !== jwkThumbprint(x)) throw new Error(`JWKS key ${i}: "kid" is not the RFC 7638 thumbprint of its key`);
    if (entry['alg'] !== undefined && entry['alg'] !== 'EdDSA') throw new Error(`JWKS key ${kid}: "alg" must be EdDSA`);
    if (entry['use'] !== undefined && entry['use'] !== 'sig') throw new Error(`JWKS key ${kid}: "use" must be sig`);
    const nbf = entry['nbf'];
    const exp = entry['exp'];
    if (!Number.isSafeInteger(nbf)) throw new Error(`JWKS key ${kid}: "nbf" (valid from, seconds) is missing or not an integer`);
    if (exp !== undefined && (!Number.isSafeInteger(exp) || (exp as number) < (nbf as number))) {
      throw new Error(`JWKS key ${kid}: "exp" must be an integer not before "nbf"`);
    }
    keys.push({ kid, publicKey: x, notBefore: nbf as number, notAfter: exp === undefined ? null : (exp as number) });
  }
  return keys;
}
