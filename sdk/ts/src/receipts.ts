import { parseSignature, verifyEd25519 } from './ed25519.js';
import { saltedRequestDigest, sha256Digest, utf8 } from './encoding.js';
import { canonicalJson } from './jcs.js';
import { jwkPublicKey, type Jwks } from './jwk.js';

/** The signed receipt of a call made with `X-Notary-Sign: required`. */
export interface NotaryReceipt {
  issuer: string;
  /** `YYYY-MM-DDTHH:MM:SSZ`. */
  issued_at: string;
  claim: 'search_call_consumed' | 'extract_call_consumed' | string;
  credits: number;
  /** RFC 7638 thumbprint of the signing key in the issuer's JWKS. */
  kid: string;
  request_id: string;
  /**
   * `hmac-sha-256=:<base64>:` (version 2): HMAC-SHA-256 of the exact request body bytes keyed with the response's
   * `notary_request_salt`; `sha-256=:<base64>:` (version 1, before salts): SHA-256 of the body.
   */
  request_digest: string;
  /** `sha-256=:<base64>:` of the JCS of the response body without `notary_receipt`. */
  response_digest: string;
  /** `ed25519:<base64url>`. */
  signature: string;
}

export const RECEIPT_SIGNING_PREFIX = 'notary-receipt-v1\n';

export interface ReceiptCheck {
  name: 'form' | 'kid' | 'key_validity' | 'signature' | 'response_digest' | 'request_digest';
  ok: boolean;
  detail: string;
}

export interface ReceiptVerification {
  valid: boolean;
  receipt: NotaryReceipt | null;
  checks: ReceiptCheck[];
}

const ISSUED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** `YYYY-MM-DDTHH:MM:SSZ` in Unix seconds, or null. */
export function parseIssuedAt(value: string): number | null {
  if (!ISSUED_AT.test(value)) return null;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || `${new Date(ms).toISOString().slice(0, 19)}Z` !== value) return null;
  return ms / 1000;
}

/** The exact bytes the receipt's signature covers: the prefix line, then the JCS of the receipt without `signature`. */
export function receiptSigningInput(receipt: Omit<NotaryReceipt, 'signature'> & { signature?: string }): Uint8Array {
  const { signature: _signature, ...unsigned } = receipt;
  return utf8.encode(RECEIPT_SIGNING_PREFIX + canonicalJson(unsigned));
}

/** `response_digest` of a response body: SHA-256 of the JCS of the body without `notary_receipt`. */
export async function responseDigest(body: Readonly<Record<string, unknown>>): Promise<string> {
  const { notary_receipt: _receipt, ...rest } = body;
  return sha256Digest(canonicalJson(rest));
}

function isReceipt(value: unknown): value is NotaryReceipt {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    ['issuer', 'issued_at', 'claim', 'kid', 'request_id', 'request_digest', 'response_digest', 'signature'].every((k) => typeof r[k] === 'string') &&
    Number.isSafeInteger(r['credits'])
  );
}

export interface VerifyReceiptOptions {
  /** The exact request body bytes the call sent: checks `request_digest` too. */
  requestBody?: Uint8Array | string;
  /** The request salt of a version 2 receipt; by default the body's `notary_request_salt`. */
  requestSalt?: string;
}

/**
 * The `request_digest` a request body gives under the scheme of `receiptDigest` (version 2 `hmac-sha-256=:` needs the
 * salt; version 1 `sha-256=:` is plain SHA-256), or null when the salt is missing or malformed.
 */
export async function requestDigestFor(receiptDigest: string, requestBody: Uint8Array | string, salt: unknown): Promise<string | null> {
  if (!receiptDigest.startsWith('hmac-sha-256=:')) return sha256Digest(requestBody);
  if (typeof salt !== 'string') return null;
  try {
    return await saltedRequestDigest(requestBody, salt);
  } catch {
    return null;
  }
}

/**
 * Verifies a signed response offline against a JWKS: the key named by `kid` exists and was valid at `issued_at`, the
 * Ed25519 signature holds, the body is the one signed (`response_digest`), and with `requestBody` the request too.
 * `body` is the parsed response body with its `notary_receipt` (or its text, exactly as received).
 */
export async function verifyReceipt(body: Readonly<Record<string, unknown>> | string, jwks: Jwks, options: VerifyReceiptOptions = {}): Promise<ReceiptVerification> {
  const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as Record<string, unknown>;
  const checks: ReceiptCheck[] = [];
  const done = (receipt: NotaryReceipt | null) => ({ valid: checks.length > 0 && checks.every((c) => c.ok), receipt, checks });
  const receipt = parsed['notary_receipt'];
  if (!isReceipt(receipt)) {
    checks.push({ name: 'form', ok: false, detail: 'the body has no well-formed notary_receipt' });
    return done(null);
  }
  const issuedAt = parseIssuedAt(receipt.issued_at);
  const signature = parseSignature(receipt.signature);
  checks.push({
    name: 'form',
    ok: issuedAt !== null && signature !== null,
    detail: issuedAt === null ? `issued_at ${receipt.issued_at} is not YYYY-MM-DDTHH:MM:SSZ` : signature === null ? 'signature is not ed25519:<base64url>' : 'well-formed',
  });
  const key = jwks.keys.find((k) => k.kid === receipt.kid);
  checks.push({ name: 'kid', ok: key !== undefined, detail: key ? `key ${receipt.kid} is published` : `no key ${receipt.kid} in the JWKS` });
  if (key && issuedAt !== null) {
    const valid = (key.nbf === undefined || issuedAt >= key.nbf) && (key.exp === undefined || issuedAt <= key.exp);
    checks.push({ name: 'key_validity', ok: valid, detail: `issued_at ${receipt.issued_at} is ${valid ? 'within' : 'outside'} the key's validity window` });
  }
  if (key && signature) {
    let ok = false;
    try {
      ok = await verifyEd25519(signature, receiptSigningInput(receipt), jwkPublicKey(key));
    } catch {
      ok = false;
    }
    checks.push({ name: 'signature', ok, detail: ok ? 'Ed25519 signature verifies' : 'the signature does not verify: the receipt was changed or not signed by this key' });
  }
  const digest = await responseDigest(parsed);
  checks.push({
    name: 'response_digest',
    ok: digest === receipt.response_digest,
    detail: digest === receipt.response_digest ? 'the body is the one signed' : 'the response body was changed after signing',
  });
  if (options.requestBody !== undefined) {
    const requestDigest = await requestDigestFor(receipt.request_digest, options.requestBody, options.requestSalt ?? parsed['notary_request_salt']);
    checks.push({
      name: 'request_digest',
      ok: requestDigest === receipt.request_digest,
      detail:
        requestDigest === null
          ? 'no valid notary_request_salt: keep the response body as received (it holds the salt the request_digest is keyed with)'
          : requestDigest === receipt.request_digest
            ? 'the request body is the one signed'
            : 'the receipt is for another request body (or another salt)',
    });
  }
  return done(receipt);
}

/** RFC 6962 leaf of a receipt in the receipt log: the JCS of the signed receipt. */
export function receiptLeaf(receipt: NotaryReceipt): Uint8Array {
  return utf8.encode(canonicalJson(receipt));
}
