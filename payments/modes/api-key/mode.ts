import { NotaryError } from '../../../core/index.js';
import { insufficientCredits, type Accounts } from '../../accounts.js';
import { parseApiKey } from '../../api-keys.js';
import { effectiveTier, tenantFeatures, type CatalogSource } from '../../catalog.js';
import { singleHeader, type HeldPayment, type PaymentCredential, type PaymentMode } from '../../mode.js';

/** The ledger keys of a hold and of its settlement: spaces keep them apart from any Idempotency-Key a client sends. */
const holdKey = (key: string) => `hold ${key}`;
const settleKey = (key: string) => `settle ${key}`;

const BEARER_SCHEME = /^Bearer(\s|$)/i;
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The OpenAPI security scheme of API keys. */
export const API_KEY_SECURITY_SCHEME = {
  key: 'apiKey',
  scheme: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sk_live_ (or sk_test_: a test key, never charged) + 32 base62 characters + 6-character base62 CRC32 checksum',
    description: 'A tenant pays from its prepaid credits: `Authorization: Bearer sk_live_...`.',
  },
} as const;

/** Response header of a call made with a test key (the body says `"test": true`). */
export const TEST_MODE_HEADER = 'Notary-Test-Mode';

/**
 * `Authorization: Bearer sk_live_...`: the tenant behind the key pays from its credit balance. The key's shape and
 * checksum are checked from the header alone; the lookup, the balance pre-check and the atomic debit use the
 * database. A debit carries the call's Idempotency-Key, which the ledger holds unique per tenant.
 *
 * `sk_test_...` keys call the same API and are never charged; their calls are limited per tenant (one bucket for all
 * of a tenant's test keys) and refused, like live ones, for what the tenant has not enabled, so a test key never
 * reaches more than the tenant's live keys do.
 */
export function apiKeyMode(accounts: Accounts, catalog: CatalogSource): PaymentMode {
  return {
    name: 'api_key',
    securityScheme: API_KEY_SECURITY_SCHEME,
    // Nothing is reserved: the debit takes the charge, whatever part of the quote it is.
    settlesLess: true,

    identify(request): PaymentCredential | null {
      const header = singleHeader(request, 'authorization');
      if (header === undefined || !BEARER_SCHEME.test(header)) return null;
      // A Bearer header without a single token is a malformed key, not a missing one.
      const parsed = parseApiKey(BEARER.exec(header)?.[1] ?? '');
      return {
        mode: 'api_key',
        async authenticate() {
          const { tenant: found, keyId, environment, scopes, collections } = await accounts.authenticate(parsed);
          const snapshot = await catalog.current();
          const tier = effectiveTier(snapshot, found.tier);
          const tenant = await accounts.applyMonthlyGrant(found, tier.settings.monthly_credits);
          const features = tenantFeatures(snapshot, tenant);
          const test = environment === 'test';
          if (test && !features.includes('test_keys')) {
            throw new NotaryError('feature_not_enabled', `Test keys are not enabled for the tenant ${tenant.name}`, { feature: 'test_keys' });
          }
          return {
            mode: 'api_key',
            payerId: `tenant:${tenant.id}`,
            tenantId: tenant.id,
            keyId,
            ...(collections !== null ? { collections } : {}),
            rateLimits: [{ key: test ? `test:${tenant.id}` : `key:${keyId}`, tier: tenant.tier }],
            async authorize({ price }) {
              if (!(scopes as readonly string[]).includes(price.operation)) {
                throw new NotaryError('insufficient_scope', `This key may call ${scopes.join(', ')}, not ${price.operation}`, { scopes, required_scope: price.operation });
              }
              const missing = price.features.find((feature) => !features.includes(feature));
              if (missing !== undefined) {
                throw new NotaryError('feature_not_enabled', `${price.description} needs the feature "${missing}", which is not enabled for the tenant ${tenant.name}`, {
                  feature: missing,
                });
              }
              if (test) {
                return {
                  test: true,
                  async settle() {
                    return { creditsUsed: 0, headers: { [TEST_MODE_HEADER]: 'true' } };
                  },
                  async release() {},
                  async hold() {
                    return { mode: 'api_key', credits: 0, test: true, record: { tenant_id: tenant.id, key_id: keyId } };
                  },
                };
              }
              // The balance read with the key moments ago: a cheap pre-check only, the debit itself is authoritative.
              if (tenant.credits < price.credits) throw insufficientCredits(price.credits, tenant.credits);
              return {
                async settle({ requestId, idempotencyKey, charge = price, usage }) {
                  // The usage row, when the gate hands it over, is written in the debit's transaction (one commit).
                  const debited = await accounts.debit({ tenantId: tenant.id, credits: charge.credits, requestId, keyId, reason: charge.description, idempotencyKey, ...(usage ? { usage } : {}) });
                  return { creditsUsed: charge.credits, ...(debited.usageRecorded ? { usageRecorded: true } : {}) };
                },
                // Nothing was reserved: the debit happens only in settle.
                async release() {},
                // The quote is debited now (single-use under the work's id), so no other call can spend it; the
                // settlement gives back what the work did not use.
                async hold({ requestId, key }): Promise<HeldPayment> {
                  await accounts.debit({ tenantId: tenant.id, credits: price.credits, requestId, keyId, reason: `${price.description}: held until it ends`, idempotencyKey: holdKey(key) });
                  return { mode: 'api_key', credits: price.credits, record: { tenant_id: tenant.id, key_id: keyId } };
                },
              };
            },
          };
        },
      };
    },

    async settleHold(held, { key, credits, reason, requestId }) {
      const tenantId = held.record['tenant_id'];
      const keyId = held.record['key_id'];
      if (typeof tenantId !== 'string') throw new Error(`api_key hold ${key} names no tenant`);
      if (held.test === true) return { creditsUsed: 0, already: false };
      if (!Number.isSafeInteger(credits) || credits < 0 || credits > held.credits) throw new Error(`api_key hold ${key} of ${held.credits} credits cannot settle ${credits}`);
      const outcome = await accounts.creditOnce({
        credits: [{ tenantId, credits: held.credits - credits, reason: `${reason}: ${held.credits - credits} of ${held.credits} held credits given back` }],
        key: settleKey(key),
        requestId,
        keyId: typeof keyId === 'string' ? keyId : null,
      });
      return { creditsUsed: held.credits - (outcome.deltas.get(tenantId) ?? 0), already: outcome.already };
    },

    async challenge({ error }) {
      const invalid = error instanceof NotaryError && (error.code === 'invalid_api_key' || error.code === 'revoked_api_key' || error.code === 'expired_api_key');
      return {
        status: 401,
        wwwAuthenticate: invalid ? 'Bearer realm="notary", error="invalid_token"' : 'Bearer realm="notary"',
        hint: 'Authorization: Bearer <API key>',
      };
    },
  };
}
