import type { NotaryConfig } from '../core/config.js';
import type { Accounts } from '../payments/accounts.js';
import type { Catalog } from '../payments/catalog.js';
import type { PaymentMode } from '../payments/mode.js';
import { apiKeyMode } from '../payments/modes/api-key/mode.js';
import { mppMode, Parties } from '../payments/modes/mpp/index.js';
import { createX402Mode } from '../payments/modes/x402/index.js';
import type { Storage } from '../storage/db.js';
import { PaidCallGate, type ResponseExtension } from '../payments/paid-call.js';
import type { RateLimitStore } from '../payments/rate-limit.js';
import type { IdempotencyStore } from '../payments/stores/idempotency.js';
import type { UsageRecorder } from '../payments/usage.js';
import type { Log } from './log.js';

/** What a payment mode may be built from. */
export interface PaymentModeDeps {
  config: NotaryConfig;
  accounts: Accounts;
  /** The prices and tiers in force (operators edit them while serving). */
  catalog: Catalog;
  storage: Storage;
  log: Log;
}

type ModeName = keyof NotaryConfig['payments']['modes'];

/** The registry of payment modes: one line per mode, enabled by `payments.modes.<name>.enabled`. */
const PAYMENT_MODES: Record<ModeName, (deps: PaymentModeDeps) => PaymentMode> = {
  api_key: (deps) => apiKeyMode(deps.accounts, deps.catalog),
  mpp: (deps) => mppMode({ config: deps.config.payments.modes.mpp, accounts: deps.accounts, parties: new Parties(deps.storage.db) }),
  x402: (deps) => createX402Mode({ config: deps.config, db: deps.storage.db, log: deps.log }),
};

export function buildPaymentModes(deps: PaymentModeDeps): PaymentMode[] {
  const modes: PaymentMode[] = [];
  for (const [name, build] of Object.entries(PAYMENT_MODES) as Array<[ModeName, (deps: PaymentModeDeps) => PaymentMode]>) {
    if (deps.config.payments.modes[name].enabled) modes.push(build(deps));
  }
  return modes;
}

export interface PaidCallGateDeps {
  config: NotaryConfig;
  modes: readonly PaymentMode[];
  rateLimits: RateLimitStore;
  idempotency: IdempotencyStore;
  catalog: Catalog;
  usage?: UsageRecorder;
  extensions?: readonly ResponseExtension[];
  log: Log;
}

export function buildPaidCallGate(deps: PaidCallGateDeps): PaidCallGate {
  const { config } = deps;
  return new PaidCallGate({
    modes: deps.modes,
    rateLimits: deps.rateLimits,
    catalog: deps.catalog,
    ...(deps.usage ? { usage: deps.usage } : {}),
    idempotency: deps.idempotency,
    idempotencyTtlMs: config.payments.idempotency.ttl_hours * 3_600_000,
    idempotencyLeaseMs: config.payments.idempotency.in_progress_timeout_s * 1000,
    ...(deps.extensions ? { extensions: deps.extensions } : {}),
    onError: (message, err) => deps.log('warn', `${message}${err ? `: ${err instanceof Error ? err.message : String(err)}` : ''}`),
  });
}
