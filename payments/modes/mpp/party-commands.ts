import { InvalidArgumentError, type Command } from 'commander';
import { NotaryError } from '../../../core/index.js';
import type { PluginCliContext } from '../../plugin.js';
import { Parties } from './parties.js';
import { CollectionStore } from '../../../storage/index.js';

function nonNegativeInt(v: string): number {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
  return Number(v);
}

/** `notary parties ...`: the party keys of the configured database (the tenant a key is registered for). */
export function addPartyCommands(program: Command, context: PluginCliContext): void {
  const parties = program.command('parties').description("MPP parties: tenants' Ed25519 public keys that sign multi-party payment envelopes");
  parties
    .command('add-key')
    .description('register a public key for a tenant (created if new); prints the kid alone on the last line')
    .requiredOption('--tenant <name>', 'tenant (party) name: what envelopes call the party')
    .requiredOption('--public-key <base64url>', 'the raw 32-byte Ed25519 public key, base64url (notary mpp keygen prints it)')
    .option('--name <label>', 'a label for the key')
    .option('--credits <n>', 'credits granted to a new tenant, or added to an existing one', nonNegativeInt)
    .option('--tier <tier>', 'rate-limit tier of a new tenant')
    .option('--collections <names>', 'limit the key to these collections (comma-separated; default: every collection); an envelope reads a collection only if every party may')
    .action((opts: { tenant: string; publicKey: string; name?: string; credits?: number; tier?: string; collections?: string }) =>
      context.withAccounts(async (accounts, storage) => {
        const collections = opts.collections === undefined ? undefined : await new CollectionStore(storage.db).idsOfList(opts.collections);
        const tenant = await accounts.tenantFromOptions(opts);
        const { key, created } = await new Parties(storage.db).addKey(tenant, opts.publicKey, opts.name, collections);
        process.stderr.write(
          created ? `registered the key of party "${tenant.name}"; envelopes name it by this kid:\n` : `this key of party "${tenant.name}" was registered already; its kid:\n`,
        );
        process.stdout.write(`${key.kid}\n`);
      }),
    );
  parties
    .command('list')
    .description('list party keys')
    .option('--tenant <name>', 'only this tenant')
    .option('--json', 'machine-readable output')
    .action((opts: { tenant?: string; json?: boolean }) =>
      context.withAccounts(async (accounts, storage) => {
        const tenants = await accounts.listTenants();
        let tenantId: string | undefined;
        if (opts.tenant) {
          tenantId = tenants.find((t) => t.name === opts.tenant)?.id;
          if (!tenantId) throw new NotaryError('tenant_not_found', `no tenant named "${opts.tenant}"`);
        }
        const keys = await new Parties(storage.db).listKeys(tenants, tenantId);
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
      }),
    );
  parties
    .command('revoke')
    .description('revoke a party key by kid: envelopes it signs are refused from now on')
    .argument('<kid>')
    // A kid is a base64url thumbprint: one in 64 starts with "-", which commander would take for an unknown option.
    .allowUnknownOption()
    .action(async (kid: string) => {
      if (!/^[A-Za-z0-9_-]{43}$/.test(kid)) throw new NotaryError('invalid_request', `"${kid}" is not a kid (43 base64url characters, as add-key printed)`);
      await context.withStorage(async (storage) => {
        const key = await new Parties(storage.db).revokeKey(kid);
        process.stdout.write(`revoked ${key.kid} at ${key.revoked_at ?? '?'}: envelopes signed with it are refused (mpp_key_revoked)\n`);
      });
    });
}
