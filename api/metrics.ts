import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { NotaryError } from '../core/index.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the metrics read from the process on each scrape (pages and passages in storage, the index's documents). */
export interface MetricsSources {
  pages?: () => Promise<{ pages: number; passages: number }>;
}

/**
 * Prometheus metrics of one API node (`GET /metrics`, text format 0.0.4): requests by route, status and payment
 * mode, latency histograms, credits charged by mode, and the crawl and index counts from storage at scrape time.
 * Each node has its own registry: Prometheus adds the nodes up.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'method' | 'status' | 'mode'>;
  readonly latency: Histogram<'route' | 'method'>;
  readonly credits: Counter<'route' | 'mode'>;

  constructor(sources: MetricsSources = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'notary_process_' });
    this.requests = new Counter({ name: 'notary_http_requests_total', help: 'HTTP requests by route, method, status and payment mode', labelNames: ['route', 'method', 'status', 'mode'], registers: [this.registry] });
    this.latency = new Histogram({
      name: 'notary_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['route', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.credits = new Counter({ name: 'notary_credits_charged_total', help: 'Credits charged for served calls (replays excluded), by route and payment mode', labelNames: ['route', 'mode'], registers: [this.registry] });
    const pages = sources.pages;
    if (pages) {
      const stored = new Gauge({ name: 'notary_pages_stored', help: 'Pages stored by the crawl (all nodes, from the database)', registers: [this.registry] });
      const passages = new Gauge({
        name: 'notary_passages_indexed',
        help: 'Passages cut from stored pages and written to the index',
        registers: [this.registry],
        async collect() {
          const counts = await pages();
          stored.set(counts.pages);
          this.set(counts.passages);
        },
      });
      void passages;
    }
  }
}

/** Whether an Authorization header carries this bearer token (compared in constant time). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const given = createHash('sha256').update(match[1]).digest();
  return timingSafeEqual(given, createHash('sha256').update(token).digest());
}

/**
 * Records every request; serves GET /metrics only with a token (`server.metrics_token`), to `Authorization: Bearer
 * <token>` (401 otherwise). Without a token the route does not exist: the counters show traffic per route and payment
 * mode, the process's memory and Node version, which is an operator's business.
 */
export async function metricsPlugin(app: FastifyInstance, options: { metrics: ApiMetrics; token?: string | undefined }): Promise<void> {
  const { metrics, token } = options;
  app.addHook('onSend', async (request, reply, payload) => {
    // The paid route notes the credits_used of the answer it made (reading it back from the body cost a JSON.parse of
    // every answer); a replay's header says it was not charged now.
    const credits = request.creditsCharged;
    if (reply.statusCode === 200 && request.admission?.payer && typeof credits === 'number' && reply.getHeader('Idempotency-Replayed') === undefined) {
      metrics.credits.inc({ route: request.routeOptions.url ?? 'unmatched', mode: request.admission.payer.mode }, credits);
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const mode = request.admission?.payer?.mode ?? (request.admission ? 'none' : '');
    metrics.requests.inc({ route, method: request.method, status: String(reply.statusCode), mode });
    metrics.latency.observe({ route, method: request.method }, reply.elapsedTime / 1000);
  });
  if (token === undefined) return;
  app.get('/metrics', { schema: { summary: 'Prometheus metrics (Authorization: Bearer <server.metrics_token>): requests by route, status and payment mode, latency, credits charged, crawl and index counters.', tags: ['operator'], 'x-notary-produces': 'text/plain; version=0.0.4' } }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, token)) {
      reply.header('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new NotaryError('metrics_token_required', 'GET /metrics needs Authorization: Bearer <server.metrics_token> (NOTARY_METRICS_TOKEN)');
    }
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

// Not encapsulated: the hooks see every route of the app (what fastify-plugin's skip-override does).
Object.assign(metricsPlugin, { [Symbol.for('skip-override')]: true });
