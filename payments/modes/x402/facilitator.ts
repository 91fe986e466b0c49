import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { x402Facilitator } from '@x402/core/facilitator';
import { PaymentPayloadV2Schema, PaymentRequirementsV2Schema } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { z } from 'zod';
import { NotaryError } from '../../../core/errors.js';
import { CHALLENGE_EXTRA } from './mode.js';
import { fromBase64Url, toBase64Url } from '../../crypto/encoding.js';
import { publicKeyFromSeed } from '../../crypto/ed25519.js';
import { encodeReceipt, generateSeed, isoSeconds, publicJwk, signReceipt, type Ed25519Jwk } from './receipt.js';

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

interface StoredKey {
  kid: string;
  /** base64url of the 32-byte Ed25519 secret key. */
  secret: string;
  created_at: string;
  /** Set when a newer key took over signing; retired keys stay published so old receipts still verify. */
  retired_at?: string;
}

/**
 * The facilitator's receipt-signing keys: a JSON file (mode 0600) generated on first start. The newest key signs;
 * every key is published in the JWKS. `rotate()` adds a key and retires the previous one.
 */
export class ReceiptKeyring {
  private constructor(
    private readonly file: string,
    private keys: StoredKey[],
    private readonly publicKeys: Map<string, Uint8Array>,
  ) {}

  static async open(file: string): Promise<ReceiptKeyring> {
    let keys: StoredKey[] = [];
    if (existsSync(file)) {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as { keys?: StoredKey[] };
      keys = parsed.keys ?? [];
    }
    const keyring = new ReceiptKeyring(file, keys, new Map());
    if (keys.length === 0) await keyring.rotate();
    else for (const key of keys) keyring.publicKeys.set(key.kid, publicKeyFromSeed(keyring.seed(key)));
    return keyring;
  }

  async rotate(): Promise<Ed25519Jwk> {
    const secret = generateSeed();
    const publicKey = publicKeyFromSeed(secret);
    const jwk = publicJwk(publicKey);
    const now = isoSeconds(new Date());
    this.keys = [...this.keys.map((k) => (k.retired_at ? k : { ...k, retired_at: now })), { kid: jwk.kid, secret: toBase64Url(secret), created_at: now }];
    this.publicKeys.set(jwk.kid, publicKey);
    mkdirSync(path.dirname(this.file), { recursive: true });
    const partial = `${this.file}.tmp`;
    writeFileSync(partial, `${JSON.stringify({ keys: this.keys }, null, 2)}\n`, { mode: 0o600 });
    renameSync(partial, this.file);
    chmodSync(this.file, 0o600);
    return jwk;
  }

  get signingKey(): Uint8Array {
    const active = this.keys.at(-1);
    if (!active) throw new Error('no receipt key');
    return this.seed(active);
  }

  private seed(key: StoredKey): Uint8Array {
    const seed = fromBase64Url(key.secret);
    if (!seed || seed.length !== 32) throw new Error(`receipt key ${key.kid} in ${this.file} is corrupted`);
    return seed;
  }

  jwks(): { keys: Ed25519Jwk[] } {
    return { keys: this.keys.map((k) => publicJwk(this.publicKeys.get(k.kid) ?? new Uint8Array())) };
  }
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
    return this.options.keyring.jwks();
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
      this.options.keyring.signingKey,
    );
    return { ...response, extensions: { ...response.extensions, [RECEIPT_EXTENSION]: { receipt: encodeReceipt(receipt), header: 'X-402-Receipt' } } };
  }
}
