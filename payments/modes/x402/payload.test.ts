import { describe, expect, it } from 'vitest';
import { NotaryError } from '../../../core/errors.js';
import { parsePaymentSignature } from './payload.js';

const valid = {
  x402Version: 2,
  resource: { url: 'http://127.0.0.1/v1/search', description: 'search', mimeType: 'application/json' },
  accepted: {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '1000',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    payTo: '0x1111111111111111111111111111111111111111',
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2', challenge: 'c' },
  },
  payload: {
    signature: `0x${'1b'.repeat(65)}`,
    authorization: {
      from: '0x2222222222222222222222222222222222222222',
      to: '0x1111111111111111111111111111111111111111',
      value: '1000',
      validAfter: '0',
      validBefore: '1800000000',
      nonce: `0x${'00'.repeat(32)}`,
    },
  },
};

const encode = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');
const code = (header: string): string | undefined => {
  try {
    parsePaymentSignature(header);
  } catch (err) {
    return err instanceof NotaryError ? err.code : 'other';
  }
  return undefined;
};

describe('PAYMENT-SIGNATURE parsing', () => {
  it('accepts an x402 v2 exact EIP-3009 payment', () => {
    const parsed = parsePaymentSignature(encode(valid));
    expect(parsed.eip3009.authorization.value).toBe('1000');
    expect(parsed.payload.accepted.extra['challenge']).toBe('c');
  });

  it('refuses each malformed or unsupported form with its own 400 code', () => {
    const cases: Array<[string, string]> = [
      ['', 'x402_malformed_payment'],
      ['!!not-base64!!', 'x402_malformed_payment'],
      [encode('{"x402Version": 2,'), 'x402_malformed_payment'],
      [Buffer.from([0xc3, 0x28]).toString('base64'), 'x402_malformed_payment'],
      [encode({ ...valid, accepted: { ...valid.accepted, network: 'base' } }), 'x402_malformed_payment'],
      [encode({ ...valid, payload: { ...valid.payload, authorization: { ...valid.payload.authorization, value: '-1' } } }), 'x402_malformed_payment'],
      [encode({ ...valid, payload: { ...valid.payload, signature: '0x12' } }), 'x402_malformed_payment'],
      [encode({ ...valid, x402Version: 1 }), 'x402_unsupported'],
      [encode({ ...valid, accepted: { ...valid.accepted, scheme: 'upto' } }), 'x402_unsupported'],
      [encode({ ...valid, payload: { permit2Authorization: {}, signature: '0x' } }), 'x402_unsupported'],
      ['A'.repeat(20_000), 'x402_malformed_payment'],
    ];
    for (const [header, expected] of cases) expect(code(header), header.slice(0, 40)).toBe(expected);
  });
});
