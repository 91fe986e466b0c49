import type { FastifyInstance } from 'fastify';
import { NotaryError } from '../../core/index.js';

export interface HealthzRouteOptions {
  /** The full health report (operator detail: model sources, index stats, why a model is off). */
  health: () => Promise<Record<string, unknown>>;
}

/** Members that may carry a path, an address or error text: never in the public summary. */
const PRIVATE_KEY = /url|path|dir|file|source|why|error|message|reason|host|address/i;
/** String values that look like a location: a URL or an absolute path. */
const LOCATION = /^(?:[a-z][a-z0-9+.-]*:\/\/|\/|[A-Za-z]:\\)/;

/** A copy without private members and location-like strings, two levels deep (names, roles, modes, counts). */
function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return LOCATION.test(value) ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (depth === 0) return undefined;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth - 1)).filter((v) => v !== undefined);
  if (typeof value !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (PRIVATE_KEY.test(key)) continue;
    const kept = scrub(member, depth - 1);
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}

/**
 * What `/healthz` tells anyone: ok or not, and a non-sensitive summary (model names and roles, retrieval mode,
 * counts). Never the data folder, a model's URL or path, or error text: those are in the operators' report
 * (`GET /dashboard/api/v1/operator/health`).
 */
export function publicHealth(report: Record<string, unknown>): Record<string, unknown> {
  const summary: Record<string, unknown> = { status: report['status'] === 'ok' ? 'ok' : 'degraded' };
  const reranker = report['reranker'] as Record<string, unknown> | undefined;
  if (reranker && typeof reranker === 'object') summary['reranker'] = scrub({ kind: reranker['kind'], model: reranker['model'] }, 2);
  const retrieval = report['retrieval'] as Record<string, unknown> | undefined;
  if (retrieval && typeof retrieval === 'object') summary['retrieval'] = scrub({ ...retrieval, vectors: undefined }, 3);
  if ('query_rewriter' in report) summary['query_rewriter'] = scrub(report['query_rewriter'], 2) ?? null;
  if ('models' in report) summary['models'] = scrub(report['models'], 3);
  for (const count of ['pages', 'passages']) if (typeof report[count] === 'number') summary[count] = report[count];
  return summary;
}

/** `GET /healthz`: unauthenticated, not rate-limited; ok or not, with a non-sensitive summary; 503 when the probe fails. */
export async function healthzRoute(app: FastifyInstance, options: HealthzRouteOptions): Promise<void> {
  app.get('/healthz', { schema: { summary: 'Liveness: ok or not, with the models and retrieval mode it runs and page and passage counts (operators see the detail in the dashboard).', tags: ['public'] } }, async (request) => {
    try {
      return publicHealth(await options.health());
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
