import { createHash, randomBytes } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { fromBase64Url, toBase64Url } from './encoding.js';

// @noble/ed25519's synchronous API needs a SHA-512; Node's is native and fast.
ed.hashes.sha512 = (message: Uint8Array) => new Uint8Array(createHash('sha512').update(message).digest());

export const ED25519_SEED_LENGTH = 32;
export const ED25519_PUBLIC_KEY_LENGTH = 32;
export const ED25519_SIGNATURE_LENGTH = 64;
const SIGNATURE_PREFIX = 'ed25519:';

export function generateSeed(): Uint8Array {
  return new Uint8Array(randomBytes(ED25519_SEED_LENGTH));
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return ed.getPublicKey(seed);
}

/** Pure Ed25519 (RFC 8032) signature of `message`. */
export function signBytes(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return ed.sign(message, seed);
}

/** RFC 8032 verification with canonical encodings required (zip215: false), as OpenSSL and libsodium do. */
export function verifyBytes(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== ED25519_SIGNATURE_LENGTH || publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) return false;
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** `ed25519:<base64url, no padding>`. */
export function formatSignature(signature: Uint8Array): string {
  return `${SIGNATURE_PREFIX}${toBase64Url(signature)}`;
}

/** The 64 signature bytes of an `ed25519:` value, or null when it is malformed. */
export function parseSignature(value: string): Uint8Array | null {
  if (!value.startsWith(SIGNATURE_PREFIX)) return null;
  const bytes = fromBase64Url(value.slice(SIGNATURE_PREFIX.length));
  return bytes && bytes.length === ED25519_SIGNATURE_LENGTH ? bytes : null;
}
