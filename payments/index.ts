export {
  API_KEY_CHECKSUM_LENGTH,
  API_KEY_LENGTH,
  API_KEY_PREFIX,
  API_KEY_SECRET_LENGTH,
  TEST_API_KEY_PREFIX,
  type ApiKeyEnvironment,
  apiKeyChecksum,
  apiKeyHashesEqual,
  generateApiKey,
  hashApiKey,
  parseApiKey,
  type ParsedApiKey,
} from './api-keys.js';
export {
  Accounts,
  insufficientCredits,
  type AccountsOptions,
  type ApiKeyRecord,
  type AuthenticatedKey,
  type CreatedKey,
  type DebitRequest,
  type LedgerEntry,
  type Tenant,
  type TenantOptions,
} from './accounts.js';
export {
  MemoryRateLimitStore,
  emissionIntervalMs,
  gcra,
  policyFor,
  type MemoryRateLimitStoreOptions,
  type RateLimitDecision,
  type RateLimitStore,
  type RateLimitTier,
} from './rate-limit.js';
export { KEY_SCOPES, type KeyScope } from './accounts.js';
export { Catalog, catalogDefaults, effectiveTier, tenantFeatures, type CatalogSnapshot } from './catalog.js';
export { checkCollectionAccess, type CollectionRead } from './collection-access.js';
export type { PaymentMode, PaymentRequest, ReconcileSummary } from './mode.js';
export {
  PaidCallGate,
  REPLAY_HEADER,
  type Admission,
  type PaidResponseContext,
  type ResponseExtension,
} from './paid-call.js';
export {
  registeredPlugins,
  type LedgerRow,
  type PaymentModeDeps,
  type PluginLog,
  type PluginRoute,
  type PluginService,
  type PluginServices,
} from './plugin.js';
export { Pricing, atomicToDecimal, type PriceRequest } from './pricing.js';
export { FACTS_ORDER, countSchema, type ResponseMember } from './response-members.js';
export type { IdempotencyStore, StoredResponse } from './stores/idempotency.js';
export { RedisIdempotencyStore, RedisRateLimitStore, openRedis } from './stores/redis.js';
export { SqlIdempotencyStore } from './stores/sql-idempotency.js';
export { SqlRateLimitStore } from './stores/sql-rate-limit.js';
export { SqlUsageRecorder, type UsageRecorder } from './usage.js';
export type { CatalogSource, TierSettings } from './catalog.js';
export type { AuthenticatedPayer, HeldPayment } from './mode.js';
export type { MoneyAmount, Price } from './pricing.js';
