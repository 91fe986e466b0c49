import { InvalidArgumentError, type Command } from 'commander';
import type { ConfigInput, NotaryConfig } from '../core/config.js';

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number 0-65535');
  return Number(value);
}

/**
 * `notary facilitator`: the x402 facilitator's command. It stays on this side because it serves a Fastify app of
 * api/ (a plug-in's cli hook reaches neither api/ nor runtime/); its settings are the facilitator plug-in's section.
 */
export function addFacilitatorCommand(program: Command, configOf: (overrides?: ConfigInput) => NotaryConfig): void {
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
}
