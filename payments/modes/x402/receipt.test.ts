import { describe, expect, it } from 'vitest';
import { NotaryError } from '../../../core/errors.js';
import { publicKeyFromSeed, verifyBytes } from '../../crypto/ed25519.js';
import { fromBase64Url } from '../../crypto/encoding.js';
import { jwkThumbprint } from '../../crypto/jwk.js';
import {
  decodeReceipt,
  encodeReceipt,
  publicJwk,
  signReceipt,
  signedBytes,
  trustedKeyring,
  verifyReceiptSignature,
  type ReceiptClaims,
} from './receipt.js';

const claims: ReceiptClaims = {
  iss: 'https://facilitator.example',
  challenge: 'abc.1700000300.def',
  network: 'eip155:8453',
  asset: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
  amount: '2000',
  pay_to: '0x1111111111111111111111111111111111111111',
  payer: '0x2222222222222222222222222222222222222222',
  transaction: `0x${'ab'.repeat(32)}`,
  settled_at: '2026-11-23T10:00:00Z',
};

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof NotaryError ? err.code : 'other';
  }
  return undefined;
};

describe('x402 settlement receipts', () => {
  const secret = new Uint8Array(32).fill(3);

  it('uses the RFC 7638 thumbprint of the key as kid (RFC 8037 example key)', () => {
    const x = fromBase64Url('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo') ?? new Uint8Array();
    expect(jwkThumbprint(x)).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
    expect(publicJwk(x).kid).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });

  it('signs the domain-separated JCS of the receipt, and verifies offline under the trusted key only', () => {
    const receipt = signReceipt(claims, secret);
    const jwk = publicJwk(publicKeyFromSeed(secret));
    expect(receipt).toMatchObject({ v: 1, typ: 'x402-settlement-receipt', kid: jwk.kid, ...claims });
    const { signature, ...unsigned } = receipt;
    expect(new TextDecoder().decode(signedBytes(unsigned))).toBe(
      `x402-settlement-receipt-v1\n{"amount":"2000","asset":"${claims.asset}","challenge":"${claims.challenge}","iss":"${claims.iss}","kid":"${jwk.kid}","network":"eip155:8453","pay_to":"${claims.pay_to}","payer":"${claims.payer}","settled_at":"2026-11-23T10:00:00Z","transaction":"${claims.transaction}","typ":"x402-settlement-receipt","v":1}`,
    );
    expect(verifyBytes(fromBase64Url(signature.slice(8)) ?? new Uint8Array(), signedBytes(unsigned), fromBase64Url(jwk.x) ?? new Uint8Array())).toBe(true);
    const trusted = trustedKeyring([jwk]);
    expect(verifyReceiptSignature(receipt, trusted)).toBe(true);
    expect(verifyReceiptSignature(decodeReceipt(encodeReceipt(receipt)), trusted)).toBe(true);
    for (const field of ['amount', 'pay_to', 'payer', 'transaction', 'challenge', 'network'] as const) {
      const tampered = { ...receipt, [field]: field === 'amount' ? '2001' : field === 'network' ? 'eip155:1' : field === 'challenge' ? 'other' : `0x${'cd'.repeat(field === 'transaction' ? 32 : 20)}` };
      expect(verifyReceiptSignature(tampered, trusted), field).toBe(false);
    }
    const other = trustedKeyring([publicJwk(publicKeyFromSeed(new Uint8Array(32).fill(4)))]);
    expect(verifyReceiptSignature(receipt, other)).toBe(false);
    // A kid that names a trusted key does not make another key's signature valid.
    const impostor = signReceipt(claims, new Uint8Array(32).fill(4));
    expect(verifyReceiptSignature({ ...impostor, kid: receipt.kid }, trusted)).toBe(false);
  });

  it('refuses malformed headers with x402_malformed_receipt', () => {
    const good = encodeReceipt(signReceipt(claims, secret));
    expect(code(() => decodeReceipt(good))).toBeUndefined();
    for (const bad of ['', 'not base64!', `${good}=`, 'A'.repeat(5000), Buffer.from('{"v":1}').toString('base64url'), Buffer.from('[]').toString('base64url'), Buffer.from([0xff, 0xfe]).toString('base64url')]) {
      expect(code(() => decodeReceipt(bad)), bad.slice(0, 20)).toBe('x402_malformed_receipt');
    }
    const extra = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(good, 'base64url').toString()), more: 1 })).toString('base64url');
    expect(code(() => decodeReceipt(extra))).toBe('x402_malformed_receipt');
  });
});
