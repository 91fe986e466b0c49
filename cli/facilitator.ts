import { buildFacilitatorApp } from '../api/index.js';
import type { NotaryConfig } from '../core/config.js';
import { buildFacilitator, rotateFacilitatorKey, stderrLog } from '../runtime/index.js';
import { serverLoggerOptions } from './log-format.js';

export interface FacilitatorCommandOptions {
  /** Print the JWKS after rotating the receipt-signing key, and exit. */
  rotateKey?: boolean;
}

/**
 * `notary facilitator`: serves the standard x402 facilitator API against `facilitator.rpc_url`, paying gas from
 * `facilitator.private_key`, and signs settlement receipts (X-402-Receipt) with keys it publishes at
 * /.well-known/jwks.json.
 */
export async function facilitatorCommand(cfg: NotaryConfig, opts: FacilitatorCommandOptions = {}): Promise<void> {
  const built = await buildFacilitator(cfg, { log: stderrLog });
  const { host, port } = built;
  if (opts.rotateKey) {
    const rotated = await rotateFacilitatorKey(built.keysFile);
    process.stderr.write(`new receipt key ${rotated.kid} in ${built.keysFile}; older keys stay published\n`);
    process.stdout.write(`${JSON.stringify(rotated.jwks, null, 2)}\n`);
    return;
  }
  const app = await buildFacilitatorApp({ facilitator: built.facilitator, network: built.network, address: built.address, logger: serverLoggerOptions(cfg.log_level) });
  const shutdown = async (signal: string) => {
    app.log.info(`${signal}: shutting down`);
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  const address = await app.listen({ host, port });
  const jwks = built.facilitator.jwks();
  app.log.info(
    `notary facilitator listening on ${address}: ${built.network}, gas paid by ${built.address}; receipt keys ${jwks.keys.map((k) => k.kid).join(', ')} (${built.keysFile})`,
  );
  // The trusted key an operator copies into payments.modes.x402.receipt_keys.
  process.stdout.write(`${JSON.stringify(jwks)}\n`);
}
