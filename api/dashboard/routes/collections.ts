import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  COLLECTION_NAME_PATTERN,
  checkCollectionSettings,
  collectionSettingsOf,
  NotaryError,
} from '../../../core/index.js';
import type { Collection } from '../../../storage/index.js';
import type { DashboardDeps } from '../deps.js';
import { requireOperator } from '../session.js';

const nameParam = { type: 'object', required: ['name'], properties: { name: { type: 'string', pattern: COLLECTION_NAME_PATTERN } } } as const;

const settingsProperties = {
  public: { type: 'boolean' },
  credits_by_depth: { anyOf: [{ type: 'array', minItems: 1, maxItems: 10, items: { type: 'integer', minimum: 0, maximum: 1_000_000 } }, { type: 'null' }] },
  max_depth: { anyOf: [{ type: 'integer', minimum: 1, maximum: 100 }, { type: 'null' }] },
} as const;

interface SettingsBody {
  public?: boolean;
  credits_by_depth?: number[] | null;
  max_depth?: number | null;
}

/**
 * The operators' collections (issue 33): each with its pages, whether pay-per-call payers may read it, its own search
 * prices and maximum depth (null: the price list's and search.max_depth), and the seeds that crawl into it.
 */
export async function collectionRoutes(app: FastifyInstance, { deps }: { deps: DashboardDeps }): Promise<void> {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    requireOperator(request);
  });

  const view = (collection: Collection, pages: number, seeds: string[]) => {
    const own = collectionSettingsOf(collection);
    return {
      id: collection.id,
      name: collection.name,
      public: collection.public === 1,
      pages,
      credits_by_depth: own.creditsByDepth,
      max_depth: own.maxDepth,
      seeds,
      created_at: collection.created_at,
    };
  };

  const one = async (collection: Collection) => {
    const [counts, seeds] = await Promise.all([deps.collections.pageCounts(), deps.seeds.list()]);
    return view(collection, counts.get(collection.id) ?? 0, seeds.filter((s) => (s.options.collection ?? 'default') === collection.name).map((s) => s.url));
  };

  app.get('/collections', async () => {
    const [collections, counts, seeds, snapshot] = await Promise.all([deps.collections.list(), deps.collections.pageCounts(), deps.seeds.list(), deps.catalog.current()]);
    return {
      collections: collections.map((c) => view(c, counts.get(c.id) ?? 0, seeds.filter((s) => (s.options.collection ?? 'default') === c.name).map((s) => s.url))),
      defaults: { credits_by_depth: snapshot.pricing.settings.search.credits_by_depth, max_depth: deps.config.search.max_depth },
    };
  });

  app.post(
    '/collections',
    { schema: { body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, ...settingsProperties } } } },
    async (request, reply) => {
      const body = request.body as SettingsBody & { name: string };
      if (!new RegExp(COLLECTION_NAME_PATTERN).test(body.name)) {
        throw new NotaryError('invalid_collection', `"${body.name.slice(0, 80)}": a collection name is 1 to 64 lower-case letters, digits, "-" and "_", starting with a letter or digit`);
      }
      const settings = settingsOf(body);
      checkCollectionSettings(settings, deps.config.search.max_depth);
      if (await deps.collections.byName(body.name)) throw new NotaryError('invalid_collection', `a collection named "${body.name}" exists already`, { collection: body.name });
      await deps.collections.ensure(body.name);
      if (body.public !== undefined) await deps.collections.setPublic(body.name, body.public);
      const collection = await deps.collections.setSettings(body.name, settings);
      reply.code(201);
      return { collection: await one(collection) };
    },
  );

  // A tenant's limit: every key it has or makes, and its party keys, read at most these (null: every collection).
  app.put(
    '/tenants/:id/collections',
    {
      schema: {
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['collections'],
          properties: { collections: { anyOf: [{ type: 'array', items: { type: 'string', maxLength: 64 }, minItems: 1, maxItems: 50, uniqueItems: true }, { type: 'null' }] } },
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const { collections: names } = request.body as { collections: string[] | null };
      const ids = names === null ? null : await deps.collections.idsOfNames(names);
      const tenant = await deps.accounts.updateTenant(id, { collections: ids });
      return { tenant: { id: tenant.id, name: tenant.name, collections: names } };
    },
  );

  app.patch('/collections/:name', { schema: { params: nameParam, body: { type: 'object', additionalProperties: false, properties: settingsProperties } } }, async (request) => {
    const { name } = request.params as { name: string };
    const body = request.body as SettingsBody;
    const settings = settingsOf(body);
    checkCollectionSettings(settings, deps.config.search.max_depth);
    if (body.public !== undefined) await deps.collections.setPublic(name, body.public);
    return { collection: await one(await deps.collections.setSettings(name, settings)) };
  });
}

function settingsOf(body: SettingsBody): { creditsByDepth?: readonly number[] | null; maxDepth?: number | null } {
  return {
    ...(body.credits_by_depth !== undefined ? { creditsByDepth: body.credits_by_depth } : {}),
    ...(body.max_depth !== undefined ? { maxDepth: body.max_depth } : {}),
  };
}
