import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { buildRoutesApp } from '../api/index.js';
import { configSchema, deepMerge, type ConfigInput, type NotaryConfig } from '../core/config.js';
import type { Ed25519Jwk } from '../payments/modes/x402/receipt.js';
import { buildFacilitator, facilitatorRoutes } from '../payments/modes/x402/facilitator-chain.js';
import { silentLog } from '../runtime/index.js';
import { apiTestConfig, startApi, type ApiHarness } from './app.js';
import { repoRoot } from './components.js';
import { deployToken, newAccount, startLocalChain, type DeployedToken, type FundedAccount, type LocalChain } from './evm-chain.js';
import { freePort } from './postgres.js';

export interface RunningFacilitator {
  url: string;
  jwks: { keys: Ed25519Jwk[] };
  stop(): Promise<void>;
}

/** The chain side of an x402 world: the local EVM, the token, a gas-paying facilitator account, funded payers. */
export interface ChainWorld {
  chain: LocalChain;
  token: DeployedToken;
  deployer: FundedAccount;
  facilitatorAccount: FundedAccount;
  payTo: Address;
  payers: FundedAccount[];
  close(): Promise<void>;
}

/** Starts the local chain, deploys the EIP-3009 token and mints `mint` atomic units to each of `payers` new accounts. */
export async function startChainWorld(options: { payers: number; mint: bigint }): Promise<ChainWorld> {
  const deployer = newAccount();
  const facilitatorAccount = newAccount();
  const chain = await startLocalChain({ funded: [deployer.address, facilitatorAccount.address] });
  const token = await deployToken(chain, deployer);
  const payers = Array.from({ length: options.payers }, () => newAccount());
  for (const payer of payers) await token.mint(payer.address, options.mint);
  return { chain, token, deployer, facilitatorAccount, payTo: newAccount().address, payers, close: () => chain.close() };
}

function facilitatorConfig(world: ChainWorld, dataDir: string): NotaryConfig {
  return configSchema.parse({
    data_dir: dataDir,
    facilitator: { rpc_url: world.chain.rpcUrl, private_key: world.facilitatorAccount.privateKey, poll_interval_ms: 20, confirmation_timeout_ms: 60_000 },
  });
}

async function readJwks(url: string): Promise<{ keys: Ed25519Jwk[] }> {
  const res = await fetch(`${url}/.well-known/jwks.json`);
  if (!res.ok) throw new Error(`JWKS: ${res.status}`);
  return (await res.json()) as { keys: Ed25519Jwk[] };
}

/** `notary facilitator` built in this process the way the command builds it, listening on 127.0.0.1. */
export async function startFacilitatorInProcess(world: ChainWorld, dataDir: string): Promise<RunningFacilitator> {
  const config = facilitatorConfig(world, dataDir);
  const built = await buildFacilitator(config, { log: silentLog, issuer: 'test-facilitator' });
  const app = await buildRoutesApp({ routes: facilitatorRoutes(built) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return { url, jwks: await readJwks(url), stop: () => app.close() };
}

/** The real `notary facilitator` command (bin/notary.js) as a child process, the key in its environment. */
export async function startFacilitatorCli(world: ChainWorld, dataDir: string): Promise<RunningFacilitator> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [path.join(repoRoot, 'bin/notary.js'), '--data', dataDir, 'facilitator', '--port', String(port), '--rpc-url', world.chain.rpcUrl, '--issuer', 'cli-facilitator'],
    { cwd: repoRoot, env: { ...process.env, NOTARY_FACILITATOR_PRIVATE_KEY: world.facilitatorAccount.privateKey, NOTARY_LOG_LEVEL: 'warn' } },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`notary facilitator exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`notary facilitator did not answer within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    jwks: await readJwks(url),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** What most x402 suites start from: a temporary folder, the chain world and a facilitator whose data is in the folder. */
export interface X402Stack {
  dir: string;
  world: ChainWorld;
  facilitator: RunningFacilitator;
  /** Stops the facilitator and the chain and removes the folder (after the suite closed its APIs). */
  close(): Promise<void>;
}

export async function startX402Stack(name: string, options: { payers: number; mint?: bigint; facilitator?: 'in-process' | 'cli' }): Promise<X402Stack> {
  const dir = mkdtempSync(path.join(tmpdir(), `notary-${name}-`));
  const world = await startChainWorld({ payers: options.payers, mint: options.mint ?? 1_000_000n });
  const start = options.facilitator === 'cli' ? startFacilitatorCli : startFacilitatorInProcess;
  const facilitator = await start(world, path.join(dir, 'facilitator'));
  return {
    dir,
    world,
    facilitator,
    close: async () => {
      await facilitator.stop();
      await world.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The token balances of a payer and of the service's payTo, read from the chain. */
export async function chainBalances(world: ChainWorld, payer: Address): Promise<{ payer: bigint; payTo: bigint }> {
  return { payer: await world.token.balanceOf(payer), payTo: await world.token.balanceOf(world.payTo) };
}

/** An API config with x402 enabled against this chain, facilitator and trusted receipt keys (plus `overrides`). */
export function x402ApiConfig(dataDir: string, world: ChainWorld, facilitator: RunningFacilitator, overrides: ConfigInput = {}): NotaryConfig {
  const x402: ConfigInput = {
    // Every challenge (and @x402/fetch's first, unpaid request) comes from 127.0.0.1.
    payments: { anonymous_tier: 'bulk' },
    extract: { allow_private_networks: true, respect_robots_txt: false, render: 'never' },
  };
  const modes: ConfigInput = {
    payments: {
      modes: {
        x402: {
          enabled: true,
          network: world.chain.network,
          asset: world.token.address,
          asset_name: world.token.name,
          asset_version: world.token.version,
          pay_to: world.payTo,
          facilitator_url: facilitator.url,
          rpc_url: world.chain.rpcUrl,
          receipt_keys: facilitator.jwks.keys,
          tier: 'bulk',
        },
      },
    },
  };
  const base = deepMerge(x402 as Record<string, unknown>, modes as Record<string, unknown>);
  const merged = deepMerge(base, overrides as Record<string, unknown>) as ConfigInput;
  return apiTestConfig(dataDir, merged);
}

export interface ListeningApi extends ApiHarness {
  url: string;
}

export async function startListeningApi(config: NotaryConfig): Promise<ListeningApi> {
  const api = await startApi(config, { withExtract: true });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  const address = api.app.server.address();
  return { ...api, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

/** The official client for one payer: x402Client with the exact EVM scheme, allowed to pay in the test token. */
export function payerClient(world: ChainWorld, payer: FundedAccount): { client: x402Client; fetch: typeof fetch } {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payer.privateKey) });
  // The test token is not one of the client's default assets; the client only pays in assets it was told about.
  client.setSpendControls({ allowedAssets: [{ network: world.chain.network as `${string}:${string}`, asset: world.token.address }] });
  return { client, fetch: wrapFetchWithPayment(fetch, client) as typeof fetch };
}

export interface Challenged {
  status: number;
  /** Every WWW-Authenticate challenge, as fetch joins them. */
  wwwAuthenticate: string;
  paymentRequired: PaymentRequired;
  body: Record<string, unknown>;
}

/** Asks for the 402 of a call (no credentials). */
export async function challengeFor(url: string, body: unknown): Promise<Challenged> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const header = res.headers.get('payment-required');
  if (res.status !== 402 || !header) throw new Error(`expected a 402 with PAYMENT-REQUIRED, got ${res.status}: ${await res.text()}`);
  return { status: res.status, wwwAuthenticate: res.headers.get('www-authenticate') ?? '', paymentRequired: decodePaymentRequiredHeader(header), body: (await res.json()) as Record<string, unknown> };
}

/** A PAYMENT-SIGNATURE for a challenge, made by the official client (optionally after changing what it is asked to sign). */
export async function signPayment(
  client: x402Client,
  paymentRequired: PaymentRequired,
  tamper: (requirements: PaymentRequired['accepts'][number]) => void = () => {},
): Promise<{ payload: PaymentPayload; header: string }> {
  const copy = structuredClone(paymentRequired);
  for (const accept of copy.accepts) tamper(accept);
  const payload = await client.createPaymentPayload(copy);
  return { payload, header: encodePaymentSignatureHeader(payload) };
}

export function testConfig(dataDir: string, overrides: ConfigInput): NotaryConfig {
  return configSchema.parse(deepMerge({ data_dir: dataDir } as Record<string, unknown>, overrides as Record<string, unknown>));
}

export interface PaidSearchesReport {
  searches: number;
  payers: number;
  served: number;
  /** Sum of the quoted prices (atomic units), from each call's 402. */
  quoted_atomic: string;
  pay_to_growth_atomic: string;
  /** Sum of what the payers' balances fell by. */
  payers_spent_atomic: string;
  ledger_rows: number;
  transfer_events: number;
  /** Ledger rows with exactly one Transfer event of the same transaction, payer, payTo and amount (and vice versa). */
  matched_one_to_one: number;
  elapsed_ms: number;
  per_search_ms: number;
}

/**
 * `searches` paid searches by the official client on the local chain, `payers` of them at once (depth 1 and 2
 * alternating), then the books checked against the chain: payTo grew by exactly the quoted prices, and every ledger
 * row has exactly one Transfer event (same transaction, payer, payTo and amount) and the other way round.
 */
export async function runPaidSearches(world: ChainWorld, api: ListeningApi, options: { searches: number; payers: FundedAccount[] }): Promise<PaidSearchesReport> {
  const payers = options.payers;
  const payToBefore = await world.token.balanceOf(world.payTo);
  const balancesBefore = await Promise.all(payers.map((p) => world.token.balanceOf(p.address)));
  const ledgerBefore = new Set((await api.runtime.paymentsList({ mode: 'x402' })).map((r) => r.transaction));
  const transfersBefore = new Set((await world.token.transfers()).map((t) => t.transactionHash));
  let quoted = 0n;
  let served = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    payers.map(async (payer) => {
      const { client } = payerClient(world, payer);
      const paidFetch = wrapFetchWithPayment(fetch, client);
      // The quote is read from the 402 the client itself answers.
      let price = 0n;
      client.onBeforePaymentCreation(async ({ selectedRequirements }) => {
        price = BigInt(selectedRequirements.amount);
      });
      for (;;) {
        const i = next++;
        if (i >= options.searches) return;
        const body = JSON.stringify({ query: ['vacuum', 'analyze', 'autovacuum', 'indexes'][i % 4], depth: (i % 2) + 1 });
        price = 0n;
        const res = await paidFetch(`${api.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`search ${i} answered ${res.status}: ${text.slice(0, 600)}`);
        served++;
        quoted += price;
      }
    }),
  );
  const elapsed = performance.now() - started;
  const ledger = (await api.runtime.paymentsList({ mode: 'x402' })).filter((r) => !ledgerBefore.has(r.transaction));
  const transfers = (await world.token.transfers()).filter((t) => !transfersBefore.has(t.transactionHash) && t.to === world.payTo);
  const byTransaction = new Map<string, number>();
  for (const t of transfers) byTransaction.set(t.transactionHash.toLowerCase(), (byTransaction.get(t.transactionHash.toLowerCase()) ?? 0) + 1);
  let matched = 0;
  for (const row of ledger) {
    const events = transfers.filter((t) => t.transactionHash.toLowerCase() === row.transaction);
    const [event] = events;
    if (events.length === 1 && event && event.from.toLowerCase() === row.payer && String(event.value) === row.amount && byTransaction.get(row.transaction ?? '') === 1) matched++;
  }
  const balancesAfter = await Promise.all(payers.map((p) => world.token.balanceOf(p.address)));
  const spent = balancesBefore.reduce((sum, before, i) => sum + (before - (balancesAfter[i] ?? 0n)), 0n);
  return {
    searches: options.searches,
    payers: payers.length,
    served,
    quoted_atomic: quoted.toString(),
    pay_to_growth_atomic: ((await world.token.balanceOf(world.payTo)) - payToBefore).toString(),
    payers_spent_atomic: spent.toString(),
    ledger_rows: ledger.length,
    transfer_events: transfers.length,
    matched_one_to_one: matched,
    elapsed_ms: Math.round(elapsed),
    per_search_ms: Math.round((elapsed / options.searches) * 10) / 10,
  };
}
