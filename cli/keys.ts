import { parseCollectionIds, NotaryError } from '../core/index.js';
import type { NotaryConfig } from '../core/index.js';
import { Runtime } from '../runtime/index.js';

export async function keysCreateCommand(
  cfg: NotaryConfig,
  opts: { tenant: string; credits?: number; tier?: string; name?: string; collections?: string },
): Promise<void> {
  if (opts.collections !== undefined && opts.collections.split(',').every((n) => n.trim() === '')) {
    throw new NotaryError('invalid_collection', '--collections names no collection: give one or more names, comma-separated');
  }
  const ctx = await Runtime.open(cfg);
  try {
    const collections = opts.collections === undefined ? undefined : await ctx.collections.idsOfList(opts.collections);
    const names = collections === undefined ? undefined : (await ctx.collections.byIds(collections)).map((c) => c.name);
    const tenant = await ctx.accounts.tenantFromOptions(opts);
    const created = await ctx.accounts.createKey(tenant.id, { ...(opts.name !== undefined ? { name: opts.name } : {}), ...(collections ? { collections } : {}) });
    const limited = names === undefined ? '' : ` (collections ${names.join(', ')} only)`;
    process.stderr.write(`created key ${created.record.id} for ${tenant.name}${limited}; it is shown once, store it now:\n`);
    process.stdout.write(`${created.key}\n`);
  } finally {
    await ctx.close();
  }
}

export async function keysRevokeCommand(cfg: NotaryConfig, keyId: string): Promise<void> {
  if (!/^key_[0-9A-Za-z]+$/.test(keyId)) throw new NotaryError('invalid_request', `"${keyId}" is not a key id (key_...)`);
  const ctx = await Runtime.open(cfg);
  try {
    const record = await ctx.accounts.revokeKey(keyId);
    process.stdout.write(`revoked ${record.id} (${record.prefix}…${record.last4})\n`);
  } finally {
    await ctx.close();
  }
}

export async function keysListCommand(cfg: NotaryConfig, opts: { tenant?: string; json?: boolean }): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const tenants = await ctx.accounts.listTenants();
    const byId = new Map(tenants.map((t) => [t.id, t]));
    let tenantId: string | undefined;
    if (opts.tenant) {
      tenantId = tenants.find((t) => t.name === opts.tenant)?.id;
      if (!tenantId) throw new NotaryError('tenant_not_found', `no tenant named "${opts.tenant}"`);
    }
    const keys = await ctx.accounts.listKeys(tenantId);
    const collectionNames = new Map((await ctx.collections.list()).map((c) => [c.id, c.name]));
    const readable = (k: { collections: string | null }): string[] | null => parseCollectionIds(k.collections)?.map((id) => collectionNames.get(id) ?? id) ?? null;
    if (opts.json) {
      const rows = keys.map((k) => {
        const t = byId.get(k.tenant_id);
        return {
          ...k,
          collections: readable(k),
          tenant_name: t?.name ?? null,
          tenant_tier: t?.tier ?? null,
          balance: t?.credits ?? null,
          state: k.revoked_at ? 'revoked' : 'active',
        };
      });
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    if (keys.length === 0) {
      process.stdout.write('no keys\n');
      return;
    }
    for (const k of keys) {
      const t = byId.get(k.tenant_id);
      const state = k.revoked_at ? `revoked ${k.revoked_at}` : 'active';
      process.stdout.write(
        `${k.id}  ${k.prefix}…${k.last4}  tenant ${t?.name ?? k.tenant_id} (${t?.credits ?? '?'} credits)  ${state}  created ${k.created_at}` +
          `${k.collections === null ? '' : `  collections ${readable(k)?.join(',') ?? ''}`}\n`,
      );
    }
  } finally {
    await ctx.close();
  }
}

/**
 * `notary keys private-networks --tenant NAME on|off`: whether the tenant's crawl jobs may reach private addresses (its
 * intranet) while the deployment's policy (extract.allow_private_networks) stays strict for the others. Cloud
 * metadata and link-local addresses stay closed either way.
 */
export async function keysPrivateNetworksCommand(cfg: NotaryConfig, tenantName: string, value: string): Promise<void> {
  if (value !== 'on' && value !== 'off') throw new NotaryError('invalid_request', `say on or off, not "${value.slice(0, 20)}"`);
  const ctx = await Runtime.open(cfg);
  try {
    const tenant = await ctx.accounts.repository.getTenantByName(tenantName);
    if (!tenant) throw new NotaryError('tenant_not_found', `no tenant named "${tenantName}": see notary keys list`);
    await ctx.accounts.updateTenant(tenant.id, { allowPrivateNetworks: value === 'on' });
    process.stdout.write(`${tenant.name}  crawl jobs ${value === 'on' ? 'may' : 'may not'} reach private addresses\n`);
  } finally {
    await ctx.close();
  }
}
