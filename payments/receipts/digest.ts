import { createHash } from 'node:crypto';
import { fromBase64, toBase64 } from './encoding.js';
import { canonicalJsonBytes } from './jcs.js';

export function sha256(bytes: Uint8Array | string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest());
}

const DIGEST_PATTERN = /^sha-256=:([A-Za-z0-9+/]{43}=):$/;

/** RFC 9530 `Content-Digest`-style value of SHA-256: `sha-256=:<base64>:`. */
export function formatSha256Digest(digest: Uint8Array): string {
  if (digest.length !== 32) throw new RangeError('a SHA-256 digest is 32 bytes');
  return `sha-256=:${toBase64(digest)}:`;
}

/** The 32 digest bytes of a `sha-256=:<base64>:` value, or null when it is not one. */
export function parseSha256Digest(value: string): Uint8Array | null {
  const match = DIGEST_PATTERN.exec(value);
  const bytes = match?.[1] ? fromBase64(match[1]) : null;
  return bytes && bytes.length === 32 ? bytes : null;
}

/** `request_digest`: SHA-256 of the exact request body bytes as received (an absent body is zero bytes). */
export function requestDigest(body: Uint8Array): string {
  return formatSha256Digest(sha256(body));
}

/**
 * `response_digest`: SHA-256 of the JCS of the response body without its `notary_receipt` member, so any client can
 * recompute it from the JSON it parsed, whatever whitespace or member order the bytes on the wire had.
 */
export function responseDigest(body: Record<string, unknown>): string {
  const { notary_receipt: _receipt, ...rest } = body;
  return formatSha256Digest(sha256(canonicalJsonBytes(rest)));
}
