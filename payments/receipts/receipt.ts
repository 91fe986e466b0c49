import { checkRequestDigest, parseSha256Digest, REQUEST_SALT_MEMBER, requestDigestVersion, responseDigest, saltedRequestDigest } from '../crypto/digest.js';
import { formatSignature, parseSignature, signBytes, verifyBytes } from '../crypto/ed25519.js';
import { canonicalJson } from '../crypto/jcs.js';
import type { VerificationKey } from '../crypto/jwk.js';

/** Domain separation: the signed bytes of a receipt start with this line. */
export const RECEIPT_SIGNING_PREFIX = 'notary-receipt-v1\n';

export const RECEIPT_CLAIMS = ['search_call_consumed', 'extract_call_consumed', 'map_call_consumed'] as const;
export type ReceiptClaim = (typeof RECEIPT_CLAIMS)[number];

/** `notary_receipt` as it travels in a response (field-notes §5). */
export interface NotaryReceipt {
  issuer: string;
  /** `YYYY-MM-DDTHH:MM:SSZ`, UTC, no fractions. */
  issued_at: string;
  claim: string;
  credits: number;
  /** RFC 7638 thumbprint of the signing key. */
  kid: string;
  request_id: string;
  /**
   * `hmac-sha-256=:<base64>:` (version 2): HMAC-SHA-256 of the exact request body bytes keyed with the request salt
   * that only the response carries (`notary_request_salt`). `sha-256=:<base64>:` (version 1, issued before salts):
   * SHA-256 of the body.
   */
  request_digest: string;
  /** `sha-256=:<base64>:` of the JCS of the response body without `notary_receipt`. */
  response_digest: string;
  /** `ed25519:<base64url>` over {@link RECEIPT_SIGNING_PREFIX} + JCS(receipt without signature). */
  signature: string;
}

export type UnsignedReceipt = Omit<NotaryReceipt, 'signature'>;

const ISSUED_AT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;

/** `YYYY-MM-DDTHH:MM:SSZ` of a time, fractions dropped. */
export function formatIssuedAt(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** Seconds since the epoch of an `issued_at` value, or null when it is not one (or not a real date). */
export function parseIssuedAt(value: string): number | null {
  if (!ISSUED_AT.test(value)) return null;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || formatIssuedAt(new Date(ms)) !== value) return null;
  return ms / 1000;
}

/** The exact bytes an Ed25519 receipt signature covers. */
export function receiptSigningInput(receipt: UnsignedReceipt | NotaryReceipt): Uint8Array {
  const { signature: _signature, ...unsigned } = receipt as NotaryReceipt;
  return new TextEncoder().encode(RECEIPT_SIGNING_PREFIX + canonicalJson(unsigned));
}

export interface ReceiptFields {
  issuer: string;
  issuedAt: Date;
  claim: ReceiptClaim;
  credits: number;
  kid: string;
  requestId: string;
  /** The exact request body bytes as received. */
  requestBody: Uint8Array;
  /** The request salt ({@link newRequestSalt}); the response carries it as `notary_request_salt`. */
  requestSalt: string;
  /** The response body as it will be serialised, without `notary_receipt` and `notary_request_salt`. */
  responseBody: Record<string, unknown>;
}

/** The response body a receipt's `response_digest` covers: the body with its request salt member. */
export function saltedResponseBody(body: Record<string, unknown>, salt: string): Record<string, unknown> {
  return { ...body, [REQUEST_SALT_MEMBER]: salt };
}

export function buildUnsignedReceipt(fields: ReceiptFields): UnsignedReceipt {
  if (!Number.isSafeInteger(fields.credits) || fields.credits < 0) throw new RangeError(`credits must be a non-negative integer, got ${fields.credits}`);
  if (!RECEIPT_CLAIMS.includes(fields.claim)) throw new RangeError(`unknown receipt claim "${fields.claim}"`);
  if (fields.issuer.length === 0 || fields.requestId.length === 0) throw new RangeError('issuer and request_id must be non-empty');
  return {
    issuer: fields.issuer,
    issued_at: formatIssuedAt(fields.issuedAt),
    claim: fields.claim,
    credits: fields.credits,
    kid: fields.kid,
    request_id: fields.requestId,
    request_digest: saltedRequestDigest(fields.requestBody, fields.requestSalt),
    response_digest: responseDigest(saltedResponseBody(fields.responseBody, fields.requestSalt)),
  };
}

export function signReceipt(unsigned: UnsignedReceipt, seed: Uint8Array): NotaryReceipt {
  const signature = signBytes(receiptSigningInput(unsigned), seed);
  return { ...unsigned, signature: formatSignature(signature) };
}

export type ReceiptCheckName = 'shape' | 'kid' | 'key_validity' | 'signature' | 'response_digest' | 'request_digest';

export interface ReceiptCheck {
  name: ReceiptCheckName;
  /** null: not checked (e.g. no saved request body was given). */
  ok: boolean | null;
  detail: string;
}

export interface ReceiptVerification {
  ok: boolean;
  checks: ReceiptCheck[];
  receipt: NotaryReceipt | null;
  key: VerificationKey | null;
}

const STRING_FIELDS = ['issuer', 'issued_at', 'claim', 'kid', 'request_id', 'request_digest', 'response_digest', 'signature'] as const;

/** The receipt's fields with their types checked, or the reason it is not a receipt. */
export function readReceipt(value: unknown): { receipt: NotaryReceipt } | { error: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'notary_receipt is not a JSON object' };
  const record = value as Record<string, unknown>;
  for (const field of STRING_FIELDS) {
    if (typeof record[field] !== 'string' || (record[field] as string).length === 0) return { error: `"${field}" is missing or not a non-empty string` };
  }
  if (!Number.isSafeInteger(record['credits']) || (record['credits'] as number) < 0) return { error: '"credits" is not a non-negative integer' };
  const receipt = record as unknown as NotaryReceipt;
  if (parseIssuedAt(receipt.issued_at) === null) return { error: `"issued_at" ${JSON.stringify(receipt.issued_at)} is not YYYY-MM-DDTHH:MM:SSZ` };
  if (requestDigestVersion(receipt.request_digest) === null) return { error: '"request_digest" is neither hmac-sha-256=:<base64>: nor sha-256=:<base64>:' };
  if (!parseSha256Digest(receipt.response_digest)) return { error: '"response_digest" is not sha-256=:<base64>:' };
  if (!parseSignature(receipt.signature)) return { error: '"signature" is not ed25519:<64 bytes in base64url>' };
  return { receipt };
}

export interface VerifyReceiptInput {
  receipt: unknown;
  keys: VerificationKey[];
  /** The saved response body; its `notary_receipt` member is ignored for the digest. */
  responseBody?: Record<string, unknown>;
  /** The exact bytes of the request body that was sent. */
  requestBody?: Uint8Array;
  /** The request salt of a version 2 receipt; by default the saved response body's `notary_request_salt`. */
  requestSalt?: string;
}

function isoSeconds(seconds: number): string {
  return formatIssuedAt(new Date(seconds * 1000));
}

/**
 * Every offline check of a receipt: its shape, that its kid names a published key, that the key was valid at
 * issued_at, the Ed25519 signature, and (when given) the digests of the saved response body and request bytes.
 * All checks run, so a report lists every problem, not only the first.
 */
export function verifyReceipt(input: VerifyReceiptInput): ReceiptVerification {
  const checks: ReceiptCheck[] = [];
  const read = readReceipt(input.receipt);
  if ('error' in read) {
    checks.push({ name: 'shape', ok: false, detail: read.error });
    return { ok: false, checks, receipt: null, key: null };
  }
  const receipt = read.receipt;
  checks.push({ name: 'shape', ok: true, detail: `claim ${receipt.claim}, ${receipt.credits} credits, request ${receipt.request_id}, issuer ${receipt.issuer}` });

  const key = input.keys.find((k) => k.kid === receipt.kid) ?? null;
  checks.push(
    key
      ? { name: 'kid', ok: true, detail: `${receipt.kid} is a published key (${key.notAfter === null ? 'current' : 'retired'})` }
      : { name: 'kid', ok: false, detail: `kid ${receipt.kid} is not in the key set` },
  );

  if (key) {
    const issuedAt = parseIssuedAt(receipt.issued_at) ?? Number.NaN;
    const window = `${isoSeconds(key.notBefore)} .. ${key.notAfter === null ? 'now' : isoSeconds(key.notAfter)}`;
    const valid = issuedAt >= key.notBefore && (key.notAfter === null || issuedAt <= key.notAfter);
    checks.push({ name: 'key_validity', ok: valid, detail: `issued_at ${receipt.issued_at} ${valid ? 'is within' : 'is outside'} the key's validity ${window}` });
    const signature = parseSignature(receipt.signature);
    const good = signature !== null && verifyBytes(signature, receiptSigningInput(receipt), key.publicKey);
    checks.push({ name: 'signature', ok: good, detail: good ? 'Ed25519 signature over notary-receipt-v1 + JCS(receipt) verifies' : 'Ed25519 signature does not verify' });
  } else {
    checks.push({ name: 'key_validity', ok: null, detail: 'not checked: no key' });
    checks.push({ name: 'signature', ok: false, detail: 'cannot verify: the signing key is unknown' });
  }

  if (input.responseBody) {
    let actual: string;
    try {
      actual = responseDigest(input.responseBody);
    } catch (err) {
      actual = `(cannot canonicalize the body: ${err instanceof Error ? err.message : String(err)})`;
    }
    const same = actual === receipt.response_digest;
    checks.push({ name: 'response_digest', ok: same, detail: same ? `matches the saved body (${actual})` : `the saved body hashes to ${actual}, the receipt says ${receipt.response_digest}` });
  } else {
    checks.push({ name: 'response_digest', ok: null, detail: 'not checked: no saved response body' });
  }
  if (input.requestBody) {
    const saved = input.responseBody?.[REQUEST_SALT_MEMBER];
    const salt = input.requestSalt ?? (typeof saved === 'string' ? saved : undefined);
    const check = checkRequestDigest(receipt.request_digest, input.requestBody, salt);
    checks.push({ name: 'request_digest', ok: check.ok, detail: check.detail });
  } else {
    checks.push({ name: 'request_digest', ok: null, detail: 'not checked: no saved request body' });
  }
  return { ok: checks.every((c) => c.ok !== false), checks, receipt, key };
}
