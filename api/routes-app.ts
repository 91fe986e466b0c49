import Fastify, { type FastifyInstance } from 'fastify';
import { newId } from '../core/index.js';
import type { PluginRoute } from '../payments/index.js';
import { requestIdFrom } from './app.js';
import { pluginPublicRoutes } from './plugin-routes.js';
import { registerProblemHandlers } from './problem.js';

export interface RoutesAppOptions {
  routes: readonly PluginRoute[];
  logger?: boolean | object;
  /** Largest request body. */
  bodyLimitBytes?: number;
}

/**
 * A server of a plug-in's own routes, apart from the API (e.g. a payment mode's own server command): request ids
 * (X-Request-Id), the routes' schemas validated, problem+json for bad requests, unknown paths and wrong methods.
 */
export async function buildRoutesApp(options: RoutesAppOptions): Promise<FastifyInstance> {
  const bodyLimitBytes = options.bodyLimitBytes ?? 64 * 1024;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: bodyLimitBytes,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']) || newId('req'),
  });
  registerProblemHandlers(app, { maxDepth: 0, bodyLimitBytes });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  await app.register(pluginPublicRoutes(options.routes));
  return app;
}
