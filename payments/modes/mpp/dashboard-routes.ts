import type { PluginServices, PluginTenantRoute } from '../../plugin.js';
import { mppParties } from './service.js';

/**
 * The dashboard's party keys page: the signed-in member's tenant lists, adds and revokes the Ed25519 keys it signs
 * MPP envelopes with (what `notary parties` does for an operator). Another tenant's kid is "not found".
 */
export function partyKeyRoutes(services: PluginServices): PluginTenantRoute[] {
  const parties = () => services(mppParties);
  return [
    {
      method: 'GET',
      url: '/party-keys',
      handle: async ({ tenant }) => ({ body: { party: tenant.name, keys: await parties().listKeys([tenant], tenant.id) } }),
    },
    {
      method: 'POST',
      url: '/party-keys',
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['public_key'],
          properties: { public_key: { type: 'string', maxLength: 2000 }, name: { type: 'string', maxLength: 100 } },
        },
      },
      handle: async ({ tenant, body }) => {
        const { public_key: publicKey, name } = body as { public_key: string; name?: string };
        const trimmed = name?.trim();
        const { key, created } = await parties().addKey(tenant, publicKey, trimmed ? trimmed : undefined);
        return { status: created ? 201 : 200, body: { key: { ...key, tenant: tenant.name }, created } };
      },
    },
    {
      method: 'POST',
      url: '/party-keys/:kid/revoke',
      schema: { params: { type: 'object', required: ['kid'], properties: { kid: { type: 'string', maxLength: 64 } } } },
      handle: async ({ tenant, params }) => {
        const key = await parties().revokeKey(params['kid'] ?? '', tenant.id);
        return { body: { key: { ...key, tenant: tenant.name } } };
      },
    },
  ];
}
