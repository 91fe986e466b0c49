import { PaymentPayloadV2Schema } from '@x402/core/schemas';
import type { PaymentPayload } from '@x402/core/types';
import { z } from 'zod';
import { NotaryError } from '../../../core/index.js';
import './errors.js'; // registers the x402_* error codes this file throws

/** Longest PAYMENT-SIGNATURE accepted (an EIP-3009 payment with its echoed requirements is about 1.5 KB). */
export const MAX_PAYMENT_HEADER = 16_384;

const uint = z.string().regex(/^(0|[1-9]\d{0,77})$/, 'must be an unsigned integer written in decimal');
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address');

/** The `exact` scheme's EIP-3009 payload (transferWithAuthorization, EIP-712 signed). */
export const eip3009PayloadSchema = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]{130,}$/, 'must be a 0x hex signature'),
  authorization: z.object({
    from: address,
    to: address,
    value: uint,
    validAfter: uint,
    validBefore: uint,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 32 bytes of 0x hex'),
  }),
});

export type Eip3009Payload = z.infer<typeof eip3009PayloadSchema>;

export interface SignedPayment {
  payload: PaymentPayload;
  eip3009: Eip3009Payload;
}

/**
 * Parses a PAYMENT-SIGNATURE header: base64 of the JSON of an x402 v2 PaymentPayload (validated with the official
 * schema) whose payload is an EIP-3009 authorization. Each failure is a 400 with its own code and a detail saying what
 * was wrong; nothing about the payment's validity is decided here.
 */
export function parsePaymentSignature(header: string): SignedPayment {
  const value = header.trim();
  if (value.length === 0 || value.length > MAX_PAYMENT_HEADER || !/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 === 1) {
    throw new NotaryError('x402_malformed_payment', `PAYMENT-SIGNATURE must be base64 of at most ${MAX_PAYMENT_HEADER} characters`);
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'base64')));
  } catch {
    throw new NotaryError('x402_malformed_payment', 'PAYMENT-SIGNATURE does not decode to UTF-8 JSON');
  }
  if (typeof json === 'object' && json !== null && 'x402Version' in json && (json as { x402Version: unknown }).x402Version !== 2) {
    throw new NotaryError('x402_unsupported', `x402Version ${JSON.stringify((json as { x402Version: unknown }).x402Version)} is not accepted; send an x402 v2 payment`);
  }
  const parsed = PaymentPayloadV2Schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new NotaryError('x402_malformed_payment', `PAYMENT-SIGNATURE: ${issue ? `${issue.path.join('.') || '(root)'} ${issue.message}` : 'not an x402 v2 payment'}`);
  }
  const payload = parsed.data as PaymentPayload;
  if (payload.accepted.scheme !== 'exact') {
    throw new NotaryError('x402_unsupported', `scheme "${payload.accepted.scheme}" is not accepted; pay with the exact scheme`);
  }
  if ('permit2Authorization' in payload.payload) {
    throw new NotaryError('x402_unsupported', 'Permit2 payments are not accepted here; sign an EIP-3009 authorization');
  }
  const inner = eip3009PayloadSchema.safeParse(payload.payload);
  if (!inner.success) {
    const issue = inner.error.issues[0];
    throw new NotaryError('x402_malformed_payment', `PAYMENT-SIGNATURE payload: ${issue ? `${issue.path.join('.')} ${issue.message}` : 'not an EIP-3009 authorization'}`);
  }
  return { payload, eip3009: inner.data };
}
