import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { NotaryError } from '../../core/errors.js';

/** Who pays for a call. Each authentication/payment mode adds its own kind (x402 and MPP later). */
export interface ApiKeyPrincipal {
  kind: 'api_key';
  tenantId: string;
  keyId: string;
  /** Rate-limit tier name from the tenant. */
  tier: string;
}

export type Principal = ApiKeyPrincipal;

export interface ChargeContext {
  requestId: string;
  /** Ledger reason, e.g. "search depth 2". */
  reason: string;
}

/**
 * The paying side of a request, produced by one authentication/payment plugin. Routes only talk to this: they ask
 * `ensureCanPay` before expensive work and `charge` exactly once after it succeeded.
 */
export interface Payer {
  readonly principal: Principal;
  /** Rate limits are counted under this key. */
  readonly rateLimitKey: string;
  /** Cheap check that the charge would likely succeed; throws insufficient_credits (402). */
  ensureCanPay(credits: number): Promise<void>;
  /** Atomic charge; throws insufficient_credits (402) when it cannot be paid. */
  charge(credits: number, context: ChargeContext): Promise<{ balance: number }>;
}

/**
 * Looks at a request and returns its payer, null when the request is not in this resolver's scheme (so the next one
 * may try), or throws a NotaryError when it is in the scheme but invalid.
 */
export type PayerResolver = (request: FastifyRequest) => Promise<Payer | null>;

export type RequestHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    /** Resolvers registered by the authentication/payment plugins, tried in registration order. */
    payerResolvers: PayerResolver[];
    /** onRequest hook for paid routes: sets request.payer or answers 401. */
    authenticatePayer: RequestHook;
  }
  interface FastifyRequest {
    payer: Payer | null;
    principal: Principal | null;
  }
}

/** The shared payer machinery; sibling plugins (API key, x402, MPP) push a resolver into `payerResolvers`. */
export const payerPlugin = fp(
  async (app) => {
    const resolvers: PayerResolver[] = [];
    app.decorate('payerResolvers', resolvers);
    app.decorateRequest('payer', null);
    app.decorateRequest('principal', null);
    app.decorate('authenticatePayer', async (request: FastifyRequest) => {
      for (const resolve of resolvers) {
        const payer = await resolve(request);
        if (payer) {
          request.payer = payer;
          request.principal = payer.principal;
          return;
        }
      }
      const detail = request.headers.authorization
        ? 'The Authorization scheme is not supported; send Authorization: Bearer <API key>'
        : 'Send Authorization: Bearer <API key>';
      throw new NotaryError('unauthenticated', detail);
    });
  },
  { name: 'notary-payer', fastify: '5.x' },
);

/** The payer set by authenticatePayer; a route that runs without it is wired wrongly. */
export function requirePayer(request: FastifyRequest): Payer {
  if (!request.payer) throw new Error('route reached without authenticatePayer in its onRequest hooks');
  return request.payer;
}
