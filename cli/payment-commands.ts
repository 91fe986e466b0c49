import { InvalidArgumentError, type Command } from 'commander';
import type { ConfigInput, NotaryConfig } from '../core/config.js';
import type { PluginCliContext } from '../runtime/plugins.js';

/** How `notary mcp` calls pay (its help's last lines). */
export const MCP_PAYMENT_HELP =
  '\nThe API key is read from NOTARY_API_KEY (never from the command line). Without one, calls are paid per call by the MCP client through x402 (_meta["x402/payment"]).';

/** The configuration the global options name, with a command's overrides. */
type ConfigOf = (overrides?: ConfigInput) => NotaryConfig;

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number 0-65535');
  return Number(value);
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

/**
 * `notary parties ...`: the MPP party keys, which need the runtime's accounts (the tenant a key is registered for).
 * MPP's client commands and the receipts commands are in their plug-ins (their descriptors' cli hooks).
 */
export function addPaymentModeCommands(program: Command, configOf: ConfigOf): void {
  const nonNegativeInt = (v: string) => {
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
    return Number(v);
  };
  const parties = program.command('parties').description("MPP parties: tenants' Ed25519 public keys that sign multi-party payment envelopes");
  parties
    .command('add-key')
    .description('register a public key for a tenant (created if new); prints the kid alone on the last line')
    .requiredOption('--tenant <name>', 'tenant (party) name: what envelopes call the party')
    .requiredOption('--public-key <base64url>', 'the raw 32-byte Ed25519 public key, base64url (notary mpp keygen prints it)')
    .option('--name <label>', 'a label for the key')
    .option('--credits <n>', 'credits granted to a new tenant, or added to an existing one', nonNegativeInt)
    .option('--tier <tier>', 'rate-limit tier of a new tenant')
    .action(async (opts: { tenant: string; publicKey: string; name?: string; credits?: number; tier?: string }) => {
      const { partiesAddKeyCommand } = await import('./parties.js');
      await partiesAddKeyCommand(configOf(), opts);
    });
  parties
    .command('list')
    .description('list party keys')
    .option('--tenant <name>', 'only this tenant')
    .option('--json', 'machine-readable output')
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const { partiesListCommand } = await import('./parties.js');
      await partiesListCommand(configOf(), opts);
    });
  parties
    .command('revoke')
    .description('revoke a party key by kid: envelopes it signs are refused from now on')
    .argument('<kid>')
    .action(async (kid: string) => {
      const { partiesRevokeCommand } = await import('./parties.js');
      await partiesRevokeCommand(configOf(), kid);
    });
}

/** The facilitator and the books of paid calls. */
export function addPaymentBooksCommands(program: Command, configOf: ConfigOf): void {
  program
    .command('facilitator')
    .description('serve the standard x402 facilitator API (POST /verify, POST /settle, GET /supported) on an EVM chain, signing settlement receipts')
    .option('--port <port>', 'port to listen on (default 8402)', port)
    .option('--host <host>', 'address to bind (default 127.0.0.1)')
    .option('--rpc-url <url>', 'JSON-RPC URL of the chain (or facilitator.rpc_url, NOTARY_FACILITATOR_RPC_URL)')
    .option('--issuer <name>', 'iss of the receipts (default the facilitator URL)')
    .option('--rotate-key', 'add a new receipt-signing key (older ones stay published), print the JWKS and exit')
    .action(async (opts: { port?: number; host?: string; rpcUrl?: string; issuer?: string; rotateKey?: boolean }) => {
      const cfg = configOf({
        facilitator: {
          ...(opts.port !== undefined ? { port: opts.port } : {}),
          ...(opts.host ? { host: opts.host } : {}),
          ...(opts.rpcUrl ? { rpc_url: opts.rpcUrl } : {}),
          ...(opts.issuer ? { issuer: opts.issuer } : {}),
        },
      });
      const { facilitatorCommand } = await import('./facilitator.js');
      await facilitatorCommand(cfg, { ...(opts.rotateKey ? { rotateKey: true } : {}) });
    });

  const payments = program.command('payments').description('the books of paid calls');
  payments
    .command('list')
    .description('every charged call: mode, payer, amount, asset, network, transaction, request id')
    .option('--mode <mode>', 'only this payment mode (x402, api_key)')
    .option('--limit <n>', 'only the newest n', positiveInt)
    .option('--csv', 'CSV with a header row')
    .option('--json', 'machine-readable output')
    .action(async (opts: { mode?: string; limit?: number; csv?: boolean; json?: boolean }) => {
      const { paymentsListCommand } = await import('./payments.js');
      await paymentsListCommand(configOf(), opts);
    });
  payments
    .command('reconcile')
    .description('decide x402 settlements whose outcome was never heard (a settle that timed out) from the chain')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { paymentsReconcileCommand } = await import('./payments.js');
      await paymentsReconcileCommand(configOf(), opts);
    });
}

/** What a plug-in's commands get: the configuration, and the database of it (opened, migrated, closed after). */
export function pluginCliContext(configOf: ConfigOf): PluginCliContext {
  return {
    config: () => configOf(),
    async withStorage(fn) {
      const { Runtime, silentLog } = await import('../runtime/index.js');
      const runtime = await Runtime.open(configOf(), { log: silentLog });
      try {
        return await fn(runtime.storage);
      } finally {
        await runtime.close();
      }
    },
  };
}
