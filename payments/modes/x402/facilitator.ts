import { existsSync, readFileSync } from 'node:fs';
import type { x402Facilitator } from '@x402/core/facilitator';
import { PaymentPayloadV2Schema, PaymentRequirementsV2Schema } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { z } from 'zod';
import { NotaryError } from '../../../core/index.js';
import { CHALLENGE_EXTRA } from './mode.js';
import { generateSeed } from '../../crypto/ed25519.js';
import { fromBase64Url, toBase64Url } from '../../crypto/encoding.js';
import { ReceiptKeyring, SigningKey } from '../../receipts/index.js';
import { encodeReceipt, isoSeconds, publicJwk, signReceipt, type Ed25519Jwk } from './receipt.js';

/** The SettleResponse extension carrying the settlement receipt for X-402-Receipt. */
export const RECEIPT_EXTENSION = 'x402-settlement-receipt';

const requestSchema = z.object({
  x402Version: z.literal(2),
  paymentPayload: z.unknown(),
  paymentRequirements: z.unknown(),
});

export interface FacilitatorRequest {
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

/** Parses the body of POST /verify or /settle (the standard's VerifyRequest / SettleRequest, x402 v2). */
export function parseFacilitatorRequest(body: unknown): FacilitatorRequest {
  const outer = requestSchema.safeParse(body);
  if (!outer.success) throw new NotaryError('invalid_request', 'The body must be {x402Version: 2, paymentPayload, paymentRequirements}');
  const payload = PaymentPayloadV2Schema.safeParse(outer.data.paymentPayload);
  if (!payload.success) throw new NotaryError('invalid_request', `paymentPayload: ${payload.error.issues[0]?.message ?? 'invalid'}`);
  const requirements = PaymentRequirementsV2Schema.safeParse(outer.data.paymentRequirements);
  if (!requirements.success) throw new NotaryError('invalid_request', `paymentRequirements: ${requirements.error.issues[0]?.message ?? 'invalid'}`);
  return { paymentPayload: payload.data as PaymentPayload, paymentRequirements: requirements.data as PaymentRequirements };
}

/** A key as `notary facilitator` stored it before it used the receipts plug-in's keyring (`{keys: [...]}`, no format). */
interface LegacyStoredKey {
  kid: string;
  /** base64url of the 32-byte Ed25519 secret key. */
  secret: string;
  created_at: string;
  retired_at?: string;
}

const legacySeconds = (iso: string, file: string): number => {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) throw new NotaryError('receipt_key_invalid', `receipt key file ${file}: "${iso}" is not a time`);
  return Math.floor(ms / 1000);
};

/**
 * Rewrites a facilitator key file of the older format (`{keys: [{kid, secret, created_at, retired_at?}]}`) in the
 * receipts keyring's format, keeping every key, its kid and its window; any other file is left alone.
 */
export function upgradeLegacyFacilitatorKeys(file: string): boolean {
  if (!existsSync(file)) return false;
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return false; // the keyring reports what is wrong with it
  }
  if (typeof doc !== 'object' || doc === null || 'format' in doc || !Array.isArray((doc as { keys?: unknown }).keys)) return false;
  const legacy = (doc as { keys: LegacyStoredKey[] }).keys;
  // An empty key list made the older facilitator generate its first key.
  if (legacy.length === 0) legacy.push({ kid: '', secret: toBase64Url(generateSeed()), created_at: new Date().toISOString() });
  const keys = legacy.map((stored) => {
    const seed = typeof stored?.secret === 'string' ? fromBase64Url(stored.secret) : null;
    if (!seed || seed.length !== 32) throw new NotaryError('receipt_key_invalid', `receipt key file ${file}: key ${stored?.kid ?? '?'} is corrupted`);
    const nbf = legacySeconds(stored.created_at, file);
    return new SigningKey(seed, nbf, stored.retired_at === undefined ? null : Math.max(nbf, legacySeconds(stored.retired_at, file)));
  });
  ReceiptKeyring.write(file, keys);
  return true;
}

/**
 * The facilitator's receipt-signing keys: the receipts plug-in's keyring (a 0600 JSON file generated on first start;
 * the current key signs, every key is published), after upgrading a key file of the older format.
 */
export function openFacilitatorKeyring(file: string): ReceiptKeyring {
  upgradeLegacyFacilitatorKeys(file);
  return ReceiptKeyring.open(file, { createIfMissing: true });
}

/** The facilitator's JWKS: every key of the keyring, oldest first, as the plain Ed25519 JWKs receipt_keys takes. */
export function facilitatorJwks(keyring: ReceiptKeyring): { keys: Ed25519Jwk[] } {
  return { keys: keyring.all().map((k) => publicJwk(k.publicKey)) };
}

export interface NotaryFacilitatorOptions {
  facilitator: x402Facilitator;
  keyring: ReceiptKeyring;
  /** `iss` of the receipts. */
  issuer: string;
  log: (level: 'info' | 'warn', message: string) => void;
}

/**
 * `notary facilitator`'s core, framework-free: the official x402Facilitator (the `exact` EVM scheme settling through
 * the configured account) behind the standard API, plus a signed settlement receipt on every successful settle that
 * answers a notary challenge (the requirements' `extra.challenge`).
 */
export class NotaryFacilitator {
  constructor(private readonly options: NotaryFacilitatorOptions) {}

  supported(): SupportedResponse {
    const supported = this.options.facilitator.getSupported() as SupportedResponse;
    return { ...supported, extensions: [...supported.extensions, RECEIPT_EXTENSION] };
  }

  jwks(): { keys: Ed25519Jwk[] } {
    return facilitatorJwks(this.options.keyring);
  }

  async verify(body: unknown): Promise<VerifyResponse> {
    const { paymentPayload, paymentRequirements } = parseFacilitatorRequest(body);
    return this.options.facilitator.verify(paymentPayload, paymentRequirements);
  }

  async settle(body: unknown): Promise<SettleResponse> {
    const { paymentPayload, paymentRequirements } = parseFacilitatorRequest(body);
    const response = await this.options.facilitator.settle(paymentPayload, paymentRequirements);
    if (!response.success) {
      this.options.log('warn', `settle refused: ${response.errorReason ?? '?'} ${response.errorMessage ?? ''}`.trim());
      return response;
    }
    const challenge = paymentRequirements.extra?.[CHALLENGE_EXTRA];
    const payer = response.payer ?? (paymentPayload.payload as { authorization?: { from?: string } }).authorization?.from;
    if (typeof challenge !== 'string' || !payer) return response;
    const receipt = signReceipt(
      {
        iss: this.options.issuer,
        challenge,
        network: paymentRequirements.network,
        asset: paymentRequirements.asset.toLowerCase(),
        amount: response.amount ?? paymentRequirements.amount,
        pay_to: paymentRequirements.payTo.toLowerCase(),
        payer: payer.toLowerCase(),
        transaction: response.transaction.toLowerCase(),
        settled_at: isoSeconds(new Date()),
      },
      this.options.keyring.current().seedForSigning(),
    );
    return { ...response, extensions: { ...response.extensions, [RECEIPT_EXTENSION]: { receipt: encodeReceipt(receipt), header: 'X-402-Receipt' } } };
  }
}
