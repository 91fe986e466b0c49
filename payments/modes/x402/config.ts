import { z } from 'zod';
import type { ConfigFragment } from '../../../core/index.js';

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
const caip2Evm = z.string().regex(/^eip155:[1-9]\d*$/, 'must be a CAIP-2 EVM network such as eip155:8453');

/** A facilitator's Ed25519 public key (JWK, as its /.well-known/jwks.json lists it). */
const ed25519Jwk = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the base64url of a 32-byte Ed25519 public key'),
  kid: z.string().min(1).optional(),
  alg: z.literal('EdDSA').optional(),
  use: z.literal('sig').optional(),
});

export const x402ModeSchema = z.object({
  enabled: z.boolean().default(false),
  /** CAIP-2 network of the asset (default Base mainnet). */
  network: caip2Evm.default('eip155:8453'),
  /** The EIP-3009 token contract (default USDC on Base); its decimals must be pricing.credit_price.decimals. */
  asset: evmAddress.default('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
  /** The token's EIP-712 domain name and version (USDC on Base: "USD Coin", "2"). */
  asset_name: z.string().min(1).default('USD Coin'),
  asset_version: z.string().min(1).default('2'),
  /** Where payments go. Required when enabled. */
  pay_to: evmAddress.optional(),
  /** Base URL of a facilitator speaking the standard API (POST /verify, POST /settle, GET /supported). */
  facilitator_url: z.url().optional(),
  /** JSON-RPC URL of the same chain: reconciles settlements whose outcome is unknown. Required when enabled. */
  rpc_url: z.url().optional(),
  /** How long one question to rpc_url (its few requests together) may take before reconciliation gives up for now. */
  rpc_timeout_ms: z.number().int().positive().default(10_000),
  /** Ed25519 keys of facilitators whose X-402-Receipt settlement receipts are accepted (their JWKS entries). */
  receipt_keys: z.array(ed25519Jwk).default([]),
  /** How long a challenge (its nonce) can be paid against. */
  challenge_ttl_s: z.number().int().min(10).max(3600).default(300),
  /** How long an X-402-Receipt can be redeemed after its settlement (a failed call leaves it usable). */
  receipt_ttl_s: z.number().int().min(60).max(7 * 24 * 3600).default(3600),
  /** maxTimeoutSeconds of the standard requirements: the validity the client gives its authorization. */
  max_timeout_s: z.number().int().min(30).max(3600).default(300),
  verify_timeout_ms: z.number().int().positive().default(10_000),
  /** A settle without an answer by then is recorded as outcome-unknown and reconciled on chain. */
  settle_timeout_ms: z.number().int().positive().default(30_000),
  /** Rate-limit tier of x402 payers (per payer address); default default_tier. */
  tier: z.string().optional(),
  /**
   * Secret binding challenges to their request (HMAC). Default: generated once and kept in the database, so every
   * node of a deployment sharing it issues challenges the others accept. NOTARY_X402_CHALLENGE_SECRET overrides.
   */
  challenge_secret: z.string().min(32).optional(),
});

/** `notary facilitator`: the standard x402 facilitator API settling on an EVM chain, signing settlement receipts. */
export const facilitatorSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(8402),
  /** JSON-RPC URL of the chain it settles on. */
  rpc_url: z.url().optional(),
  /** Hex private key of the account that pays gas (prefer NOTARY_FACILITATOR_PRIVATE_KEY to a file). */
  private_key: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key').optional(),
  /** Name put in receipts as `iss`; default the facilitator's base URL. */
  issuer: z.string().min(1).optional(),
  /** Ed25519 receipt-signing keys (generated on first start); default <data_dir>/facilitator-keys.json. */
  keys_file: z.string().optional(),
  /** How long a settlement waits for its transaction's receipt. */
  confirmation_timeout_ms: z.number().int().positive().default(60_000),
  /** How often the chain is polled for receipts. */
  poll_interval_ms: z.number().int().positive().default(1000),
});

export type X402Settings = z.infer<typeof x402ModeSchema>;
export type FacilitatorSettings = z.infer<typeof facilitatorSchema>;

/** `payments.modes.x402`: pay per call on an EVM chain (x402 v2 PAYMENT-SIGNATURE and the interface's X-402-Receipt). */
export const x402ConfigFragment: ConfigFragment<X402Settings> = {
  path: ['payments', 'modes', 'x402'],
  schema: x402ModeSchema.prefault({}),
  refine(x402, cfg, issue) {
    if (x402.enabled) {
      for (const key of ['pay_to', 'facilitator_url', 'rpc_url'] as const) {
        if (!x402[key]) issue([key], 'required when x402 is enabled');
      }
    }
    if (x402.tier !== undefined && !(x402.tier in cfg.tiers)) issue(['tier'], `tier "${x402.tier}" is not defined in tiers`);
  },
  env: [{ env: 'NOTARY_X402_CHALLENGE_SECRET', path: ['payments', 'modes', 'x402', 'challenge_secret'], kind: 'string' }],
};

/** `facilitator`: the settings of `notary facilitator`. */
export const facilitatorConfigFragment: ConfigFragment<FacilitatorSettings> = {
  path: ['facilitator'],
  schema: facilitatorSchema.prefault({}),
  env: [
    { env: 'NOTARY_FACILITATOR_RPC_URL', path: ['facilitator', 'rpc_url'], kind: 'string' },
    { env: 'NOTARY_FACILITATOR_PRIVATE_KEY', path: ['facilitator', 'private_key'], kind: 'string' },
  ],
};
