import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Accounts } from '../../payments/accounts.js';
import { insufficientCredits } from '../../payments/accounts.js';
import type { Payer, PayerResolver } from './payer.js';

export interface ApiKeyAuthOptions {
  accounts: Accounts;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** `Authorization: Bearer <key>`: the tenant behind the key pays from its credit balance. */
export function apiKeyResolver(accounts: Accounts): PayerResolver {
  return async (request: FastifyRequest): Promise<Payer | null> => {
    const header = request.headers.authorization;
    if (typeof header !== 'string' || !/^Bearer(\s|$)/i.test(header)) return null;
    const match = BEARER.exec(header);
    // A Bearer header without a single token is a malformed key, not a missing one.
    const { tenant, keyId } = await accounts.authenticate(match?.[1] ?? '');
    const tenantId = tenant.id;
    return {
      principal: { kind: 'api_key', tenantId, keyId, tier: tenant.tier },
      rateLimitKey: `key:${keyId}`,
      // The balance read with the key moments ago: a cheap pre-check only, the debit itself is authoritative.
      async ensureCanPay(credits) {
        if (tenant.credits < credits) throw insufficientCredits(credits, tenant.credits);
      },
      async charge(credits, context) {
        return accounts.debit({ tenantId, credits, requestId: context.requestId, keyId, reason: context.reason });
      },
    };
  };
}

export const apiKeyAuthPlugin = fp<ApiKeyAuthOptions>(
  async (app, options) => {
    app.payerResolvers.push(apiKeyResolver(options.accounts));
  },
  { name: 'notary-api-key-auth', fastify: '5.x', dependencies: ['notary-payer'] },
);
