export {
  API_KEY_CHECKSUM_LENGTH,
  API_KEY_LENGTH,
  API_KEY_PREFIX,
  API_KEY_SECRET_LENGTH,
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
