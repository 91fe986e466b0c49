import { createHash, randomBytes } from 'node:crypto';
import { HTTPFacilitatorClient } from '@x402/core/http';
import type { Kysely } from 'kysely';
import type { NotaryConfig } from '../../../core/config.js';
import type { Database } from '../../../storage/schema.js';
import { X402PaymentsRepository } from '../../../storage/x402.js';
import { RpcSettlementChain, type SettlementChain } from './chain.js';
import { X402Mode, type FacilitatorApi } from './mode.js';

export { X402Mode, X402_MODE, CHALLENGE_EXTRA, type FacilitatorApi, type X402Config, type X402ModeOptions } from './mode.js';
export { ChallengeIssuer, type ChallengeBinding } from './challenge.js';
export { RpcSettlementChain, type SettlementChain, type AuthorizationOutcome } from './chain.js';
export { parsePaymentSignature, type SignedPayment } from './payload.js';
export * from './receipt.js';

/** The service_secrets row holding the generated challenge secret. */
export const CHALLENGE_SECRET_NAME = 'x402_challenge';

/** The HMAC key of challenges from the configured or generated secret. */
export function challengeKey(secret: string): Uint8Array {
  return createHash('sha256').update(`notary x402 challenge key\n${secret}`).digest();
}

export interface X402ModeDeps {
  config: NotaryConfig;
  db: Kysely<Database>;
  log: (level: 'info' | 'warn', message: string) => void;
  /** Replace the facilitator or the chain (tests that make them fail on purpose). */
  verifier?: FacilitatorApi;
  settler?: FacilitatorApi;
  chain?: SettlementChain;
  now?: () => number;
}

/** The x402 mode from the configuration: the facilitator over HTTP, the chain over JSON-RPC, state in the database. */
export function createX402Mode(deps: X402ModeDeps): X402Mode {
  const config = deps.config.payments.modes.x402;
  const url = config.facilitator_url;
  const rpcUrl = config.rpc_url;
  if (!url || !rpcUrl) throw new Error('payments.modes.x402 needs facilitator_url and rpc_url');
  const payments = new X402PaymentsRepository(deps.db);
  const configured = config.challenge_secret;
  return new X402Mode({
    config,
    tier: config.tier ?? deps.config.default_tier,
    payments,
    verifier: deps.verifier ?? new HTTPFacilitatorClient({ url, timeoutMs: config.verify_timeout_ms }),
    settler: deps.settler ?? new HTTPFacilitatorClient({ url, timeoutMs: config.settle_timeout_ms }),
    chain: deps.chain ?? new RpcSettlementChain(rpcUrl, undefined, config.rpc_timeout_ms),
    secret: async () => challengeKey(configured ?? (await payments.secret(CHALLENGE_SECRET_NAME, () => randomBytes(32).toString('base64url')))),
    leaseMs: deps.config.payments.idempotency.in_progress_timeout_s * 1000,
    log: deps.log,
    ...(deps.now ? { now: deps.now } : {}),
  });
}
