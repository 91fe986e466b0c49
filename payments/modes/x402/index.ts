import { createHash, randomBytes } from 'node:crypto';
import { HTTPFacilitatorClient } from '@x402/core/http';
import type { Kysely } from 'kysely';
import { configSection, type NotaryConfig, NotaryError } from '../../../core/index.js';
import type { Database } from '../../../storage/index.js';
import { CollectionStore } from '../../../storage/index.js';
import { X402PaymentsRepository } from './repository.js';
import type { NotaryPlugin } from '../../plugin.js';
import { RpcSettlementChain, type SettlementChain } from './chain.js';
import { facilitatorConfigFragment, x402ConfigFragment } from './config.js';
import { X402_ERROR_CODES } from './errors.js';
import { x402PaymentsMigration } from './migrations.js';
import { X402Mode, type FacilitatorApi } from './mode.js';
import { addFacilitatorCommand } from './facilitator-command.js';
import './errors.js'; // registers the x402_* error codes this file throws

export { facilitatorConfigFragment, x402ConfigFragment, type FacilitatorSettings, type X402Settings } from './config.js';
export { X402_ERROR_CODES } from './errors.js';
export { X402PaymentsRepository, type NewX402Payment } from './repository.js';
export { X402Mode, X402_MODE, X402_SECURITY_SCHEME, CHALLENGE_EXTRA, type FacilitatorApi, type X402Config, type X402ModeOptions } from './mode.js';
export { ChallengeIssuer, type ChallengeBinding } from './challenge.js';
export { RpcSettlementChain, type SettlementChain, type AuthorizationOutcome } from './chain.js';
export { parsePaymentSignature, type SignedPayment } from './payload.js';
export * from './receipt.js';
// facilitator-chain.ts (viem, the EVM scheme) is imported by `notary facilitator` and tests only, not at start.
export { facilitatorJwks, NotaryFacilitator, openFacilitatorKeyring, RECEIPT_EXTENSION } from './facilitator.js';

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
  const config = configSection(deps.config, x402ConfigFragment);
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
    publicCollections: () => new CollectionStore(deps.db).publicIds(),
    ...(deps.now ? { now: deps.now } : {}),
  });
}

/**
 * Start-up check that needs the network: the token's decimals must be the price's decimals (otherwise every amount
 * would be off by powers of ten). Throws invalid_config; an unreachable RPC is a warning (reconciliation retries it).
 */
async function checkAssetDecimals(config: NotaryConfig, log: (level: 'info' | 'warn', message: string) => void): Promise<void> {
  const x402 = configSection(config, x402ConfigFragment);
  if (!x402.enabled || !x402.rpc_url) return;
  let decimals: number;
  try {
    decimals = await new RpcSettlementChain(x402.rpc_url, undefined, x402.rpc_timeout_ms).decimals(x402.asset as `0x${string}`);
  } catch (err) {
    log('warn', `x402: could not read decimals() of ${x402.asset} over ${x402.rpc_url}: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  if (decimals !== config.pricing.credit_price.decimals) {
    throw new NotaryError(
      'invalid_config',
      `payments.modes.x402.asset ${x402.asset} has ${decimals} decimals but pricing.credit_price.decimals is ${config.pricing.credit_price.decimals}`,
    );
  }
}

/** Pay per call on an EVM chain (x402 v2), and the `facilitator` section of `notary facilitator`. */
export const x402Plugin: NotaryPlugin = {
  name: 'x402',
  config: [x402ConfigFragment, facilitatorConfigFragment],
  errors: X402_ERROR_CODES,
  migrations: { '0015_x402_payments': x402PaymentsMigration },
  mode: {
    enabled: (config) => configSection(config, x402ConfigFragment).enabled,
    build: (deps) => createX402Mode({ config: deps.config, db: deps.storage.db, log: deps.log }),
  },
  startupCheck: checkAssetDecimals,
  cli: addFacilitatorCommand,
  async ledger(db, { mode }) {
    const rows = await new X402PaymentsRepository(db).ledger(mode ? { mode } : {});
    return rows.map((r) => ({
      created_at: r.created_at,
      mode: r.mode,
      payer: r.payer,
      amount: r.amount,
      asset: r.asset,
      network: r.network,
      transaction: r.transaction_hash,
      credits: r.credits,
      request_id: r.request_id,
    }));
  },
};
