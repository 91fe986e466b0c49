import { fromBase64Url, sha256, toBase64Url, utf8 } from './encoding.js';

/** A public Ed25519 key as published in a JWKS (RFC 8037), with the service's validity window in seconds. */
export interface Ed25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid?: string;
  alg?: string;
  use?: string;
  /** Not valid before (Unix seconds). */
  nbf?: number;
  /** Not valid after (Unix seconds): a retired key. */
  exp?: number;
}

export interface Jwks {
  keys: Ed25519Jwk[];
}

/** RFC 7638 thumbprint of an Ed25519 public key (its `kid` in notary's key sets). */
export async function jwkThumbprint(publicKey: Uint8Array | string): Promise<string> {
  const x = typeof publicKey === 'string' ? publicKey : toBase64Url(publicKey);
  return toBase64Url(await sha256(utf8.encode(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`)));
}

export function jwkPublicKey(jwk: Ed25519Jwk): Uint8Array {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') throw new Error(`key ${jwk.kid ?? '?'} is not an Ed25519 key`);
  const key = fromBase64Url(jwk.x);
  if (key.length !== 32) throw new Error(`key ${jwk.kid ?? '?'} is not 32 bytes`);
  return key;
}
