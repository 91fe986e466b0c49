import type { FastifyPluginAsync } from 'fastify';
import type { PluginRoute } from '../payments/index.js';

/**
 * Serves plug-ins' public routes (framework-free descriptors, e.g. the receipt log's) as a plugin for
 * `AppDeps.publicRoutes`: each route's schema is validated and documented as Fastify's own, its reply's headers and
 * media type are set, and a NotaryError it throws becomes a problem.
 */
export function pluginPublicRoutes(routes: readonly PluginRoute[]): FastifyPluginAsync {
  return async (app) => {
    for (const route of routes) {
      app.route({
        method: route.method,
        url: route.url,
        schema: route.schema,
        handler: async (request, reply) => {
          const answer = await route.handle({ query: (request.query ?? {}) as Record<string, string | undefined>, body: request.body });
          for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
          if (answer.type !== undefined) return reply.type(answer.type).send(answer.body);
          return answer.body;
        },
      });
    }
  };
}
