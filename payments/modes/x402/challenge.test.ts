import { describe, expect, it } from 'vitest';
import { ChallengeIssuer, type ChallengeBinding } from './challenge.js';

const binding: ChallengeBinding = {
  method: 'POST',
  path: '/v1/search',
  bodyDigest: 'a'.repeat(64),
  amount: '2000',
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x1111111111111111111111111111111111111111',
};

describe('x402 challenges', () => {
  const issuer = new ChallengeIssuer(new Uint8Array(32).fill(7), 300);

  it('checks a nonce against exactly what it was issued for, with its expiry', () => {
    const now = 1_700_000_000_000;
    const { nonce, expires } = issuer.issue(binding, now);
    expect(expires).toBe(1_700_000_300);
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}\.1700000300\.[A-Za-z0-9_-]{43}$/);
    expect(issuer.check(nonce, binding)).toEqual({ valid: true, expires });
    // Addresses compare without case; the method too.
    expect(issuer.check(nonce, { ...binding, asset: binding.asset.toLowerCase(), method: 'post' }).valid).toBe(true);
    for (const change of [{ path: '/v1/extract' }, { bodyDigest: 'b'.repeat(64) }, { amount: '1000' }, { network: 'eip155:1' }, { payTo: '0x2222222222222222222222222222222222222222' }, { method: 'GET' }]) {
      expect(issuer.check(nonce, { ...binding, ...change }).valid, JSON.stringify(change)).toBe(false);
    }
  });

  it('refuses a nonce with another expiry, another secret, or no shape at all', () => {
    const { nonce } = issuer.issue(binding, Date.now());
    const [random, expires, mac] = nonce.split('.');
    expect(issuer.check(`${random}.${Number(expires) + 1000}.${mac}`, binding).valid).toBe(false);
    expect(new ChallengeIssuer(new Uint8Array(32).fill(8), 300).check(nonce, binding).valid).toBe(false);
    for (const bad of ['', 'x', `${nonce}.`, nonce.replace('.', ':'), `${random}.${expires}.${'A'.repeat(43)}`]) expect(issuer.check(bad, binding).valid).toBe(false);
    expect(issuer.issue(binding, Date.now()).nonce).not.toBe(nonce);
  });

  it('needs a secret of at least 32 bytes', () => {
    expect(() => new ChallengeIssuer(new Uint8Array(16), 300)).toThrow(/32 bytes/);
  });
});
