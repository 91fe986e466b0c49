import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { NotaryError, newId } from '../../core/index.js';
import { vetUrl, type AddressPolicy } from '../../extract/index.js';
import { checkCollectionAccess, effectiveTier, type CatalogSource, type TierSettings } from '../../payments/index.js';
import type { AuthenticatedPayer, Admission, Price } from '../../payments/index.js';
import type { CrawlJobRow, CrawlJobStore } from '../../storage/index.js';
import { resolveCollection, sendStored, type PaidRoute } from '../paid/context.js';
import { PAID_ROUTE_PROBLEM_STATUSES, problemResponses } from '../paid/schemas.js';
import { crawlBodySchema, crawlJobListSchema, crawlJobRequest, crawlJobSchema, DEFAULT_MAX_PAGES, presentJob, type CrawlJobBody, type CrawlJobRequest } from './crawl-job.js';

export interface CrawlJobsDeps {
  jobs: CrawlJobStore;
  /** The tiers in force: their crawl limits apply to the payer's tier. */
  catalog: CatalogSource;
  /** The address policy tenants' seeds are checked against (the strict one: the seeds' origins are not exempt). */
  addressPolicy: Omit<AddressPolicy, 'allowedPrivateOrigins'>;
  /**
   * Checks that a job's `webhook` names an endpoint of the payer's tenant (404 webhook_not_found otherwise, before
   * anything is held); a payer without an account has no endpoint (400 invalid_request). Absent: not checked.
   */
  checkWebhook?(endpointId: string, tenantId: string): Promise<void>;
  /** Whether the operator lets this tenant's jobs reach private addresses (beyond `addressPolicy`); absent: never. */
  tenantAllowsPrivate?(tenantId: string): Promise<boolean>;
}

const LIST_LIMIT = 50;

/** Start of the current UTC day: crawl_pages_per_day counts from there. */
function utcDayStart(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
}

function limitReached(tier: string, limit: 'crawl_pages_per_job' | 'crawl_concurrent_jobs' | 'crawl_pages_per_day', allowed: number, detail: string): NotaryError {
  return new NotaryError('crawl_limit_reached', `${detail} (tiers.${tier}.${limit} = ${allowed}); nothing was charged`, { limit, allowed, tier });
}

/** The tier's limits a new job must keep to, given the payer's active jobs and the pages of its jobs today. */
function keepsToLimits(tierName: string, tier: TierSettings, maxPages: number, active: number, today: number): void {
  if (maxPages > tier.crawl_pages_per_job) {
    throw limitReached(tierName, 'crawl_pages_per_job', tier.crawl_pages_per_job, `max_pages ${maxPages} is more than one job of this tier may store: ask for at most ${tier.crawl_pages_per_job}`);
  }
  if (active >= tier.crawl_concurrent_jobs) {
    throw limitReached(tierName, 'crawl_concurrent_jobs', tier.crawl_concurrent_jobs, `${active} crawl jobs are queued or running: wait for one to end, or cancel one (DELETE /v1/crawl/{id})`);
  }
  if (today + maxPages > tier.crawl_pages_per_day) {
    throw limitReached(
      tierName,
      'crawl_pages_per_day',
      tier.crawl_pages_per_day,
      `Today's jobs stored or may still store ${today} pages, and this one up to ${maxPages}: lower max_pages to ${Math.max(0, tier.crawl_pages_per_day - today)} or wait for the next UTC day`,
    );
  }
}

/**
 * The tier's crawl limits, checked before anything is held (a refusal holds nothing); the job's insert checks them
 * again in the same step as the insert (CrawlJobStore.createWithinLimits), so two orders at once cannot both pass.
 */
async function checkLimits(deps: CrawlJobsDeps, payer: AuthenticatedPayer, tierName: string, tier: TierSettings, maxPages: number): Promise<void> {
  keepsToLimits(tierName, tier, maxPages, await deps.jobs.active(payer.payerId), await deps.jobs.pagesSince(payer.payerId, utcDayStart()));
}

async function vetSeeds(seeds: readonly string[], policy: CrawlJobsDeps['addressPolicy']): Promise<void> {
  for (const seed of seeds) {
    try {
      await vetUrl(new URL(seed), policy);
    } catch (err) {
      if (err instanceof NotaryError && err.code === 'upstream_unreachable') continue;
      throw err;
    }
  }
}

function payerOf(admission: Admission | null): AuthenticatedPayer | null {
  if (!admission) throw new Error('crawl route reached without the paid-call admission');
  return admission.payer;
}

/**
 * POST /v1/crawl (a job, quoted at max_pages pages and held, charged when it ends for the pages it stored), GET
 * /v1/crawl and /v1/crawl/{id} (the caller's jobs), DELETE /v1/crawl/{id} (cancel). Registered in the paid-route
 * context: the caller is identified and rate limited like every /v1 call; only POST is charged.
 */
export function crawlRoutes(deps: CrawlJobsDeps): PaidRoute {
  return {
    url: '/v1/crawl',
    register(app, context) {
      const { gate } = context;
      const collections = context.collections;
      if (!collections) throw new Error('crawl jobs need the collection store');
      /** The caller, or the challenges of the modes that can pay a job. */
      const caller = async (request: FastifyRequest): Promise<AuthenticatedPayer> => {
        const payer = payerOf(request.admission);
        if (payer) return payer;
        const admission = request.admission as Admission;
        throw await gate.challengeFor(admission, admission.pricing.price({ operation: 'crawl', pages: DEFAULT_MAX_PAGES }), true);
      };
      const sendJob = (reply: FastifyReply, row: CrawlJobRow) => reply.code(200).send(presentJob(row));
      const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;
      const notFound = (id: string) => new NotaryError('crawl_job_not_found', `There is no crawl job ${id.slice(0, 64)} of these credentials: list yours with GET /v1/crawl`, { id: id.slice(0, 64) });

      app.post(
        '/v1/crawl',
        {
          schema: {
            summary: 'Start a crawl job: answered 202 at once; quoted at max_pages pages, charged when it ends for the pages it stored.',
            'x-notary-paid': true,
            body: crawlBodySchema,
            response: { 202: crawlJobSchema, ...problemResponses([...PAID_ROUTE_PROBLEM_STATUSES, 403, 404]) },
          } as FastifySchema,
        },
        async (request, reply) => {
          const admission = request.admission;
          if (!admission) throw new Error('crawl route reached without the paid-call admission');
          const asked: CrawlJobRequest = crawlJobRequest(request.body as CrawlJobBody);
          const payer = admission.payer;
          const snapshot = await deps.catalog.current();
          const { name: tierName, settings: tier } = effectiveTier(snapshot, payer?.rateLimits[0]?.tier ?? snapshot.anonymousTier);
          const maxPages = asked.maxPages ?? Math.min(DEFAULT_MAX_PAGES, tier.crawl_pages_per_job);
          const price: Price = admission.pricing.price({ operation: 'crawl', pages: maxPages });
          const rawBody = request.rawBody ?? Buffer.alloc(0);
          const collection = await resolveCollection(collections, asked.collection, admission, () => gate.begin(admission, rawBody, price, undefined, { deferred: true }));
          if (!payer) throw await gate.challengeFor(admission, price, true);
          gate.checkDeferred(payer, price);
          checkCollectionAccess(payer, collection);
          // The deployment's policy, or this tenant's allowance (an intranet the operator opened to it alone).
          const allowPrivate = deps.addressPolicy.allowPrivateNetworks || (payer.tenantId !== undefined && (await deps.tenantAllowsPrivate?.(payer.tenantId)) === true);
          const begun = await gate.begin(admission, rawBody, price, collection, {
            deferred: true,
            // After a replay is ruled out: a retry of an accepted job answers that job whatever the limits say now.
            check: async () => {
              await checkLimits(deps, payer, tierName, tier, maxPages);
              await vetSeeds(asked.seeds, { ...deps.addressPolicy, allowPrivateNetworks: allowPrivate });
              if (asked.webhook !== null && deps.checkWebhook) {
                if (payer.tenantId === undefined) {
                  throw new NotaryError('invalid_request', 'webhook: payers without an account have no webhook endpoints; leave it out, or pay with an API key');
                }
                await deps.checkWebhook(asked.webhook, payer.tenantId);
              }
            },
          });
          if (begun.kind === 'replay') return sendStored(reply, begun.response, true);
          const id = newId('crawl');
          const response = await begun.call.hold(id, async (held) => {
            const row = await deps.jobs.createWithinLimits({
              id,
              payer: payer.payerId,
              tenant_id: payer.tenantId ?? null,
              tier: tierName,
              collection_id: collection.id,
              collection_name: collection.name,
              seeds: JSON.stringify(asked.seeds),
              scope: asked.scope,
              max_pages: maxPages,
              max_depth: asked.maxDepth,
              include: JSON.stringify(asked.include),
              exclude: JSON.stringify(asked.exclude),
              webhook: asked.webhook,
              allow_private: allowPrivate ? 1 : 0,
              credits_quoted: held.test === true ? 0 : price.credits,
              hold: JSON.stringify(held),
              request_id: request.id,
              created_at: new Date().toISOString(),
            }, { since: utcDayStart(), check: (active, today) => keepsToLimits(tierName, tier, maxPages, active, today) });
            return {
              status: 202,
              headers: { 'content-type': 'application/json; charset=utf-8', location: `/v1/crawl/${id}`, ...admission.rateLimitHeaders },
              body: String(reply.code(202).serialize(presentJob(row))),
            };
          });
          return sendStored(reply, response, false);
        },
      );

      app.get(
        '/v1/crawl',
        {
          schema: {
            summary: "The caller's crawl jobs, newest first (50 a page; pass next_cursor as cursor for older ones). Not charged.",
            'x-notary-paid': true,
            querystring: { type: 'object', additionalProperties: false, properties: { cursor: { type: 'string', maxLength: 64 } } },
            response: { 200: crawlJobListSchema, ...problemResponses([...PAID_ROUTE_PROBLEM_STATUSES, 404]) },
          } as FastifySchema,
        },
        async (request, reply) => {
          const payer = await caller(request);
          const cursor = (request.query as { cursor?: string }).cursor;
          const before = cursor === undefined ? undefined : await deps.jobs.getFor(cursor, payer.payerId);
          if (cursor !== undefined && !before) throw notFound(cursor);
          const rows = await deps.jobs.list(payer.payerId, LIST_LIMIT + 1, before);
          const page = rows.slice(0, LIST_LIMIT);
          const last = page.at(-1);
          return reply.code(200).send({ jobs: page.map(presentJob), next_cursor: rows.length > LIST_LIMIT && last ? last.id : null });
        },
      );

      // GET reads the caller's job, DELETE cancels it; another payer's job is as absent as an unknown id.
      const jobRoutes: Array<['GET' | 'DELETE', string, (id: string, payer: string) => Promise<CrawlJobRow | undefined>]> = [
        ['GET', 'A crawl job: its state and progress (stored, queued, failed, rate, time left). Not charged.', (id, payer) => deps.jobs.getFor(id, payer)],
        [
          'DELETE',
          'Cancel a crawl job: it stops within a few seconds and is charged for the pages it stored until then. Not charged.',
          (id, payer) => deps.jobs.cancel(id, payer),
        ],
      ];
      for (const [method, summary, act] of jobRoutes) {
        app.route({
          method,
          url: '/v1/crawl/:id',
          schema: {
            summary,
            'x-notary-paid': true,
            params: idParams,
            response: { 200: crawlJobSchema, ...problemResponses([...PAID_ROUTE_PROBLEM_STATUSES, 404]) },
          } as FastifySchema,
          handler: async (request, reply) => {
            const payer = await caller(request);
            const { id } = request.params as { id: string };
            const row = await act(id, payer.payerId);
            if (!row) throw notFound(id);
            return sendJob(reply, row);
          },
        });
      }
    },
  };
}
