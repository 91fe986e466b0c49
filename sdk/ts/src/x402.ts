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
