import path from 'node:path';
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, defineChain, http, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { configSection, type NotaryConfig, NotaryError } from '../../../core/index.js';
import type { PluginLog, PluginRoute } from '../../plugin.js';
import { ReceiptKeyring } from '../../receipts/index.js';
import { facilitatorConfigFragment } from './config.js';
import { facilitatorJwks, NotaryFacilitator, openFacilitatorKeyring } from './facilitator.js';

export interface BuiltFacilitator {
  facilitator: NotaryFacilitator;
  network: string;
  /** The account that pays gas. */
  address: Hex;
  keysFile: string;
  /** Where `notary facilitator` listens (facilitator.host, facilitator.port). */
  host: string;
  port: number;
}

/**
 * `notary facilitator` from the configuration: a viem wallet on `facilitator.rpc_url` with the gas-paying key, the
 * chain id read from the node (the network is eip155:<that id>), the official `exact` EVM scheme registered for it,
 * and the receipt-signing keyring.
 */
export async function buildFacilitator(config: NotaryConfig, options: { log: PluginLog; issuer?: string }): Promise<BuiltFacilitator> {
  const settings = configSection(config, facilitatorConfigFragment);
  const issuer = settings.issuer ?? options.issuer ?? `http://${settings.host}:${settings.port}`;
  if (!settings.rpc_url) throw new NotaryError('invalid_config', 'facilitator.rpc_url (or NOTARY_FACILITATOR_RPC_URL, or --rpc-url) is required');
  if (!settings.private_key) throw new NotaryError('invalid_config', 'facilitator.private_key (or NOTARY_FACILITATOR_PRIVATE_KEY) is required: the account that pays gas');
  const transport = http(settings.rpc_url, { timeout: 30_000 });
  const probe = createWalletClient({ transport }).extend(publicActions);
  let chainId: number;
  try {
    chainId = await probe.getChainId();
  } catch (err) {
    throw new NotaryError('invalid_config', `facilitator.rpc_url ${settings.rpc_url} does not answer eth_chainId: ${err instanceof Error ? err.message : String(err)}`);
  }
  const chain = defineChain({ id: chainId, name: `eip155:${chainId}`, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [settings.rpc_url] } } });
  const account = privateKeyToAccount(settings.private_key as Hex);
  const client = createWalletClient({ account, chain, transport, pollingInterval: settings.poll_interval_ms, cacheTime: 0 }).extend(publicActions);
  // One account sends every settlement: transactions are submitted one at a time, each with the node's pending nonce,
  // so concurrent settles never collide on a nonce (waiting for receipts still runs in parallel).
  let submissions: Promise<unknown> = Promise.resolve();
  const submit = <T>(send: (nonce: number) => Promise<T>): Promise<T> => {
    const run = submissions.then(async () => send(await client.getTransactionCount({ address: account.address, blockTag: 'pending' })));
    submissions = run.catch(() => undefined);
    return run;
  };
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      getCode: (args) => client.getCode(args),
      readContract: (args) => client.readContract({ ...args, args: args.args ?? [] }),
      verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: (args) => submit((nonce) => client.writeContract({ ...args, args: args.args, nonce } as Parameters<typeof client.writeContract>[0])),
      sendTransaction: (args) => submit((nonce) => client.sendTransaction({ ...args, nonce })),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
    },
    { confirmationTimeoutMs: settings.confirmation_timeout_ms },
  );
  const network = `eip155:${chainId}` as const;
  const core = new x402Facilitator().register(network, new ExactEvmScheme(signer));
  const keysFile = path.resolve(settings.keys_file ?? path.join(config.data_dir, 'facilitator-keys.json'));
  const keyring = openFacilitatorKeyring(keysFile);
  return {
    facilitator: new NotaryFacilitator({ facilitator: core, keyring, issuer, log: options.log }),
    network,
    address: account.address,
    keysFile,
    host: settings.host,
    port: settings.port,
  };
}

/** `notary facilitator --rotate-key`: a new current receipt-signing key in `keysFile`; older keys stay published. */
export function rotateFacilitatorKey(keysFile: string): { kid: string; jwks: unknown } {
  const keyring = openFacilitatorKeyring(keysFile);
  const { current } = ReceiptKeyring.rotate(keysFile);
  return { kid: current.kid, jwks: facilitatorJwks(keyring) };
}

/** `notary facilitator`'s routes: the standard x402 facilitator API, its receipt keys' JWKS and /healthz. */
export function facilitatorRoutes(built: Pick<BuiltFacilitator, 'facilitator' | 'network' | 'address'>): PluginRoute[] {
  const { facilitator } = built;
  return [
    { method: 'POST', url: '/verify', schema: {}, handle: async ({ body }) => ({ body: await facilitator.verify(body) }) },
    { method: 'POST', url: '/settle', schema: {}, handle: async ({ body }) => ({ body: await facilitator.settle(body) }) },
    { method: 'GET', url: '/supported', schema: {}, handle: async () => ({ body: facilitator.supported() }) },
    { method: 'GET', url: '/.well-known/jwks.json', schema: {}, handle: async () => ({ body: facilitator.jwks(), headers: { 'Cache-Control': 'public, max-age=300' } }) },
    { method: 'GET', url: '/healthz', schema: {}, handle: async () => ({ body: { status: 'ok', network: built.network, address: built.address } }) },
  ];
}
