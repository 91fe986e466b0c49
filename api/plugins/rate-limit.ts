import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { NotaryError } from '../../core/errors.js';
import type { RateLimitDecision, RateLimitStore, RateLimitTier } from '../../payments/rate-limit.js';
import { requirePayer, type RequestHook } from './payer.js';

export interface RateLimitPluginOptions {
  store: RateLimitStore;
  tiers: Record<string, RateLimitTier>;
  defaultTier: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook for rate-limited routes; runs after authenticatePayer. */
    enforceRateLimit: RequestHook;
  }
  interface FastifyRequest {
    rateLimit: RateLimitDecision | null;
  }
}

/** Tier names go inside a structured-field string; anything outside a safe alphabet is replaced. */
function policyName(tier: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(tier) ? tier : 'default';
}

export function rateLimitHeaders(tierName: string, decision: RateLimitDecision): Record<string, string> {
  const name = policyName(tierName);
  return {
    'RateLimit-Policy': `"${name}";${decision.policy}`,
    RateLimit: `"${name}";r=${decision.remaining};t=${Math.ceil(decision.resetMs / 1000)}`,
  };
}

/** Per-payer limits by tier, with the IETF RateLimit-Policy / RateLimit headers and Retry-After on 429. */
export const rateLimitPlugin = fp<RateLimitPluginOptions>(
  async (app, options) => {
    app.decorateRequest('rateLimit', null);
    app.decorate('enforceRateLimit', async (request: FastifyRequest, reply: FastifyReply) => {
      const payer = requirePayer(request);
      const tierName = payer.principal.tier in options.tiers ? payer.principal.tier : options.defaultTier;
      const tier = options.tiers[tierName];
      if (!tier) throw new Error(`rate limit tier "${tierName}" is not configured`);
      const decision = await options.store.consume(payer.rateLimitKey, tier);
      request.rateLimit = decision;
      reply.headers(rateLimitHeaders(tierName, decision));
      if (!decision.allowed) {
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
        reply.header('Retry-After', String(seconds));
        throw new NotaryError('rate_limited', `Rate limit of the "${tierName}" tier reached; retry in ${seconds} s`, {
          retry_after_s: seconds,
          retry_after_ms: decision.retryAfterMs,
        });
      }
    });
  },
  { name: 'notary-rate-limit', fastify: '5.x', dependencies: ['notary-payer'] },
);

/** The body's `rate_limit` object on metered routes (milliseconds, beside the headers' seconds). */
export interface RateLimitBody {
  limit: number;
  remaining: number;
  reset_ms: number;
}

export const rateLimitBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['limit', 'remaining', 'reset_ms'],
  properties: { limit: { type: 'integer' }, remaining: { type: 'integer' }, reset_ms: { type: 'integer' } },
} as const;

export function rateLimitBody(decision: RateLimitDecision): RateLimitBody {
  return { limit: decision.limit, remaining: decision.remaining, reset_ms: decision.resetMs };
}
