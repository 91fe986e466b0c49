import type { FastifyInstance } from 'fastify';
import { NotaryError } from '../core/index.js';
import { sendProblem } from './problem.js';

/**
 * 405 with `Allow` for a known path under a method it does not serve, and 404 for an unknown path, answered before
 * the body is read: a method Fastify parses a body for (QUERY, PROPFIND, ...) would otherwise be turned down for its
 * missing or unsupported Content-Type first. Call before registering routes: it watches route registration to know each path's methods.
 */
export function answerUnsupportedMethods(app: FastifyInstance): void {
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const known = methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) known.add(method.toUpperCase());
    methodsByPath.set(route.url, known);
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404) return;
    const path = (request.url.split('?')[0] ?? request.url).slice(0, 200);
    const allowed = methodsByPath.get(path);
    if (!allowed) return sendProblem(request, reply, new NotaryError('not_found', `No route for ${request.method} ${path}`));
    if (allowed.has(request.method)) return;
    const methods = [...allowed].sort();
    return sendProblem(request, reply, new NotaryError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${methods.join(' or ')}`, { allowed_methods: methods }));
  });
}
