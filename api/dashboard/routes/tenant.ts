import { stringify } from 'csv-stringify/sync';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotaryError } from '../../../core/index.js';
import {
  KEY_SCOPES,
  type KeyScope,
  effectiveTier,
  tenantFeatures,
  policyFor,
  registeredPlugins,
} from '../../../payments/index.js';
import type { LedgerEntry, Tenant, UsageDimension } from '../../../storage/index.js';
import type { DashboardDeps } from '../deps.js';
import { requireMember } from '../session.js';
import { dateParam, dayRange } from '../time.js';
import { usageSeries } from '../usage-series.js';

const idParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

const ledgerQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: ['debit', 'credit', ''] },
    from: { type: 'string', maxLength: 10 },
    to: { type: 'string', maxLength: 10 },
    key_id: { type: 'string', maxLength: 64 },
    before: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' },
    limit: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
  },
} as const;

interface LedgerQuery {
  kind?: 'debit' | 'credit' | '';
  from?: string;
  to?: string;
  key_id?: string;
  /** Query strings are not coerced (the app's validator keeps types strict): digits, turned into numbers here. */
  before?: string;
  limit?: string;
}

/** A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR at the start) is prefixed with a quote. */
function textCell(value: string | null): string {
  if (value === null) return '';
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/**
 * The tenant pages' endpoints: its tier and limits, API keys (the plaintext is in the creation answer only),
 * the credit ledger (filters, CSV), usage by day, and the plug-ins' tenant endpoints. Every query is scoped to the
 * signed-in member's tenant: an id of another tenant's key is "not found".
 */
export async function tenantRoutes(app: FastifyInstance, { deps }: { deps: DashboardDeps }): Promise<void> {
  const tenantOf = async (request: FastifyRequest): Promise<Tenant> => {
    const member = requireMember(request);
    return deps.accounts.getTenant(member.tenant_id);
  };

  app.get('/tenant', async (request) => {
    const snapshot = await deps.catalog.current();
    const found = await tenantOf(request);
    const tier = effectiveTier(snapshot, found.tier);
    const tenant = await deps.accounts.applyMonthlyGrant(found, tier.settings.monthly_credits);
    const table = snapshot.pricing.table(deps.config.search.max_depth);
    return {
      tenant: {
        id: tenant.id,
        name: tenant.name,
        credits: tenant.credits,
        tier: tenant.tier,
        suspended: tenant.suspended_at !== null,
        created_at: tenant.created_at,
        // The collections its keys may read at most (an operator's limit); null: every collection.
        collections: await deps.collections.namesOf(tenant.collections),
      },
      tier: {
        name: tier.name,
        requests_per_minute: tier.settings.requests_per_minute,
        burst: tier.settings.burst,
        monthly_credits: tier.settings.monthly_credits,
        rate_limit_policy: `"${tier.name}";${policyFor(tier.settings)}`,
      },
      features: tenantFeatures(snapshot, tenant),
      prices: table,
      test_keys: 'sk_test_ keys call the same API and are never charged; their responses say "test": true',
    };
  });

  app.get('/keys', async (request) => {
    const tenant = await tenantOf(request);
    return { keys: await deps.accounts.listKeys(tenant.id) };
  });

  app.post(
    '/keys',
    {
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            scopes: { type: 'array', items: { type: 'string', enum: [...KEY_SCOPES] }, minItems: 1, uniqueItems: true },
            expires_at: { anyOf: [{ type: 'string', maxLength: 40 }, { type: 'null' }] },
            environment: { type: 'string', enum: ['live', 'test'] },
            collections: { type: 'array', items: { type: 'string', maxLength: 64 }, minItems: 1, maxItems: 50, uniqueItems: true },
          },
        },
      },
    },
    async (request, reply) => {
      const tenant = await tenantOf(request);
      if (tenant.suspended_at !== null) throw new NotaryError('tenant_suspended', 'The tenant is suspended: no new keys');
      const body = request.body as { name: string; scopes?: KeyScope[]; expires_at?: string | null; environment?: 'live' | 'test'; collections?: string[] };
      let expiresAt: Date | null = null;
      if (body.expires_at) {
        const parsed = /^\d{4}-\d{2}-\d{2}$/.test(body.expires_at) ? Date.parse(`${body.expires_at}T23:59:59Z`) : Date.parse(body.expires_at);
        if (Number.isNaN(parsed)) throw new NotaryError('invalid_request', 'expires_at must be a date (YYYY-MM-DD) or an ISO 8601 instant');
        expiresAt = new Date(parsed);
      }
      if (body.environment === 'test') {
        const features = tenantFeatures(await deps.catalog.current(), tenant);
        if (!features.includes('test_keys')) throw new NotaryError('feature_not_enabled', 'Test keys are not enabled for this tenant', { feature: 'test_keys' });
      }
      const collections = body.collections ? await deps.collections.idsWithinTenant(body.collections, tenant.collections) : undefined;
      const created = await deps.accounts.createKey(tenant.id, {
        name: body.name,
        ...(collections ? { collections } : {}),
        expiresAt,
        ...(body.scopes ? { scopes: body.scopes } : {}),
        environment: body.environment ?? 'live',
      });
      reply.code(201).header('Cache-Control', 'no-store');
      return { key: created.key, record: created.record };
    },
  );

  app.post('/keys/:id/revoke', { schema: { params: idParam } }, async (request) => {
    const tenant = await tenantOf(request);
    return { record: await deps.accounts.revokeKey((request.params as { id: string }).id, tenant.id) };
  });

  const ledgerRows = async (request: FastifyRequest, limit: number): Promise<LedgerEntry[]> => {
    const tenant = await tenantOf(request);
    const query = request.query as LedgerQuery;
    const from = dateParam(query.from, 'from');
    const to = dateParam(query.to, 'to', true);
    return deps.accounts.ledgerPage(tenant.id, {
      ...(query.kind ? { kind: query.kind } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      ...(query.key_id ? { keyId: query.key_id } : {}),
      ...(query.before !== undefined ? { beforeId: Number(query.before) } : {}),
      limit,
    });
  };

  app.get('/ledger', { schema: { querystring: ledgerQuery } }, async (request) => {
    const limit = Math.min(500, Number((request.query as LedgerQuery).limit ?? 50));
    const rows = await ledgerRows(request, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { entries: page, next_before: rows.length > limit && last ? last.id : null };
  });

  app.get('/ledger.csv', { schema: { querystring: ledgerQuery } }, async (request, reply) => {
    const rows = await ledgerRows(request, 100_000);
    const csv = stringify(
      rows.map((row) => [row.id, row.created_at, row.delta, row.balance_after, textCell(row.reason), row.request_id ?? '', row.key_id ?? '']),
      { header: true, columns: ['id', 'created_at', 'delta', 'balance_after', 'reason', 'request_id', 'key_id'] },
    );
    return reply
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="ledger-${new Date().toISOString().slice(0, 10)}.csv"`)
      .header('Cache-Control', 'no-store')
      .send(csv);
  });

  app.get(
    '/usage',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            days: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
            by: { type: 'string', enum: ['operation', 'depth', 'mode', 'environment'] },
            environment: { type: 'string', enum: ['live', 'test', 'all'] },
          },
        },
      },
    },
    async (request) => {
      const tenant = await tenantOf(request);
      const query = request.query as { days?: string; by?: UsageDimension; environment?: 'live' | 'test' | 'all' };
      const range = dayRange(Number(query.days ?? 30));
      const by = query.by ?? 'operation';
      const environment = query.environment ?? 'all';
      const buckets = await deps.usage.daily(
        { tenantId: tenant.id, from: range.from, to: range.to, ...(environment === 'all' ? {} : { environment }) },
        by,
      );
      return { by, environment, ...usageSeries(range.days, buckets) };
    },
  );

  // The plug-ins' endpoints for the member's tenant (e.g. a payment mode's keys), scoped the same way.
  for (const plugin of registeredPlugins()) {
    for (const route of plugin.tenantRoutes?.(deps.service) ?? []) {
      app.route({
        method: route.method,
        url: route.url,
        ...(route.schema ? { schema: route.schema } : {}),
        handler: async (request, reply) => {
          const tenant = await tenantOf(request);
          const answer = await route.handle({ tenant, params: (request.params ?? {}) as Record<string, string>, body: request.body });
          if (answer.status !== undefined) reply.code(answer.status);
          return answer.body;
        },
      });
    }
  }
}
