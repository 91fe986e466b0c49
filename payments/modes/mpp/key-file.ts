import { createPrivateKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { generateSeed, publicKeyFromSeed } from '../../crypto/ed25519.js';
import { bytesEqual, fromBase64Url, toBase64Url } from '../../crypto/encoding.js';
import { jwkThumbprint } from '../../crypto/jwk.js';

/** A party's Ed25519 key pair as a private JWK (RFC 8037), the form `notary mpp keygen` writes. */
export interface PartyKeyFile {
  kty: 'OKP';
  crv: 'Ed25519';
  /** Public key, base64url: what `notary parties add-key --public-key` takes. */
  x: string;
  /** Private key (the 32-byte seed), base64url. */
  d: string;
  /** RFC 7638 thumbprint of the public key: what envelopes name. */
  kid: string;
}

function keyFileOf(seed: Uint8Array): PartyKeyFile {
  const publicKey = publicKeyFromSeed(seed);
  return { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(publicKey), d: toBase64Url(seed), kid: jwkThumbprint(publicKey) };
}

export function generatePartyKey(): PartyKeyFile {
  return keyFileOf(generateSeed());
}

/** Writes a private key file readable by its owner only; refuses to overwrite unless asked. */
export function writePartyKeyFile(file: string, key: PartyKeyFile, overwrite = false): void {
  writeFileSync(file, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600, flag: overwrite ? 'w' : 'wx' });
}

/**
 * Reads a party's private key: a private JWK (`notary mpp keygen`) or a PKCS#8 PEM file (`openssl genpkey -algorithm
 * ed25519`). Returns the seed and the key file form; throws an Error that says what is wrong with the file.
 */
export function readPartyKeyFile(file: string): { seed: Uint8Array; key: PartyKeyFile } {
  const text = readFileSync(file, 'utf8');
  let d: unknown;
  let x: unknown;
  if (text.includes('-----BEGIN')) {
    let jwk: { crv?: string; d?: string; x?: string };
    try {
      jwk = createPrivateKey(text).export({ format: 'jwk' }) as typeof jwk;
    } catch (err) {
      throw new Error(`${file}: not a readable PEM private key (${err instanceof Error ? err.message : String(err)})`);
    }
    if (jwk.crv !== 'Ed25519') throw new Error(`${file}: the PEM key is not an Ed25519 key`);
    ({ d, x } = jwk);
  } else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${file}: neither a private JWK (JSON) nor a PEM private key`);
    }
    const jwk = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
    if (jwk['kty'] !== 'OKP' || jwk['crv'] !== 'Ed25519') throw new Error(`${file}: the JWK is not an Ed25519 key (kty OKP, crv Ed25519)`);
    ({ d, x } = jwk);
  }
  const seed = typeof d === 'string' ? fromBase64Url(d) : null;
  if (!seed || seed.length !== 32) throw new Error(`${file}: the private key ("d") is not 32 bytes of base64url`);
  const key = keyFileOf(seed);
  const stated = typeof x === 'string' ? fromBase64Url(x) : null;
  if (x !== undefined && (!stated || !bytesEqual(stated, fromBase64Url(key.x) ?? new Uint8Array()))) {
    throw new Error(`${file}: the public key ("x") does not belong to the private key ("d")`);
  }
  return { seed, key };
}
