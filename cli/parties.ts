import type { NotaryConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { Runtime, silentLog } from '../runtime/index.js';
import { tenantFromOptions } from './keys.js';

export interface AddKeyOptions {
  tenant: string;
  publicKey: string;
  name?: string;
  credits?: number;
  tier?: string;
}

/**
 * `notary parties add-key`: registers a tenant's Ed25519 public key for MPP envelopes (the tenant is created when new,
 * as `keys create` does). The kid is printed alone on the last line of standard output.
 */
export async function partiesAddKeyCommand(cfg: NotaryConfig, opts: AddKeyOptions): Promise<void> {
  const ctx = await Runtime.open(cfg, { log: silentLog });
  try {
    const tenant = await tenantFromOptions(ctx, opts);
    const { key, created } = await ctx.parties.addKey(tenant, opts.publicKey, opts.name);
    process.stderr.write(
      created ? `registered the key of party "${tenant.name}"; envelopes name it by this kid:\n` : `this key of party "${tenant.name}" was registered already; its kid:\n`,
    );
    process.stdout.write(`${key.kid}\n`);
  } finally {
    await ctx.close();
  }
}

export async function partiesRevokeCommand(cfg: NotaryConfig, kid: string): Promise<void> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(kid)) throw new NotaryError('invalid_request', `"${kid}" is not a kid (43 base64url characters, as add-key printed)`);
  const ctx = await Runtime.open(cfg, { log: silentLog });
  try {
    const key = await ctx.parties.revokeKey(kid);
    process.stdout.write(`revoked ${key.kid} at ${key.revoked_at ?? '?'}: envelopes signed with it are refused (mpp_key_revoked)\n`);
  } finally {
    await ctx.close();
  }
}

export async function partiesListCommand(cfg: NotaryConfig, opts: { tenant?: string; json?: boolean }): Promise<void> {
  const ctx = await Runtime.open(cfg, { log: silentLog });
  try {
    const tenants = await ctx.accounts.listTenants();
    let tenantId: string | undefined;
    if (opts.tenant) {
      tenantId = tenants.find((t) => t.name === opts.tenant)?.id;
      if (!tenantId) throw new NotaryError('tenant_not_found', `no tenant named "${opts.tenant}"`);
    }
    const keys = await ctx.parties.listKeys(tenants, tenantId);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(keys, null, 2)}\n`);
      return;
    }
    if (keys.length === 0) {
      process.stdout.write('no party keys\n');
      return;
    }
    const balances = new Map(tenants.map((t) => [t.id, t.credits]));
    for (const k of keys) {
      const state = k.revoked_at ? `revoked ${k.revoked_at}` : 'active';
      process.stdout.write(`${k.kid}  party ${k.tenant} (${balances.get(k.tenant_id) ?? '?'} credits)  ${k.name ?? '-'}  ${state}  created ${k.created_at}\n`);
    }
  } finally {
    await ctx.close();
  }
}
