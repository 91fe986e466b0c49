import * as ed from '@noble/ed25519';
import { fromBase64Url, toBase64Url } from './encoding.js';

/** `ed25519:<base64url, no padding>` of 64 signature bytes, or null. */
export function parseSignature(text: string): Uint8Array | null {
  if (!/^ed25519:[A-Za-z0-9_-]{86}$/.test(text)) return null;
  try {
    return fromBase64Url(text.slice('ed25519:'.length));
  } catch {
    return null;
  }
}

export function formatSignature(signature: Uint8Array): string {
  return `ed25519:${toBase64Url(signature)}`;
}

/** Pure Ed25519 (RFC 8032) verification; false on any malformed input. */
export async function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): Promise<boolean> {
  try {
    return await ed.verifyAsync(signature, message, publicKey);
  } catch {
    return false;
  }
}

export async function signEd25519(message: Uint8Array, seed: Uint8Array): Promise<Uint8Array> {
  return ed.signAsync(message, seed);
}

export async function publicKeyFromSeed(seed: Uint8Array): Promise<Uint8Array> {
  return ed.getPublicKeyAsync(seed);
}

/** A fresh 32-byte Ed25519 private key (seed). */
export function randomSeed(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(32));
}
