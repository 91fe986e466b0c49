import type { NotaryConfig } from '../core/index.js';
import type {
  Catalog,
  PaymentMode,
  ReconcileSummary,
  PaymentModeDeps,
  RateLimitStore,
  IdempotencyStore,
  UsageRecorder,
} from '../payments/index.js';
import { PaidCallGate, type ResponseExtension } from '../payments/index.js';
import { registeredPlugins } from './plugins.js';
import type { Log } from './log.js';

export type { PaymentModeDeps } from '../payments/index.js';

/** The enabled payment modes of the registered plug-ins (payments/plugins.ts), in registration order. */
export function buildPaymentModes(deps: PaymentModeDeps): PaymentMode[] {
  return registeredPlugins().flatMap((plugin) => (plugin.mode?.enabled(deps.config) ? [plugin.mode.build(deps)] : []));
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

/** Each mode's reconciliation of undecided settlements, added up. */
export async function reconcileModes(modes: readonly PaymentMode[]): Promise<ReconcileSummary> {
  const total: ReconcileSummary = { checked: 0, settled: 0, released: 0, pending: 0 };
  for (const mode of modes) {
    if (!mode.reconcile) continue;
    const one = await mode.reconcile();
    total.checked += one.checked;
    total.settled += one.settled;
    total.released += one.released;
    total.pending += one.pending;
    if (one.unreachable) total.unreachable = [...(total.unreachable ?? []), ...one.unreachable];
  }
  return total;
}
