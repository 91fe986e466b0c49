import { createPublicClient, getAddress, http, isAddressEqual, parseAbi, parseEventLogs, type Address, type Hex, type PublicClient } from 'viem';

const TOKEN_ABI = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function decimals() view returns (uint8)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** A transfer that consumed an EIP-3009 authorization. */
export interface AuthorizationTransfer {
  transaction: Hex;
  from: Address;
  to: Address;
  value: bigint;
}

export type AuthorizationOutcome =
  /** The authorization was used on chain; `transfer` is its Transfer event, null when none matches (cancelled). */
  | { used: true; transaction: Hex | null; transfer: AuthorizationTransfer | null }
  /** Not used: `chainTime` (latest block, unix seconds) tells whether it can still be. */
  | { used: false; chainTime: bigint };

/** What reconciliation asks of the chain: the facts behind a settlement whose outcome was not heard. */
export interface SettlementChain {
  authorizationOutcome(input: { asset: Address; payer: Address; nonce: Hex; payTo: Address; amount: bigint }): Promise<AuthorizationOutcome>;
  decimals(asset: Address): Promise<number>;
}

/**
 * Reads an EVM chain over JSON-RPC. The facts come from the token itself: `authorizationState(payer, nonce)` (EIP-3009)
 * says whether the authorization was consumed, and its AuthorizationUsed event names the transaction whose Transfer
 * is checked against the payment. `lookbackBlocks` bounds the log search (RPC providers limit ranges).
 */
export class RpcSettlementChain implements SettlementChain {
  private readonly client: PublicClient;

  /** `timeoutMs` bounds each question as a whole (its several RPC requests together): payments.modes.x402.rpc_timeout_ms. */
  constructor(
    rpcUrl: string,
    private readonly lookbackBlocks = 50_000n,
    private readonly timeoutMs = 10_000,
  ) {
    // No cached block number: reconciliation must see the block that was mined a moment ago.
    this.client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 1 }), cacheTime: 0 });
  }

  authorizationOutcome(input: { asset: Address; payer: Address; nonce: Hex; payTo: Address; amount: bigint }): Promise<AuthorizationOutcome> {
    return this.bounded(this.readOutcome(input));
  }

  decimals(asset: Address): Promise<number> {
    return this.bounded(this.client.readContract({ address: getAddress(asset), abi: TOKEN_ABI, functionName: 'decimals' }).then(Number));
  }

  /** The answer, or a ChainUnreachableError once timeoutMs has passed (the requests still running end on their own timeout). */
  private bounded<T>(answer: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new ChainUnreachableError(this.timeoutMs)), this.timeoutMs);
    });
    return Promise.race([answer, deadline]).finally(() => clearTimeout(timer));
  }

  private async readOutcome(input: { asset: Address; payer: Address; nonce: Hex; payTo: Address; amount: bigint }): Promise<AuthorizationOutcome> {
    const asset = getAddress(input.asset);
    const used = await this.client.readContract({ address: asset, abi: TOKEN_ABI, functionName: 'authorizationState', args: [getAddress(input.payer), input.nonce] });
    if (!used) {
      const block = await this.client.getBlock({ blockTag: 'latest' });
      return { used: false, chainTime: block.timestamp };
    }
    const latest = await this.client.getBlockNumber();
    const fromBlock = latest > this.lookbackBlocks ? latest - this.lookbackBlocks : 0n;
    const logs = await this.client.getLogs({
      address: asset,
      event: TOKEN_ABI[2],
      args: { authorizer: getAddress(input.payer), nonce: input.nonce },
      fromBlock,
      toBlock: latest,
    });
    const log = logs[0];
    if (!log?.transactionHash) return { used: true, transaction: null, transfer: null };
    const receipt = await this.client.getTransactionReceipt({ hash: log.transactionHash });
    const transfers = parseEventLogs({ abi: TOKEN_ABI, eventName: 'Transfer', logs: receipt.logs.filter((l) => isAddressEqual(l.address, asset)) });
    const match = transfers.find(
      (t) => isAddressEqual(t.args.from, input.payer) && isAddressEqual(t.args.to, input.payTo) && t.args.value === input.amount,
    );
    return {
      used: true,
      transaction: log.transactionHash,
      transfer: match ? { transaction: log.transactionHash, from: match.args.from, to: match.args.to, value: match.args.value } : null,
    };
  }
}

/** The chain RPC did not answer a question within its bound. */
export class ChainUnreachableError extends Error {
  constructor(timeoutMs: number) {
    super(`the chain RPC (payments.modes.x402.rpc_url) did not answer within ${timeoutMs} ms; check that it is reachable, or raise payments.modes.x402.rpc_timeout_ms`);
    this.name = 'ChainUnreachableError';
  }
}
