import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createPublicClient,
  createWalletClient,
  custom,
  getAddress,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { repoRoot } from './components.js';

const require = createRequire(import.meta.url);

/** Where Multicall3 lives on every real chain; the local chain puts a compatible contract there at genesis. */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
const CONTRACTS_DIR = path.join(repoRoot, 'test', 'fixtures', 'evm');

export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
}

interface Solc {
  version(): string;
  compile(input: string): string;
}

/**
 * Compiles the test contracts with solc from npm (solcjs, no binary download). The output is cached in the temporary
 * directory under the digest of the sources, the compiler version and the settings, so a test run compiles once.
 */
export function compileContracts(): Record<string, CompiledContract> {
  const sources: Record<string, { content: string }> = {};
  for (const file of ['EIP3009Token.sol', 'Multicall3Lite.sol']) sources[file] = { content: readFileSync(path.join(CONTRACTS_DIR, file), 'utf8') };
  const settings = { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } } };
  const solcVersion = (require('solc/package.json') as { version: string }).version;
  const key = createHash('sha256').update(JSON.stringify({ sources, settings, solcVersion })).digest('hex').slice(0, 24);
  const cacheDir = path.join(tmpdir(), 'notary-solc-cache');
  const cacheFile = path.join(cacheDir, `${key}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, CompiledContract>;
  const solc = require('solc') as Solc;
  const output = JSON.parse(solc.compile(JSON.stringify({ language: 'Solidity', sources, settings }))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc ${solc.version()} failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const contracts: Record<string, CompiledContract> = {};
  for (const file of Object.values(output.contracts)) {
    for (const [name, contract] of Object.entries(file)) {
      contracts[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}`, deployedBytecode: `0x${contract.evm.deployedBytecode.object}` };
    }
  }
  mkdirSync(cacheDir, { recursive: true });
  // Written whole, then renamed: parallel test files never read half a file.
  const partial = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(contracts));
  renameSync(partial, cacheFile);
  return contracts;
}

interface EdrProvider {
  handleRequest(request: string): Promise<{ data: string | object }>;
}

interface EdrModule {
  EdrContext: new () => {
    registerProviderFactory(chainType: string, factory: unknown): Promise<void>;
    createProvider(chainType: string, config: object, logger: object, subscriptions: object, decoder: unknown): Promise<EdrProvider>;
  };
  L1_CHAIN_TYPE: string;
  l1ProviderFactory(): unknown;
  l1HardforkLatest(): unknown;
  l1HardforkToString(hardfork: unknown): string;
  l1GenesisState(hardfork: unknown): object[];
  ContractDecoder: new () => unknown;
  MineOrdering: { Fifo: string; Priority: string };
}

let edrContext: Promise<{ edr: EdrModule; context: InstanceType<EdrModule['EdrContext']> }> | undefined;

/** EDR allows one context per process. */
function edrOnce(): Promise<{ edr: EdrModule; context: InstanceType<EdrModule['EdrContext']> }> {
  edrContext ??= (async () => {
    const edr = require('@nomicfoundation/edr') as EdrModule;
    const context = new edr.EdrContext();
    await context.registerProviderFactory(edr.L1_CHAIN_TYPE, edr.l1ProviderFactory());
    return { edr, context };
  })();
  return edrContext;
}

export interface FundedAccount {
  privateKey: Hex;
  address: Address;
}

export function newAccount(): FundedAccount {
  const privateKey = generatePrivateKey();
  return { privateKey, address: privateKeyToAccount(privateKey).address };
}

export interface LocalChain {
  chainId: number;
  /** CAIP-2 name, eip155:<chainId>. */
  network: string;
  /** JSON-RPC over HTTP on 127.0.0.1, for the facilitator and notary's reconciliation. */
  rpcUrl: string;
  client: PublicClient;
  rpc<T>(method: string, params?: unknown[]): Promise<T>;
  /** Whether every transaction is mined at once (the default), or waits for mine(). */
  setAutomine(on: boolean): Promise<void>;
  mine(): Promise<void>;
  /** Moves the next block's timestamp forward. */
  increaseTime(seconds: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real EVM running in this process (Hardhat's EDR, from npm, no binary download) behind an HTTP JSON-RPC endpoint.
 * `funded` accounts start with 1,000 ETH for gas.
 */
export async function startLocalChain(options: { chainId?: number; funded: readonly Address[] }): Promise<LocalChain> {
  const { edr, context } = await edrOnce();
  const chainId = options.chainId ?? 31337;
  const hardfork = edr.l1HardforkLatest();
  const contracts = compileContracts();
  const multicall = contracts['Multicall3Lite'];
  if (!multicall) throw new Error('Multicall3Lite did not compile');
  const hex = (value: string) => Buffer.from(value.replace(/^0x/, ''), 'hex');
  const provider = await context.createProvider(
    edr.L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: true,
      allowUnlimitedContractSize: false,
      bailOnCallFailure: false,
      bailOnTransactionFailure: false,
      chainId: BigInt(chainId),
      coinbase: Buffer.alloc(20, 0),
      defaultTransactionGasLimit: 16_000_000n,
      genesisState: [
        ...edr.l1GenesisState(hardfork),
        ...options.funded.map((address) => ({ address: hex(address), balance: 10n ** 21n })),
        { address: hex(MULTICALL3_ADDRESS), code: hex(multicall.deployedBytecode) },
      ],
      hardfork: edr.l1HardforkToString(hardfork),
      initialBaseFeePerGas: 1_000_000_000n,
      minGasPrice: 0n,
      mining: { autoMine: true, memPool: { order: edr.MineOrdering.Priority } },
      network: { genesisBlockGasLimit: 60_000_000n },
      networkId: BigInt(chainId),
      observability: {},
      ownedAccounts: [],
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new edr.ContractDecoder(),
  );
  const handleOne = async (request: Record<string, unknown>): Promise<string> => {
    // EDR insists on `params`; JSON-RPC lets a client leave it out (viem does for eth_chainId).
    const response = await provider.handleRequest(JSON.stringify({ params: [], ...request }));
    return typeof response.data === 'string' ? response.data : JSON.stringify(response.data);
  };
  const handle = async (body: string): Promise<string> => {
    const parsed = JSON.parse(body) as Record<string, unknown> | Array<Record<string, unknown>>;
    if (!Array.isArray(parsed)) return handleOne(parsed);
    const replies: string[] = [];
    for (const one of parsed) replies.push(await handleOne(one));
    return `[${replies.join(',')}]`;
  };
  let nextId = 1;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const reply = JSON.parse(await handle(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }))) as { result?: T; error?: { message: string } };
    if (reply.error) throw new Error(`${method}: ${reply.error.message}`);
    return reply.result as T;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      handle(body).then(
        (reply) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(reply);
        },
        (err: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: String(err) } }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createPublicClient({
    transport: custom({ request: ({ method, params }: { method: string; params?: unknown[] }) => rpc(method, params ?? []) }),
    pollingInterval: 50,
  });
  return {
    chainId,
    network: `eip155:${chainId}`,
    rpcUrl,
    client,
    rpc,
    setAutomine: async (on) => {
      await rpc('evm_setAutomine', [on]);
    },
    mine: async () => {
      await rpc('evm_mine');
    },
    increaseTime: async (seconds) => {
      await rpc('evm_increaseTime', [seconds]);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface DeployedToken {
  address: Address;
  abi: Abi;
  name: string;
  version: string;
  decimals: number;
  balanceOf(account: Address): Promise<bigint>;
  mint(to: Address, value: bigint): Promise<void>;
  /** Every Transfer event of the token so far: from, to, value and the transaction. */
  transfers(): Promise<Array<{ from: Address; to: Address; value: bigint; transactionHash: Hex }>>;
}

/** Deploys the EIP-3009 test token (compiled from test/fixtures/evm) from `deployer`, the only account that may mint. */
export async function deployToken(
  chain: LocalChain,
  deployer: FundedAccount,
  options: { name?: string; version?: string; symbol?: string; decimals?: number } = {},
): Promise<DeployedToken> {
  const token = compileContracts()['EIP3009Token'];
  if (!token) throw new Error('EIP3009Token did not compile');
  const name = options.name ?? 'USD Coin';
  const version = options.version ?? '2';
  const decimals = options.decimals ?? 6;
  const wallet = createWalletClient({
    account: privateKeyToAccount(deployer.privateKey),
    chain: { id: chain.chainId, name: 'local', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [chain.rpcUrl] } } },
    transport: custom({ request: ({ method, params }: { method: string; params?: unknown[] }) => chain.rpc(method, params ?? []) }),
  });
  const hash = await wallet.deployContract({ abi: token.abi, bytecode: token.bytecode, args: [name, version, options.symbol ?? 'USDC', decimals] });
  const receipt = await chain.client.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error('token deployment failed');
  const address = getAddress(receipt.contractAddress);
  const abi = token.abi;
  return {
    address,
    abi,
    name,
    version,
    decimals,
    balanceOf: async (account) => (await chain.client.readContract({ address, abi, functionName: 'balanceOf', args: [account] })) as bigint,
    mint: async (to, value) => {
      const tx = await wallet.writeContract({ address, abi, functionName: 'mint', args: [to, value], chain: wallet.chain, account: wallet.account });
      const mined = await chain.client.waitForTransactionReceipt({ hash: tx });
      if (mined.status !== 'success') throw new Error('mint failed');
    },
    transfers: async () => {
      const logs = await chain.client.getContractEvents({ address, abi, eventName: 'Transfer', fromBlock: 0n, toBlock: 'latest' });
      return logs.map((log) => {
        const args = (log as unknown as { args: { from: Address; to: Address; value: bigint } }).args;
        return { from: args.from, to: args.to, value: args.value, transactionHash: log.transactionHash };
      });
    },
  };
}
