import type { FastifyInstance, FastifyRequest } from 'fastify';
import { COLLECTION_NAME_PATTERN, FEATURES, NotaryError, parseCollectionIds } from '../../../core/index.js';
import { normaliseUrl, urlPatternProblem } from '../../../crawler/index.js';
import { tenantFeatures, type CatalogSnapshot, policyFor } from '../../../payments/index.js';
import {
  DEFAULT_SEED_OPTIONS,
  SEED_SCOPES,
  type CrawlSeed,
  type SeedOptions,
  type SeedScope,
} from '../../../storage/index.js';
import type { CrawlRun } from '../../../storage/index.js';
import type { DashboardDeps } from '../deps.js';
import { requireOperator } from '../session.js';
import { dayRange } from '../time.js';
import { revenueSeries } from '../usage-series.js';

const idParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

const seedProperties = {
  include: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 500 } },
  exclude: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 500 } },
  scope: { anyOf: [{ type: 'string', enum: [...SEED_SCOPES] }, { type: 'null' }] },
  max_depth: { anyOf: [{ type: 'integer', minimum: 0, maximum: 1000 }, { type: 'null' }] },
  max_pages: { anyOf: [{ type: 'integer', minimum: 1, maximum: 10_000_000 }, { type: 'null' }] },
  recrawl_hours: { type: 'number', minimum: 0.05, maximum: 24 * 366 },
  paused: { type: 'boolean' },
  collection: { anyOf: [{ type: 'string', pattern: COLLECTION_NAME_PATTERN }, { type: 'null' }] },
} as const;

interface SeedBody {
  url?: string;
  include?: string[];
  exclude?: string[];
  scope?: SeedScope | null;
  max_depth?: number | null;
  max_pages?: number | null;
  recrawl_hours?: number;
  paused?: boolean;
  collection?: string | null;
}

/** A run is "running" while its worker writes progress; one silent for this long is shown as stale (its process died). */
const STALE_MS = 60_000;

function checkPatterns(patterns: readonly string[] | undefined, field: string): string[] {
  for (const pattern of patterns ?? []) {
    const problem = urlPatternProblem(pattern);
    if (problem !== null) throw new NotaryError('invalid_request', `${field}: "${pattern}" is not a valid pattern (${problem})`);
  }
  return [...(patterns ?? [])];
}

function seedOptions(body: SeedBody, base: SeedOptions): SeedOptions {
  return {
    include: body.include !== undefined ? checkPatterns(body.include, 'include') : base.include,
    exclude: body.exclude !== undefined ? checkPatterns(body.exclude, 'exclude') : base.exclude,
    scope: body.scope !== undefined ? body.scope : base.scope,
    max_depth: body.max_depth !== undefined ? body.max_depth : base.max_depth,
    max_pages: body.max_pages !== undefined ? body.max_pages : base.max_pages,
    collection: body.collection !== undefined ? body.collection : base.collection,
  };
}

/** finished, stopped (a signal or an operator ended it: resumable), interrupted (its process died), running, or stale. */
function runState(run: CrawlRun, stats: Record<string, unknown> | null, now: number): 'running' | 'stale' | 'finished' | 'stopped' | 'interrupted' {
  if (run.status === 'finished' || run.status === 'stopped' || run.status === 'interrupted') return run.status;
  if (run.finished_at) return stats?.['aborted'] === true ? 'stopped' : 'finished';
  const written = typeof stats?.['updated_at'] === 'string' ? Date.parse(stats['updated_at']) : 0;
  const seen = Math.max(written, Date.parse(run.heartbeat_at ?? run.started_at));
  return now - seen > STALE_MS ? 'stale' : 'running';
}

function runView(run: CrawlRun, now: number) {
  const stats = run.stats ? (JSON.parse(run.stats) as Record<string, unknown>) : null;
  const state = runState(run, stats, now);
  return { id: run.id, seeds: JSON.parse(run.seeds) as string[], started_at: run.started_at, finished_at: run.finished_at, state, resumed_from: run.resumed_from, stats };
}

function seedView(seed: CrawlSeed) {
  return { ...seed, recrawl_hours: Math.round((seed.recrawl_minutes / 60) * 100) / 100 };
}

function tiersView(snapshot: CatalogSnapshot) {
  return Object.fromEntries(Object.entries(snapshot.tiers).map(([name, tier]) => [name, { ...tier, rate_limit_policy: `"${name}";${policyFor(tier)}` }]));
}

/**
 * The operator pages' endpoints: crawl seeds and live crawl status, index statistics, the price list and tiers (kept
 * in the database, in force for the next call), tenants (credits, tier, suspension, features), and revenue by payment
 * mode. Every route requires an operator's session.
 */
export async function operatorRoutes(app: FastifyInstance, { deps }: { deps: DashboardDeps }): Promise<void> {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    requireOperator(request);
  });
  const operatorEmail = (request: FastifyRequest) => requireOperator(request).email;

  app.get('/overview', async () => {
    const [tenants, counts, runs, snapshot] = await Promise.all([deps.accounts.listTenants(), deps.pages.counts(), deps.runs.recent(1), deps.catalog.current()]);
    const range = dayRange(1);
    const today = await deps.usage.daily({ from: range.from, to: range.to, environment: 'live' }, 'mode');
    return {
      tenants: tenants.length,
      suspended: tenants.filter((t) => t.suspended_at !== null).length,
      pages: counts.pages,
      passages: counts.passages,
      last_run: runs[0] ? runView(runs[0], Date.now()) : null,
      calls_today: today.reduce((sum, b) => sum + b.calls, 0),
      credits_today: today.reduce((sum, b) => sum + b.credits, 0),
      prices_from: snapshot.origins.pricing.source,
      tiers_from: snapshot.origins.tiers.source,
    };
  });

  // Crawl seeds.
  app.get('/seeds', async () => ({ seeds: (await deps.seeds.list()).map(seedView), defaults: { recrawl_hours: deps.config.crawler.recrawl_after_hours, scope: deps.config.crawler.scope } }));

  app.post(
    '/seeds',
    { schema: { body: { type: 'object', additionalProperties: false, required: ['url'], properties: { url: { type: 'string', minLength: 1, maxLength: 2000 }, ...seedProperties } } } },
    async (request, reply) => {
      const body = request.body as SeedBody & { url: string };
      const url = normaliseUrl(body.url.trim());
      if (!url) throw new NotaryError('invalid_seed', `"${body.url.slice(0, 200)}" is not an absolute http(s) URL`);
      const seed = await deps.seeds.add({
        url,
        source: 'operator',
        options: seedOptions(body, DEFAULT_SEED_OPTIONS),
        recrawlMinutes: Math.round((body.recrawl_hours ?? deps.config.crawler.recrawl_after_hours) * 60),
        paused: body.paused ?? false,
      });
      if (!seed) throw new NotaryError('seed_exists', `${url} is a crawl seed already`);
      reply.code(201);
      return { seed: seedView(seed) };
    },
  );

  app.patch('/seeds/:id', { schema: { params: idParam, body: { type: 'object', additionalProperties: false, properties: seedProperties } } }, async (request) => {
    const { id } = request.params as { id: string };
    const current = await deps.seeds.get(id);
    if (!current) throw new NotaryError('seed_not_found', `no crawl seed with id ${id}`);
    const body = request.body as SeedBody;
    const seed = await deps.seeds.update(id, {
      options: seedOptions(body, current.options),
      ...(body.paused !== undefined ? { paused: body.paused } : {}),
      ...(body.recrawl_hours !== undefined ? { recrawlMinutes: Math.round(body.recrawl_hours * 60) } : {}),
    });
    if (!seed) throw new NotaryError('seed_not_found', `no crawl seed with id ${id}`);
    return { seed: seedView(seed) };
  });

  app.delete('/seeds/:id', { schema: { params: idParam } }, async (request) => {
    const { id } = request.params as { id: string };
    if (!(await deps.seeds.remove(id))) throw new NotaryError('seed_not_found', `no crawl seed with id ${id}`);
    return { removed: id };
  });

  app.post('/seeds/:id/crawl', { schema: { params: idParam } }, async (request) => {
    const { id } = request.params as { id: string };
    const seed = await deps.seeds.requestCrawl(id);
    if (!seed) throw new NotaryError('seed_not_found', `no crawl seed with id ${id}`);
    return { seed: seedView(seed) };
  });

  app.get('/crawl', async () => {
    const now = Date.now();
    const runs = (await deps.runs.recent(20)).map((run) => runView(run, now));
    return { runs, worker: { enabled: deps.config.server.crawl_on_start, poll_s: deps.config.dashboard.seed_poll_s } };
  });

  app.get('/index', async () => {
    const [counts, index, last] = await Promise.all([deps.pages.counts(), deps.index.stats(), deps.runs.latest()]);
    return { pages: counts, index, last_crawl: last ? runView(last, Date.now()) : null };
  });

  // Prices.
  const pricingView = (snapshot: CatalogSnapshot) => ({
    pricing: snapshot.pricing.settings,
    table: snapshot.pricing.table(deps.config.search.max_depth),
    max_depth: deps.config.search.max_depth,
    cross_encoder_from: snapshot.pricing.crossEncoderFrom,
    origin: snapshot.origins.pricing,
  });

  app.get('/pricing', async () => pricingView(await deps.catalog.current()));
  app.put('/pricing', { bodyLimit: 64 * 1024 }, async (request) => pricingView(await deps.catalog.setPricing(request.body, operatorEmail(request))));
  app.delete('/pricing', async () => pricingView(await deps.catalog.reset('pricing')));

  // Tiers.
  const tiersResponse = async (snapshot: CatalogSnapshot) => {
    const tenants = await deps.accounts.listTenants();
    const perTier: Record<string, number> = {};
    for (const tenant of tenants) perTier[tenant.tier] = (perTier[tenant.tier] ?? 0) + 1;
    return { tiers: tiersView(snapshot), default_tier: snapshot.defaultTier, anonymous_tier: snapshot.anonymousTier, tenants_per_tier: perTier, features: FEATURES, origin: snapshot.origins.tiers };
  };
  app.get('/tiers', async () => tiersResponse(await deps.catalog.current()));
  app.put('/tiers', { bodyLimit: 64 * 1024 }, async (request) => {
    const body = request.body as { tiers?: unknown } | null;
    return tiersResponse(await deps.catalog.setTiers(body?.tiers, operatorEmail(request)));
  });
  app.delete('/tiers', async () => tiersResponse(await deps.catalog.reset('tiers')));

  // Tenants.
  app.get('/tenants', async () => {
    const [tenants, members, keys, snapshot, collections] = await Promise.all([
      deps.accounts.listTenants(),
      deps.users.list({ role: 'member' }),
      deps.accounts.listKeys(),
      deps.catalog.current(),
      deps.collections.list(),
    ]);
    const nameOf = new Map(collections.map((c) => [c.id, c.name]));
    return {
      tenants: tenants.map((tenant) => ({
        id: tenant.id,
        name: tenant.name,
        tier: tenant.tier,
        credits: tenant.credits,
        suspended: tenant.suspended_at !== null,
        features: tenantFeatures(snapshot, tenant),
        features_overridden: tenant.features !== null,
        members: members.filter((m) => m.tenant_id === tenant.id).map((m) => m.email),
        active_keys: keys.filter((k) => k.tenant_id === tenant.id && k.revoked_at === null).length,
        created_at: tenant.created_at,
        // The collections its keys read at most (PUT operator/tenants/{id}/collections); null: every collection.
        collections: parseCollectionIds(tenant.collections)?.map((id) => nameOf.get(id) ?? id) ?? null,
        // Its crawl jobs may reach private addresses (PATCH allow_private_networks).
        allow_private_networks: tenant.allow_private_networks === 1,
      })),
      tiers: Object.keys(snapshot.tiers),
      features: FEATURES,
    };
  });

  app.post(
    '/tenants/:id/grant',
    {
      schema: {
        params: idParam,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['credits'],
          properties: { credits: { type: 'integer', minimum: 1, maximum: 1_000_000_000 }, reason: { type: 'string', maxLength: 200 } },
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const body = request.body as { credits: number; reason?: string };
      const reason = `grant by ${operatorEmail(request)}${body.reason?.trim() ? `: ${body.reason.trim()}` : ''}`;
      return deps.accounts.grantCredits(id, body.credits, reason);
    },
  );

  app.patch(
    '/tenants/:id',
    {
      schema: {
        params: idParam,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            tier: { type: 'string', maxLength: 32 },
            suspended: { type: 'boolean' },
            features: { anyOf: [{ type: 'array', items: { type: 'string', enum: [...FEATURES] }, uniqueItems: true }, { type: 'null' }] },
            allow_private_networks: { type: 'boolean' },
          },
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const { allow_private_networks: allowPrivate, ...body } = request.body as { tier?: string; suspended?: boolean; features?: string[] | null; allow_private_networks?: boolean };
      await deps.catalog.current();
      const tenant = await deps.accounts.updateTenant(id, { ...body, ...(allowPrivate !== undefined ? { allowPrivateNetworks: allowPrivate } : {}) });
      return { tenant: { id: tenant.id, name: tenant.name, tier: tenant.tier, suspended: tenant.suspended_at !== null, features: tenantFeatures(await deps.catalog.current(), tenant) } };
    },
  );

  // Revenue: what every payment mode brought in, per day (live calls only).
  app.get('/revenue', { schema: { querystring: { type: 'object', additionalProperties: false, properties: { days: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' } } } } }, async (request) => {
    const range = dayRange(Number((request.query as { days?: string }).days ?? 30));
    const snapshot = await deps.catalog.current();
    const decimals = snapshot.pricing.asset.decimals;
    const [calls, settled] = await Promise.all([deps.usage.daily({ from: range.from, to: range.to, environment: 'live' }, 'mode'), deps.usage.settled(range.from, range.to)]);
    return {
      days: range.days,
      // Calls served and their credits, by mode (every mode, from the usage records).
      modes: revenueSeries(range.days, calls, decimals),
      // Money settled by pay-per-call modes, from the payments ledger.
      settled: revenueSeries(range.days, settled, decimals),
      credit_price: snapshot.pricing.asset,
    };
  });
}
