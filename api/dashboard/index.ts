import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotaryError } from '../../core/index.js';
import { dashboardAssets, type Asset } from './assets.js';
import type { DashboardDeps } from './deps.js';
import { authRoutes } from './routes/auth.js';
import { exampleRoutes } from './routes/example.js';
import { operatorHealthRoutes, type ServiceStatus } from './routes/operator-health.js';
import { collectionRoutes } from './routes/collections.js';
import { crawlJobRoutes } from './routes/crawl-jobs.js';
import { operatorRoutes } from './routes/operator.js';
import { tenantRoutes } from './routes/tenant.js';
import { checkCsrf, sessionToken } from './session.js';

export type { DashboardDeps } from './deps.js';
export type { ServiceStatus } from './routes/operator-health.js';

/** Where the dashboard's JSON endpoints live; the version is in the path, so a later v2 can sit beside it. */
export const DASHBOARD_API = '/dashboard/api/v1';

/** Same-origin only, no inline script or style, never framed: the page needs nothing else (no CDN, works offline). */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(reply: FastifyReply): void {
  reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('X-Frame-Options', 'DENY');
  reply.header('Referrer-Policy', 'same-origin');
  reply.header('Cross-Origin-Opener-Policy', 'same-origin');
}

function sendAsset(request: FastifyRequest, reply: FastifyReply, file: Asset, cacheControl: string): FastifyReply {
  securityHeaders(reply);
  reply.header('Cache-Control', cacheControl).header('ETag', file.etag).type(file.type);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.send(file.body);
}

/** The JSON endpoints: the session is read from the cookie on every request, and every change is CSRF-checked. */
async function dashboardApi(app: FastifyInstance, { deps, status }: { deps: DashboardDeps; status?: ServiceStatus | undefined }): Promise<void> {
  app.decorateRequest('dashboardSession', null);
  app.addHook('onRequest', async (request, reply) => {
    securityHeaders(reply);
    reply.header('Cache-Control', 'no-store');
    request.dashboardSession = (await deps.sessions.resolve(sessionToken(request))) ?? null;
  });
  // Before the body is parsed: a forged request is refused without reading it.
  app.addHook('preParsing', async (request) => {
    checkCsrf(request);
  });
  await app.register(authRoutes, { deps });
  await app.register(tenantRoutes, { deps });
  await app.register(exampleRoutes, { deps });
  await app.register(operatorRoutes, { deps, prefix: '/operator' });
  await app.register(collectionRoutes, { deps, prefix: '/operator' });
  await app.register(crawlJobRoutes, { deps });
  if (status) await app.register(operatorHealthRoutes, { status, prefix: '/operator' });
  app.all('/*', async (request) => {
    throw new NotaryError('not_found', `No dashboard endpoint ${request.method} ${request.url.split('?')[0]}`);
  });
}

/**
 * The web dashboard under /dashboard/: the single-page app (built at start, served from memory) and its versioned
 * JSON endpoints under /dashboard/api/v1/.
 */
export async function dashboardPlugin(app: FastifyInstance, { deps, status }: { deps: DashboardDeps; status?: ServiceStatus | undefined }): Promise<void> {
  const assets = await dashboardAssets();
  await app.register(dashboardApi, { deps, status, prefix: DASHBOARD_API });
  app.get('/dashboard', async (_request, reply) => reply.redirect('/dashboard/', 308));
  app.get('/dashboard/assets/:name', async (request, reply) => {
    const file = assets.files.get((request.params as { name: string }).name);
    if (!file) throw new NotaryError('not_found', 'No such dashboard asset');
    return sendAsset(request, reply, file, 'public, max-age=31536000, immutable');
  });
  const page = async (request: FastifyRequest, reply: FastifyReply) => sendAsset(request, reply, assets.index, 'no-cache');
  app.get('/dashboard/', page);
  app.get('/dashboard/*', page);
}
