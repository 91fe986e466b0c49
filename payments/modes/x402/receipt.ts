import { createHash } from 'node:crypto';
import * as ed from '@noble/ed25519';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { NotaryError } from '../../../core/errors.js';

/**
 * The interface's X-402-Receipt: a settlement receipt signed by a facilitator the operator trusts.
 *
 * Wire format (one format, documented in README "x402"): the header value is base64url (no padding) of the UTF-8 JSON
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

export const base64url = {
  encode: (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url'),
  decode: (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64url')),
};

/** An Ed25519 public key as a JWK (RFC 8037), with its RFC 7638 thumbprint as `kid`. */
export interface Ed25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

export function jwkThumbprint(x: string): string {
  // RFC 7638: the required members in lexicographic order, no whitespace.
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}

export function publicJwk(publicKey: Uint8Array): Ed25519Jwk {
  const x = base64url.encode(publicKey);
  return { kty: 'OKP', crv: 'Ed25519', x, kid: jwkThumbprint(x), alg: 'EdDSA', use: 'sig' };
}

export function signedBytes(receipt: Omit<SettlementReceipt, 'signature'>): Uint8Array {
  const body = canonicalize(receipt);
  if (body === undefined) throw new Error('receipt is not serializable');
  return new TextEncoder().encode(RECEIPT_DOMAIN + body);
}

export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** Signs a settlement receipt with a 32-byte Ed25519 secret key. */
export async function signReceipt(claims: ReceiptClaims, secretKey: Uint8Array): Promise<SettlementReceipt> {
  const publicKey = await ed.getPublicKeyAsync(secretKey);
  const unsigned = { v: 1 as const, typ: RECEIPT_TYPE as typeof RECEIPT_TYPE, kid: publicJwk(publicKey).kid, ...claims };
  const signature = await ed.signAsync(signedBytes(unsigned), secretKey);
  return settlementReceiptSchema.parse({ ...unsigned, signature: `ed25519:${base64url.encode(signature)}` });
}

export function encodeReceipt(receipt: SettlementReceipt): string {
  return Buffer.from(JSON.stringify(receipt), 'utf8').toString('base64url');
}

/** Parses an X-402-Receipt header value; a 400 x402_malformed_receipt when it is not one. */
export function decodeReceipt(header: string): SettlementReceipt {
  const value = header.trim();
  if (value.length === 0 || value.length > MAX_RECEIPT_HEADER || !/^[A-Za-z0-9_-]+$/.test(value)) {
    throw new NotaryError('x402_malformed_receipt', `X-402-Receipt must be base64url (no padding) of at most ${MAX_RECEIPT_HEADER} characters`);
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(value)));
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
  return new Map(keys.map((key) => [jwkThumbprint(key.x), base64url.decode(key.x)]));
}

/** Whether the receipt's signature verifies under the trusted key its kid names. */
export async function verifyReceiptSignature(receipt: SettlementReceipt, keyring: ReadonlyMap<string, Uint8Array>): Promise<boolean> {
  const publicKey = keyring.get(receipt.kid);
  if (!publicKey) return false;
  const { signature, ...unsigned } = receipt;
  try {
    return await ed.verifyAsync(base64url.decode(signature.slice('ed25519:'.length)), signedBytes(unsigned), publicKey);
  } catch {
    return false;
  }
}
