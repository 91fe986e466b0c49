import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireOperator } from '../session.js';

/** What the service reports about itself, for operators only. */
export interface ServiceStatus {
  /** The full health report: model sources, index statistics, why a model is off. */
  health: () => Promise<Record<string, unknown>>;
  /** Each dependency's reachability (database, index, shared stores). */
  ready?: (() => Promise<Record<string, boolean>>) | undefined;
}

/**
 * `GET /dashboard/api/v1/operator/health`: the detail `/healthz` keeps to itself (an operator's session required):
 * the full health report, each dependency's reachability, and the error text when the probe itself fails.
 */
export async function operatorHealthRoutes(app: FastifyInstance, { status }: { status: ServiceStatus }): Promise<void> {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    requireOperator(request);
  });
  app.get('/health', async () => {
    const [health, ready] = await Promise.all([
      status.health().then(
        (report) => ({ ok: true, report }),
        (err: unknown) => ({ ok: false, error: err instanceof Error ? err.message : String(err) }),
      ),
      status.ready ? status.ready() : Promise.resolve(null),
    ]);
    return { health, ready };
  });
}
