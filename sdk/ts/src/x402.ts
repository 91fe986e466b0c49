import type { Problem, RawResponse } from './types.js';

/** What a payer sees of the 402 it must answer. */
export interface X402Challenge {
  url: string;
  method: string;
  /** The exact body bytes the paid retry sends. */
  body: Uint8Array;
  response: RawResponse;
  problem: Problem | null;
}

/**
 * Answers an x402 challenge with the headers of the paid retry: `PAYMENT-SIGNATURE` (the x402 v2 standard) or
 * `X-402-Receipt` (the interface's flow, after settling through a facilitator). Any object with this method works.
 */
export interface X402Payer {
  pay(challenge: X402Challenge): Promise<Record<string, string>>;
}

/** The x402 v2 PAYMENT-REQUIRED header of a 402 (base64 JSON), decoded. */
export interface PaymentRequirements {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

export interface PaymentRequired {
  x402Version: number;
  accepts: PaymentRequirements[];
  resource?: Record<string, unknown>;
  error?: string;
}

export function paymentRequired(response: RawResponse): PaymentRequired | null {
  const header = response.headers.get('payment-required');
  if (!header) return null;
  try {
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(header), (c) => c.charCodeAt(0)))) as PaymentRequired;
  } catch {
    return null;
  }
}

/** A wallet that signs EIP-712 typed data; viem's `privateKeyToAccount(key)` is one. */
export interface EvmSigner {
  address: string;
  signTypedData(args: {
    domain: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` };
    types: Record<string, ReadonlyArray<{ name: string; type: string }>>;
    primaryType: string;
    message: Record<string, unknown>;
  }): Promise<string>;
}

/** An x402 v2 PaymentPayload of the `exact` scheme on EVM (EIP-3009 transferWithAuthorization). */
export interface PaymentPayload {
  x402Version: 2;
  resource?: Record<string, unknown>;
  accepted: PaymentRequirements;
  payload: {
    signature: string;
    authorization: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string };
  };
}

export interface WalletPayerOptions {
  /** The most one call may cost, in the asset's smallest units (e.g. 10000 = 0.01 USDC): a dearer challenge is refused. */
  maxAmountPerCall: bigint | string | number;
  /** CAIP-2 networks this wallet pays on (default: any the challenge offers). */
  networks?: readonly string[];
  /** Token contracts this wallet pays with (default: any). */
  assets?: readonly string[];
}

const TRANSFER_WITH_AUTHORIZATION = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

function chooseRequirements(required: PaymentRequired, options: WalletPayerOptions): PaymentRequirements {
  const max = BigInt(options.maxAmountPerCall);
  const lower = (list?: readonly string[]) => list?.map((s) => s.toLowerCase());
  const networks = options.networks;
  const assets = lower(options.assets);
  const usable = required.accepts.filter(
    (r) => r.scheme === 'exact' && r.network.startsWith('eip155:') && (!networks || networks.includes(r.network)) && (!assets || assets.includes(r.asset.toLowerCase())),
  );
  const affordable = usable.filter((r) => BigInt(r.amount) <= max);
  const [choice] = affordable;
  if (!choice) {
    const asked = usable.map((r) => `${r.amount} of ${r.asset} on ${r.network}`).join(', ') || 'nothing this wallet pays with';
    throw new Error(`x402: the service asks for ${asked}; this wallet pays at most ${max} per call`);
  }
  return choice;
}

/** Signs the EIP-3009 authorization the requirements ask for and wraps it as an x402 v2 PaymentPayload. */
export async function signExactPayment(signer: EvmSigner, required: PaymentRequired, requirements: PaymentRequirements): Promise<PaymentPayload> {
  const name = requirements.extra?.['name'];
  const version = requirements.extra?.['version'];
  if (typeof name !== 'string' || typeof version !== 'string') throw new Error('x402: the requirements name no EIP-712 domain (extra.name, extra.version)');
  const chainId = Number(requirements.network.slice('eip155:'.length));
  const nonce = `0x${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('')}`;
  const authorization = {
    from: signer.address,
    to: requirements.payTo,
    value: requirements.amount,
    validAfter: '0',
    validBefore: String(Math.floor(Date.now() / 1000) + requirements.maxTimeoutSeconds),
    nonce,
  };
  const signature = await signer.signTypedData({
    domain: { name, version, chainId, verifyingContract: requirements.asset as `0x${string}` },
    types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return { x402Version: 2, ...(required.resource ? { resource: required.resource } : {}), accepted: requirements, payload: { signature, authorization } };
}

function base64Json(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function requiredOf(challenge: X402Challenge): PaymentRequired {
  const required = paymentRequired(challenge.response);
  if (!required) throw new Error('x402: the 402 carries no PAYMENT-REQUIRED header (is x402 enabled on the service?)');
  return required;
}

/**
 * The standard x402 v2 flow: signs the payment with the wallet and sends it as `PAYMENT-SIGNATURE`; the service has
 * its facilitator settle it after the work succeeded (a failed call is never settled).
 */
export function walletPayer(signer: EvmSigner, options: WalletPayerOptions): X402Payer {
  return {
    async pay(challenge) {
      const required = requiredOf(challenge);
      const payload = await signExactPayment(signer, required, chooseRequirements(required, options));
      return { 'payment-signature': base64Json(payload) };
    },
  };
}

export interface ReceiptPayerOptions extends WalletPayerOptions {
  /** The facilitator the service trusts (its settlement receipts are verified against the facilitator's keys). */
  facilitatorUrl: string;
  fetch?: typeof fetch;
}

/** The facilitator's answer to POST /settle (x402 v2), with notary's settlement-receipt extension. */
export interface SettleResponse {
  success: boolean;
  transaction?: string;
  network?: string;
  payer?: string;
  errorReason?: string;
  extensions?: Record<string, { receipt?: string; header?: string } | undefined>;
}

/**
 * The interface's flow (`X-402-Receipt`): settles first through the facilitator (`POST /settle`), then repeats the
 * request with the facilitator's signed settlement receipt.
 */
export function receiptPayer(signer: EvmSigner, options: ReceiptPayerOptions): X402Payer {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  return {
    async pay(challenge) {
      const required = requiredOf(challenge);
      const requirements = chooseRequirements(required, options);
      const paymentPayload = await signExactPayment(signer, required, requirements);
      const res = await fetchImpl(`${options.facilitatorUrl.replace(/\/+$/, '')}/settle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: requirements }),
      });
      const settled = (await res.json()) as SettleResponse;
      const receipt = settled.extensions?.['x402-settlement-receipt']?.receipt;
      if (!res.ok || !settled.success || !receipt) {
        throw new Error(`x402: the facilitator did not settle (${res.status} ${settled.errorReason ?? 'no settlement receipt'})`);
      }
      return { 'x-402-receipt': receipt };
    },
  };
}
