import { z } from 'zod';
import { NotaryError } from '../../../core/index.js';
import { formatSignature, generateSeed, parseSignature, publicKeyFromSeed, signBytes, verifyBytes } from '../../crypto/ed25519.js';
import { fromBase64Url, toBase64Url } from '../../crypto/encoding.js';
import { canonicalJson } from '../../crypto/jcs.js';
import { jwkThumbprint, type PublicJwk } from '../../crypto/jwk.js';
import './errors.js'; // registers the x402_* error codes this file throws

export { generateSeed };

/**
 * The interface's X-402-Receipt: a settlement receipt signed by a facilitator the operator trusts.
 *
 * Wire format (one format, documented in docs/payments-x402.md): the header value is base64url (no padding) of the UTF-8 JSON
 * of the receipt. The signature is pure Ed25519 over the UTF-8 bytes of `"x402-settlement-receipt-v1\n"` followed by
 * the RFC 8785 (JCS) serialization of the receipt without its `signature` member, written `ed25519:<base64url>`.
 * Addresses and the transaction hash are lower-case hex; `amount` is in the asset's smallest units; `settled_at` is
 * `YYYY-MM-DDTHH:MM:SSZ`; `kid` is the RFC 7638 thumbprint of the signing key, published by the facilitator in its
 * JWKS at `/.well-known/jwks.json`.
 */
export const RECEIPT_DOMAIN = 'x402-settlement-receipt-v1\n';
export const RECEIPT_TYPE = 'x402-settlement-receipt' as const;
/** Longest X-402-Receipt header accepted (a receipt is about 700 bytes encoded). */
export const MAX_RECEIPT_HEADER = 4096;

const hex = (bytes: number) => z.string().regex(new RegExp(`^0x[0-9a-f]{${bytes * 2}}$`), `must be lower-case 0x hex of ${bytes} bytes`);

export const settlementReceiptSchema = z
  .object({
    v: z.literal(1),
    typ: z.literal(RECEIPT_TYPE),
    iss: z.string().min(1).max(200),
    kid: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
    /** The nonce of the notary challenge this settlement pays for. */
    challenge: z.string().min(1).max(200),
    network: z.string().regex(/^eip155:[1-9]\d*$/),
    asset: hex(20),
    amount: z.string().regex(/^(0|[1-9]\d{0,77})$/),
    pay_to: hex(20),
    payer: hex(20),
    transaction: hex(32),
    settled_at: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
    signature: z.string().regex(/^ed25519:[A-Za-z0-9_-]{86}$/),
  })
  .strict();

export type SettlementReceipt = z.infer<typeof settlementReceiptSchema>;
export type ReceiptClaims = Omit<SettlementReceipt, 'v' | 'typ' | 'kid' | 'signature'>;

/** An Ed25519 public key as a JWK (RFC 8037), with its RFC 7638 thumbprint as `kid` (no validity window). */
export type Ed25519Jwk = Omit<PublicJwk, 'nbf' | 'exp'>;

export function publicJwk(publicKey: Uint8Array): Ed25519Jwk {
  return { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(publicKey), kid: jwkThumbprint(publicKey), alg: 'EdDSA', use: 'sig' };
}

export function signedBytes(receipt: Omit<SettlementReceipt, 'signature'>): Uint8Array {
  return new TextEncoder().encode(RECEIPT_DOMAIN + canonicalJson(receipt));
}

export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** Signs a settlement receipt with a 32-byte Ed25519 seed. */
export function signReceipt(claims: ReceiptClaims, seed: Uint8Array): SettlementReceipt {
  const unsigned = { v: 1 as const, typ: RECEIPT_TYPE, kid: jwkThumbprint(publicKeyFromSeed(seed)), ...claims };
  return settlementReceiptSchema.parse({ ...unsigned, signature: formatSignature(signBytes(signedBytes(unsigned), seed)) });
}

export function encodeReceipt(receipt: SettlementReceipt): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify(receipt)));
}

/** Parses an X-402-Receipt header value; a 400 x402_malformed_receipt when it is not one. */
export function decodeReceipt(header: string): SettlementReceipt {
  const value = header.trim();
  if (value.length === 0 || value.length > MAX_RECEIPT_HEADER || !/^[A-Za-z0-9_-]+$/.test(value)) {
    throw new NotaryError('x402_malformed_receipt', `X-402-Receipt must be base64url (no padding) of at most ${MAX_RECEIPT_HEADER} characters`);
  }
  let json: unknown;
  try {
    const bytes = fromBase64Url(value);
    if (!bytes) throw new Error('not base64url');
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new NotaryError('x402_malformed_receipt', 'X-402-Receipt does not decode to UTF-8 JSON');
  }
  const parsed = settlementReceiptSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new NotaryError('x402_malformed_receipt', `X-402-Receipt: ${issue ? `${issue.path.join('.') || '(root)'} ${issue.message}` : 'invalid'}`);
  }
  return parsed.data;
}

/** Trusted facilitator keys by kid (the thumbprint is recomputed: a configured kid is never trusted blindly). */
export function trustedKeyring(keys: ReadonlyArray<{ x: string }>): Map<string, Uint8Array> {
  const ring = new Map<string, Uint8Array>();
  for (const key of keys) {
    const publicKey = fromBase64Url(key.x);
    if (publicKey && publicKey.length === 32) ring.set(jwkThumbprint(publicKey), publicKey);
  }
  return ring;
}

/** Whether the receipt's signature verifies under the trusted key its kid names. */
export function verifyReceiptSignature(receipt: SettlementReceipt, keyring: ReadonlyMap<string, Uint8Array>): boolean {
  const publicKey = keyring.get(receipt.kid);
  const { signature, ...unsigned } = receipt;
  const bytes = parseSignature(signature);
  return publicKey !== undefined && bytes !== null && verifyBytes(bytes, signedBytes(unsigned), publicKey);
}
