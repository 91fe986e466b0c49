import { createHash, createHmac, randomBytes } from 'node:crypto';
import { fromBase64, fromBase64Url, toBase64, toBase64Url } from './encoding.js';
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

/**
 * Version 1 `request_digest` (`sha-256=:…:`): SHA-256 of the exact request body bytes. Anyone holding a guessed body
 * can recompute it, so the server no longer issues it; receipts already in the log keep verifying with it.
 */
export function requestDigest(body: Uint8Array): string {
  return formatSha256Digest(sha256(body));
}

/** The response member that carries the request salt of a version 2 receipt (beside `notary_receipt`). */
export const REQUEST_SALT_MEMBER = 'notary_request_salt';

const V2_PREFIX = 'hmac-sha-256=:';
const V2_PATTERN = /^hmac-sha-256=:([A-Za-z0-9+/]{43}=):$/;
const SALT_BYTES = 32;

/** A fresh request salt: 32 random bytes in base64url without padding (43 characters). */
export function newRequestSalt(): string {
  return toBase64Url(new Uint8Array(randomBytes(SALT_BYTES)));
}

/** The 32 bytes of a request salt, or null when it is not one. */
export function parseRequestSalt(salt: string): Uint8Array | null {
  const bytes = fromBase64Url(salt);
  return bytes && bytes.length === SALT_BYTES ? bytes : null;
}

/**
 * Version 2 `request_digest` (`hmac-sha-256=:…:`): HMAC-SHA-256 keyed with the request salt over the exact request
 * body bytes. The salt travels only to the caller (the response's `notary_request_salt`), never into the public log,
 * so a log reader cannot confirm a guessed request; the caller, or an auditor the caller shows the body and salt to,
 * can.
 */
export function saltedRequestDigest(body: Uint8Array, salt: string): string {
  const key = parseRequestSalt(salt);
  if (!key) throw new RangeError('a request salt is 32 bytes in base64url without padding');
  return `${V2_PREFIX}${toBase64(new Uint8Array(createHmac('sha256', key).update(body).digest()))}:`;
}

/** The digest scheme of a `request_digest` value: 1 (plain SHA-256), 2 (salted HMAC), or null when it is neither. */
export function requestDigestVersion(value: string): 1 | 2 | null {
  if (parseSha256Digest(value)) return 1;
  const match = V2_PATTERN.exec(value);
  return match?.[1] && fromBase64(match[1])?.length === 32 ? 2 : null;
}

export type RequestDigestCheck = { ok: true; detail: string } | { ok: false; detail: string };

/**
 * Whether a saved request body (and, for version 2, its salt) is the one a `request_digest` commits to. Each
 * version recomputes with its own rule, so version 1 receipts issued before salts keep verifying.
 */
export function checkRequestDigest(value: string, body: Uint8Array, salt: string | undefined): RequestDigestCheck {
  const version = requestDigestVersion(value);
  if (version === 1) {
    const actual = requestDigest(body);
    return actual === value ? { ok: true, detail: `matches the saved request (version 1, ${actual})` } : { ok: false, detail: `the saved request hashes to ${actual}, the receipt says ${value}` };
  }
  if (version === null) return { ok: false, detail: `request_digest ${JSON.stringify(value.slice(0, 80))} is neither sha-256=:…: nor hmac-sha-256=:…:` };
  if (salt === undefined) return { ok: false, detail: `a version 2 request_digest needs the request salt: give the saved response body (its ${REQUEST_SALT_MEMBER} member)` };
  if (!parseRequestSalt(salt)) return { ok: false, detail: `${REQUEST_SALT_MEMBER} is not 32 bytes in base64url` };
  const actual = saltedRequestDigest(body, salt);
  return actual === value ? { ok: true, detail: `matches the saved request and salt (version 2, ${actual})` } : { ok: false, detail: `the saved request and salt give ${actual}, the receipt says ${value}` };
}

/**
 * `response_digest`: SHA-256 of the JCS of the response body without its `notary_receipt` member, so any client can
 * recompute it from the JSON it parsed, whatever whitespace or member order the bytes on the wire had.
 */
export function responseDigest(body: Record<string, unknown>): string {
  const { notary_receipt: _receipt, ...rest } = body;
  return formatSha256Digest(sha256(canonicalJsonBytes(rest)));
}
