import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify';
import { NotaryError } from '../core/index.js';
import type { Admission, PaidCallGate } from '../payments/index.js';
import { paymentRequestFrom } from './paid/request.js';
import { problemResponses } from './paid/schemas.js';

type JsonSchema = Readonly<Record<string, unknown>>;

/** Who calls an account route: the tenant the credentials belong to. */
export interface AccountCaller {
  tenantId: string;
  requestId: string;
}

/**
 * An authenticated, free route (a tenant manages what it owns: webhook endpoints, crawl jobs): authenticated and rate
 * limited as a paid call is, through the same gate, but never priced or charged. A route never names a payment mode:
 * any mode whose payer is an account (a tenant) is accepted.
 */
export interface AccountRouteDefinition<Params, Body, Result> {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  summary: string;
  params?: JsonSchema;
  body?: JsonSchema;
  querystring?: JsonSchema;
  /** The success status and its body's schema (none: 204 without a body). */
  status: 200 | 201 | 204;
  result?: JsonSchema;
  /** Statuses the work can answer with a problem, besides the ones every account route has. */
  problems?: readonly number[];
  handle(input: { params: Params; body: Body; query: Record<string, unknown>; caller: AccountCaller }): Promise<Result>;
}

export interface AccountRoute {
  register(app: FastifyInstance): void;
}

/** Statuses every account route can answer with a problem. */
const ACCOUNT_ROUTE_PROBLEM_STATUSES = [400, 401, 403, 413, 415, 429, 500, 503] as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant of an account route's call, once authenticated. */
    accountCaller: AccountCaller | null;
  }
}

export function defineAccountRoute<Params, Body, Result>(definition: AccountRouteDefinition<Params, Body, Result>): AccountRoute {
  return {
    register(app) {
      const schema = {
        summary: definition.summary,
        tags: ['account'],
        'x-notary-authenticated': true,
        ...(definition.params ? { params: definition.params } : {}),
        ...(definition.body ? { body: definition.body } : {}),
        ...(definition.querystring ? { querystring: definition.querystring } : {}),
        response: {
          [definition.status]: definition.result ?? { type: 'null', description: 'No content' },
          ...problemResponses([...ACCOUNT_ROUTE_PROBLEM_STATUSES, ...(definition.problems ?? [])]),
        },
      } as FastifySchema;
      app.route({
        method: definition.method,
        url: definition.url,
        schema,
        handler: async (request, reply) => {
          const caller = request.accountCaller;
          if (!caller) throw new Error('account route reached without an authenticated tenant');
          const result = await definition.handle({
            params: request.params as Params,
            body: request.body as Body,
            query: (request.query ?? {}) as Record<string, unknown>,
            caller,
          });
          if (definition.status === 204) return reply.code(204).send();
          return reply.code(definition.status).send(result);
        },
      });
    },
  };
}

/** The 401 of a call without credentials: the challenges of the modes that authenticate an account. */
async function unauthenticated(gate: PaidCallGate, admission: Admission): Promise<NotaryError> {
  const challenges = [];
  for (const mode of gate.modes) {
    const challenge = await mode.challenge({ request: admission.request });
    if (challenge?.status === 401) challenges.push(challenge);
  }
  const hints = challenges.flatMap((c) => (c.hint ? [c.hint] : []));
  const [only] = challenges;
  const headers: Record<string, string | string[]> = {};
  if (only) headers['WWW-Authenticate'] = challenges.length === 1 ? only.wwwAuthenticate : challenges.map((c) => c.wwwAuthenticate);
  return new NotaryError('unauthenticated', `This call needs an account's credentials: send ${hints.join(', or ') || 'an account credential'}`, {}, headers);
}

/**
 * The account-route context (Fastify encapsulation): every route registered inside runs identify -> authenticate ->
 * rate limit (the gate's phase 1, from the headers) and then its handler with the caller's tenant; nothing is priced.
 * A payer that is no account (a wallet paying per call) is 403 forbidden: there is nothing of its own to manage.
 */
export async function accountRoutes(app: FastifyInstance, options: { gate: PaidCallGate; routes: readonly AccountRoute[] }): Promise<void> {
  const { gate } = options;
  app.decorateRequest('accountCaller', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply) => {
    const admission = await gate.admit(paymentRequestFrom(request));
    reply.headers(admission.rateLimitHeaders);
    const payer = admission.payer;
    if (!payer) throw await unauthenticated(gate, admission);
    if (payer.tenantId === undefined) {
      throw new NotaryError('forbidden', `${request.method} ${request.routeOptions.url ?? request.url} manages an account's own resources: call it with an account's credentials (a tenant's key)`);
    }
    request.accountCaller = { tenantId: payer.tenantId, requestId: request.id };
  });
  for (const route of options.routes) route.register(app);
}
