import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import type { NotaryConfig } from '../core/index.js';
import { NotaryError, newId } from '../core/index.js';
import type { ExtractDeps, HostResolver } from '../extract/index.js';
import type { PaidCallGate } from '../payments/index.js';
import { Pricing } from '../payments/index.js';
import type { SearchService } from '../search/index.js';
import { dashboardPlugin, type DashboardDeps } from './dashboard/index.js';
import { answerUnsupportedMethods } from './methods.js';
import { llmsTxt, openApiDocument, recordRoutes } from './openapi.js';
import { paidRoutes, type CollectionResolver, type PaidRoute } from './paid/context.js';
import { problemSchema } from './paid/schemas.js';
import { guardHttpEdges } from './http-edges.js';
import { readCertificates, reloadCertificatesOnChange, TLS_HARDENING } from './tls.js';
import { clientErrorResponse, registerProblemHandlers, sendProblem, toNotaryError } from './problem.js';
import { accountRoutes, type AccountRoute } from './account-routes.js';
import { extractRoute } from './routes/extract.js';
import { healthzRoute, readyzRoute } from './routes/healthz.js';
import { metricsPlugin, type ApiMetrics } from './metrics.js';
import { searchRoute } from './routes/search.js';
import { webhookRoutes } from './routes/webhooks.js';
import { mapRoute } from './routes/map.js';
import { sitemapReader } from './routes/map-sitemaps.js';
import type { SiteUrlStore } from '../storage/index.js';
import type { WebhookOutbox } from '../webhooks/index.js';
import { crawlRoutes, type CrawlJobsDeps } from './routes/crawl.js';

export interface AppDeps {
  config: NotaryConfig;
  /** The paid-call path: payment modes, rate limits, idempotency (built by the composition root). */
  gate: PaidCallGate;
  search: SearchService;
  /** The collections calls name (storage/collections.ts); without it, the default collection alone. */
  collections?: CollectionResolver;
  /** The URLs the index and the frontier know by site; without it POST /v1/map is not served. */
  sites?: SiteUrlStore;
  /** The resolver of POST /v1/map's address checks (tests point names anywhere); the system's by default. */
  resolver?: HostResolver;
  /** Tenants' webhook endpoints (webhooks/); without it /v1/webhooks is not served. */
  webhooks?: WebhookOutbox;
  /** Crawl jobs (POST/GET/DELETE /v1/crawl); without them, and without `collections`, those routes are not served. */
  crawl?: CrawlJobsDeps;
  /** Fetch/render/extract dependencies; without them POST /v1/extract is not served. */
  extract?: ExtractDeps;
  health: () => Promise<Record<string, unknown>>;
  /** Each dependency's reachability (database, index, shared stores): GET /readyz answers 503 unless all are true. */
  ready?: () => Promise<Record<string, boolean>>;
  /** Prometheus metrics served at GET /metrics. */
  metrics?: ApiMetrics;
  /**
   * The prices llms.txt states: the price list, or where to read the one in force (operators edit prices while the
   * service runs; calls are priced by the gate's catalog). Default: the config's.
   */
  pricing?: Pricing | (() => Pricing);
  /** Unpaid routes added beside the built-in ones (e.g. published keys). */
  publicRoutes?: readonly FastifyPluginAsync[];
  /** Accounts, sessions and the rest the web dashboard works with; without them /dashboard/ is not served. */
  dashboard?: DashboardDeps;
  logger?: boolean | object;
  /** The version the OpenAPI document names (default: package.json's). */
  version?: string;
}

/** The package's version, from package.json. */
export const NOTARY_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Incoming X-Request-Id values echoed back; anything else is replaced by a fresh `req_...`. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : newId('req');
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const server = config.server;
  const problemContext = { maxDepth: config.search.max_depth, bodyLimitBytes: server.body_limit_bytes };
  const certificates = readCertificates(server.tls);
  const tls = certificates ? { ...certificates, ...TLS_HARDENING } : null;
  const trusted = server.trusted_proxies;
  // Node's own limits, as backstops of the body timeout below (HTTP/1.1 servers; HTTP/2 has its own).
  const http1Limits = {
    maxHeaderSize: server.max_header_bytes,
    headersTimeout: server.headers_timeout_ms,
    // Node sweeps for expired headers and request timeouts every 30 s by default: a limit of 10 s held 33 s.
    connectionsCheckingInterval: Math.max(250, Math.min(1_000, Math.floor(server.headers_timeout_ms / 4))),
    // A missing Host is answered by checkHttpEdges with a problem (Node would send a bare 400).
    requireHostHeader: false,
  };
  const transport = tls
    ? server.tls.http2
      ? { http2: true as const, https: { ...tls, allowHTTP1: true } }
      : { https: { ...tls, ...http1Limits } }
    : { http: http1Limits };
  const app = Fastify({
    ...(transport as object),
    // X-Forwarded-For/-Proto/-Host are believed only from the configured proxies (request.ip, request.protocol).
    trustProxy: Array.isArray(trusted) && trusted.length === 1 && trusted[0] === 'true' ? true : trusted,
    logger: (deps.logger ?? false) as FastifyServerOptions['logger'],
    bodyLimit: server.body_limit_bytes,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
    // The whole request and idle keep-alive (headers: http1Limits above).
    requestTimeout: server.headers_timeout_ms + server.body_timeout_ms + 5_000,
    keepAliveTimeout: server.keep_alive_timeout_ms,
    // Errors Fastify raises before routing (malformed URL, ...) still answer with a problem.
    frameworkErrors: (error, request, reply) => {
      sendProblem(request, reply, toNotaryError(error, problemContext));
    },
    // Errors of Node's HTTP parser (oversized headers, NUL or CR in a header, timeouts) answer with a problem too.
    clientErrorHandler: (error, socket) => {
      if ((error as NodeJS.ErrnoException).code === 'ECONNRESET' || !socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(clientErrorResponse(error, newId('req')));
    },
  }) as unknown as FastifyInstance;

  // JSON only: without this, text/plain bodies would be accepted as strings.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  guardHttpEdges(app);
  if (tls) reloadCertificatesOnChange(app, server.tls, (level, message) => app.log[level](message));

  // A body that trickles in (or never completes its Content-Length) gets a 408 problem after body_timeout_ms.
  app.addHook('preParsing', async (_request, reply, payload) => {
    const guarded = new PassThrough();
    const timer = setTimeout(() => {
      payload.unpipe(guarded);
      guarded.destroy(new NotaryError('request_timeout', `The request body was not received within ${server.body_timeout_ms} ms`));
    }, server.body_timeout_ms);
    // A request answered before its body was read (413, 415, 401, ...) leaves this stream unread: once the answer is
    // out, the timer has nothing to guard, and an error raised on the stream then has no reader to go to.
    reply.raw.once('close', () => clearTimeout(timer));
    guarded.on('error', () => clearTimeout(timer));
    payload.on('end', () => clearTimeout(timer));
    payload.on('error', (err) => {
      clearTimeout(timer);
      guarded.destroy(err);
    });
    payload.pipe(guarded);
    return guarded;
  });

  answerUnsupportedMethods(app);
  registerProblemHandlers(app, problemContext);
  const recorded = recordRoutes(app);

  if (deps.metrics) await app.register(metricsPlugin, { metrics: deps.metrics, token: server.metrics_token });
  await app.register(healthzRoute, { health: deps.health });
  if (deps.ready) await app.register(readyzRoute, { ready: deps.ready });
  for (const route of deps.publicRoutes ?? []) await app.register(route);
  if (deps.dashboard && config.dashboard.enabled) await app.register(dashboardPlugin, { deps: deps.dashboard, status: { health: deps.health, ready: deps.ready } });
  const routes: PaidRoute[] = [searchRoute(config, deps.search)];
  if (deps.extract) routes.push(extractRoute(config, deps.extract));
  if (deps.sites) {
    const resolver = deps.resolver ? { resolver: deps.resolver } : {};
    routes.push(mapRoute(config, { sites: deps.sites, sitemaps: sitemapReader(config, resolver), ...resolver }));
  }
  const account: AccountRoute[] = deps.webhooks ? webhookRoutes(deps.webhooks) : [];
  if (account.length > 0) await app.register(accountRoutes, { gate: deps.gate, routes: account });
  if (deps.crawl && deps.collections) routes.push(crawlRoutes(deps.crawl));
  await app.register(paidRoutes, { context: { gate: deps.gate, ...(deps.collections ? { collections: deps.collections } : {}) }, routes });

  const fixedPricing = typeof deps.pricing === 'object' ? deps.pricing : new Pricing(config.pricing);
  const pricingNow = typeof deps.pricing === 'function' ? deps.pricing : () => fixedPricing;
  // Built on first use, once every route is registered: the document describes exactly what this app serves.
  let document: Record<string, unknown> | undefined;
  const openApi = () =>
    (document ??= openApiDocument(recorded, { version: deps.version ?? NOTARY_VERSION, securitySchemes: deps.gate.modes.flatMap((m) => (m.securityScheme ? [m.securityScheme] : [])) }, problemSchema));
  app.get('/openapi.json', { schema: { summary: 'This OpenAPI 3.1 document.', tags: ['public'] } }, async (_request, reply) => {
    reply.header('Cache-Control', 'public, max-age=300');
    return reply.type('application/json; charset=utf-8').send(`${JSON.stringify(openApi(), null, 2)}\n`);
  });
  app.get('/llms.txt', { schema: { summary: 'What an agent needs to call this service (llmstxt.org).', tags: ['public'], 'x-notary-produces': 'text/markdown' } }, async (_request, reply) => {
    reply.header('Cache-Control', 'public, max-age=300');
    return reply.type('text/markdown; charset=utf-8').send(llmsTxt(openApi(), { prices: pricingNow().table(config.search.max_depth), maxDepth: config.search.max_depth }));
  });
  return app;
}
