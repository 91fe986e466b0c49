import { InvalidArgumentError, type Command } from 'commander';
import type { PluginCliContext, PluginLog } from '../../plugin.js';

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number 0-65535');
  return Number(value);
}

const stderrLog: PluginLog = (level, message) => {
  process.stderr.write(`${level === 'warn' ? 'WARNING: ' : ''}${message}\n`);
};

interface FacilitatorOptions {
  port?: number;
  host?: string;
  rpcUrl?: string;
  issuer?: string;
  /** Print the JWKS after rotating the receipt-signing key, and exit. */
  rotateKey?: boolean;
}

/**
 * `notary facilitator`: serves the standard x402 facilitator API against `facilitator.rpc_url`, paying gas from
 * `facilitator.private_key`, and signs settlement receipts (X-402-Receipt) with keys it publishes at
 * /.well-known/jwks.json. The command line serves its routes (`context.serve`).
 */
export function addFacilitatorCommand(program: Command, context: PluginCliContext): void {
  program
    .command('facilitator')
    .description('serve the standard x402 facilitator API (POST /verify, POST /settle, GET /supported) on an EVM chain, signing settlement receipts')
    .option('--port <port>', 'port to listen on (default 8402)', port)
    .option('--host <host>', 'address to bind (default 127.0.0.1)')
    .option('--rpc-url <url>', 'JSON-RPC URL of the chain (or facilitator.rpc_url, NOTARY_FACILITATOR_RPC_URL)')
    .option('--issuer <name>', 'iss of the receipts (default the facilitator URL)')
    .option('--rotate-key', 'add a new receipt-signing key (older ones stay published), print the JWKS and exit')
    .action(async (opts: FacilitatorOptions) => {
      const cfg = context.config({
        facilitator: {
          ...(opts.port !== undefined ? { port: opts.port } : {}),
          ...(opts.host ? { host: opts.host } : {}),
          ...(opts.rpcUrl ? { rpc_url: opts.rpcUrl } : {}),
          ...(opts.issuer ? { issuer: opts.issuer } : {}),
        },
      });
      // viem and the x402 facilitator load only for this command.
      const { buildFacilitator, facilitatorRoutes, rotateFacilitatorKey } = await import('./facilitator-chain.js');
      const built = await buildFacilitator(cfg, { log: stderrLog });
      if (opts.rotateKey) {
        const rotated = rotateFacilitatorKey(built.keysFile);
        process.stderr.write(`new receipt key ${rotated.kid} in ${built.keysFile}; older keys stay published\n`);
        process.stdout.write(`${JSON.stringify(rotated.jwks, null, 2)}\n`);
        return;
      }
      const served = await context.serve(facilitatorRoutes(built), { host: built.host, port: built.port });
      const shutdown = async (signal: string) => {
        served.log(`${signal}: shutting down`);
        await served.close();
        process.exit(0);
      };
      process.once('SIGINT', () => void shutdown('SIGINT'));
      process.once('SIGTERM', () => void shutdown('SIGTERM'));
      const jwks = built.facilitator.jwks();
      served.log(
        `notary facilitator listening on ${served.url}: ${built.network}, gas paid by ${built.address}; receipt keys ${jwks.keys.map((k) => k.kid).join(', ')} (${built.keysFile})`,
      );
      // The trusted key an operator copies into payments.modes.x402.receipt_keys.
      process.stdout.write(`${JSON.stringify(jwks)}\n`);
    });
}
