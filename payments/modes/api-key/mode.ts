import { NotaryError } from '../../../core/errors.js';
import { insufficientCredits, type Accounts } from '../../accounts.js';
import { parseApiKey } from '../../api-keys.js';
import { singleHeader, type PaymentCredential, type PaymentMode } from '../../mode.js';

const BEARER_SCHEME = /^Bearer(\s|$)/i;
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * `Authorization: Bearer sk_live_...`: the tenant behind the key pays from its credit balance. The key's shape and
 * checksum are checked from the header alone; the lookup, the balance pre-check and the atomic debit use the
 * database. A debit carries the call's Idempotency-Key, which the ledger holds unique per tenant.
 */
export function apiKeyMode(accounts: Accounts): PaymentMode {
  return {
    name: 'api_key',

    identify(request): PaymentCredential | null {
      const header = singleHeader(request, 'authorization');
      if (header === undefined || !BEARER_SCHEME.test(header)) return null;
      // A Bearer header without a single token is a malformed key, not a missing one.
      const parsed = parseApiKey(BEARER.exec(header)?.[1] ?? '');
      return {
        mode: 'api_key',
        async authenticate() {
          const { tenant, keyId } = await accounts.authenticate(parsed);
          return {
            mode: 'api_key',
            payerId: `tenant:${tenant.id}`,
            rateLimits: [{ key: `key:${keyId}`, tier: tenant.tier }],
            async authorize({ price }) {
              // The balance read with the key moments ago: a cheap pre-check only, the debit itself is authoritative.
              if (tenant.credits < price.credits) throw insufficientCredits(price.credits, tenant.credits);
              return {
                async settle({ requestId, idempotencyKey }) {
                  await accounts.debit({ tenantId: tenant.id, credits: price.credits, requestId, keyId, reason: price.description, idempotencyKey });
                  return { creditsUsed: price.credits };
                },
                // Nothing was reserved: the debit happens only in settle.
                async release() {},
              };
            },
          };
        },
      };
    },

    async challenge({ error }) {
      const invalid = error instanceof NotaryError && (error.code === 'invalid_api_key' || error.code === 'revoked_api_key');
      return {
        status: 401,
        wwwAuthenticate: invalid ? 'Bearer realm="notary", error="invalid_token"' : 'Bearer realm="notary"',
        hint: 'Authorization: Bearer <API key>',
      };
    },
  };
}
