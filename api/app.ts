import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { NotaryConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { Accounts } from '../payments/accounts.js';
import type { RateLimitStore } from '../payments/rate-limit.js';
import type { ExtractDeps } from '../extract/index.js';
import type { Receipts } from '../payments/receipts/index.js';
import type { SearchService } from '../search/service.js';
import { apiKeyAuthPlugin } from './plugins/api-key-auth.js';
import { payerPlugin } from './plugins/payer.js';
import { rateLimitPlugin } from './plugins/rate-limit.js';
import { registerProblemHandlers, sendProblem, toNotaryError } from './problem.js';
import { extractRoute } from './routes/extract.js';
import { healthzRoute } from './routes/healthz.js';
import { receiptRoutes } from './routes/receipts.js';
import { searchRoute } from './routes/search.js';

export interface AppDeps {
  config: NotaryConfig;
  accounts: Accounts;
  rateLimits: RateLimitStore;
  search: SearchService;
  /** Fetch/render/extract dependencies; without them POST /v1/extract is not served. */
  extract?: ExtractDeps;
  health: () => Promise<Record<string, unknown>>;
  /** Signed receipts: the JWKS and receipt-log routes are served when present. */
  receipts?: Receipts;
  logger?: boolean | object;
}

/** Incoming X-Request-Id values echoed back; anything else is replaced by a fresh `req_...`. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : newId('req');
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const problemContext = { maxDepth: config.search.max_depth, bodyLimitBytes: config.server.body_limit_bytes };
  const app = Fastify({
    logger: (deps.logger ?? false) as FastifyServerOptions['logger'],
    bodyLimit: config.server.body_limit_bytes,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
    // Errors Fastify raises before routing (malformed URL, ...) still answer with a problem.
    frameworkErrors: (error, request, reply) => {
      sendProblem(request, reply, toNotaryError(error, problemContext));
    },
  });

  // JSON only: without this, text/plain bodies would be accepted as strings.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });

  registerProblemHandlers(app, problemContext);

  await app.register(payerPlugin);
  await app.register(apiKeyAuthPlugin, { accounts: deps.accounts });
  await app.register(rateLimitPlugin, { store: deps.rateLimits, tiers: config.tiers, defaultTier: config.default_tier });

  await app.register(healthzRoute, { health: deps.health });
  await app.register(searchRoute, { config, search: deps.search });
  if (deps.extract) await app.register(extractRoute, { config, deps: deps.extract });
  if (deps.receipts) await app.register(receiptRoutes, { receipts: deps.receipts });

  if (!(config.default_tier in config.tiers)) throw new NotaryError('invalid_config', `default tier "${config.default_tier}" is not defined`);
  return app;
}
