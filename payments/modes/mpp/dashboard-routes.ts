import type { PluginServices, PluginTenantRoute } from '../../plugin.js';
import type { PartyKey } from './parties.js';
import { mppCollections, mppParties } from './service.js';

/**
 * The dashboard's party keys page: the signed-in member's tenant lists, adds and revokes the Ed25519 keys it signs
 * MPP envelopes with (what `notary parties` does for an operator), each optionally limited to collections within
 * the tenant's own limit. Another tenant's kid is "not found".
 */
export function partyKeyRoutes(services: PluginServices): PluginTenantRoute[] {
  const parties = () => services(mppParties);
  const collections = () => services(mppCollections);
  /** A key as the page shows it: its collections by name (null: every collection the tenant may read). */
  const shown = async <K extends PartyKey>(key: K) => ({ ...key, collections: await collections().namesOf(key.collections) });
  return [
    {
      method: 'GET',
      url: '/party-keys',
      handle: async ({ tenant }) => ({ body: { party: tenant.name, keys: await Promise.all((await parties().listKeys([tenant], tenant.id)).map(shown)) } }),
    },
    {
      method: 'POST',
      url: '/party-keys',
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['public_key'],
          properties: {
            public_key: { type: 'string', maxLength: 2000 },
            name: { type: 'string', maxLength: 100 },
            collections: { type: 'array', items: { type: 'string', maxLength: 64 }, minItems: 1, maxItems: 50, uniqueItems: true },
          },
        },
      },
      handle: async ({ tenant, body }) => {
        const { public_key: publicKey, name, collections: names } = body as { public_key: string; name?: string; collections?: string[] };
        const trimmed = name?.trim();
        const limit = names ? await collections().idsWithinTenant(names, tenant.collections) : undefined;
        const { key, created } = await parties().addKey(tenant, publicKey, trimmed ? trimmed : undefined, limit);
        return { status: created ? 201 : 200, body: { key: { ...(await shown(key)), tenant: tenant.name }, created } };
      },
    },
    {
      method: 'POST',
      url: '/party-keys/:kid/revoke',
      schema: { params: { type: 'object', required: ['kid'], properties: { kid: { type: 'string', maxLength: 64 } } } },
      handle: async ({ tenant, params }) => {
        const key = await parties().revokeKey(params['kid'] ?? '', tenant.id);
        return { body: { key: { ...(await shown(key)), tenant: tenant.name } } };
      },
    },
  ];
}
