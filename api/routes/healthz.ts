import type { FastifyInstance } from 'fastify';
import { NotaryError } from '../../core/errors.js';

export interface HealthzRouteOptions {
  health: () => Promise<Record<string, unknown>>;
}

/** `GET /healthz`: unauthenticated, not rate-limited; 503 when the health probe itself fails. */
export async function healthzRoute(app: FastifyInstance, options: HealthzRouteOptions): Promise<void> {
  app.get('/healthz', { schema: { summary: 'Liveness and what the service runs: scorer, index, retrieval mode, page and passage counts.', tags: ['public'] } }, async (request) => {
    try {
      return await options.health();
    } catch (err) {
      request.log.error({ err }, 'health probe failed');
      throw new NotaryError('service_unavailable', 'The health probe failed');
    }
  });
}

/** `GET /readyz`: 200 when every dependency answers, else 503 naming the ones that do not (for load balancers). */
export async function readyzRoute(app: FastifyInstance, options: { ready: () => Promise<Record<string, boolean>> }): Promise<void> {
  app.get('/readyz', { schema: { summary: 'Readiness: 200 when every dependency (database, index, stores) answers, else 503 naming the ones that do not.', tags: ['public'] } }, async (_request, reply) => {
    const checks = await options.ready();
    const ok = Object.values(checks).every(Boolean);
    reply.code(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'unavailable', checks };
  });
}
