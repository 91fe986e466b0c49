import { describe, expect, it } from 'vitest';
import { NotaryError } from '../core/errors.js';
import { BASE62 } from '../core/ids.js';
import { API_KEY_LENGTH, apiKeyChecksum, apiKeyHashesEqual, generateApiKey, hashApiKey, parseApiKey } from './api-keys.js';

function expectInvalid(raw: string): void {
  let caught: unknown;
  try {
    parseApiKey(raw);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(NotaryError);
  expect((caught as NotaryError).code).toBe('invalid_api_key');
}

describe('API keys', () => {
  it('have the sk_live_ + 32 base62 + 6 base62 checksum format', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { key, hash, displayPrefix, last4 } = generateApiKey();
      expect(key).toMatch(/^sk_live_[0-9A-Za-z]{38}$/);
      expect(key).toHaveLength(API_KEY_LENGTH);
      expect(key.slice(-6)).toBe(apiKeyChecksum(key.slice(8, 40)));
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(hash).toBe(hashApiKey(key));
      expect(displayPrefix).toBe(key.slice(0, 12));
      expect(last4).toBe(key.slice(-4));
      expect(parseApiKey(key).hash).toBe(hash);
      seen.add(key);
    }
    expect(seen.size).toBe(200);
  });

  it('computes the checksum as base62 CRC32 of the secret', () => {
    // CRC32("123456789") = 0xCBF43926 = 3421780262 (the standard check value).
    expect(apiKeyChecksum('123456789')).toBe('3jZRME');
    let value = 0;
    for (const ch of '3jZRME') value = value * 62 + BASE62.indexOf(ch);
    expect(value).toBe(0xcbf43926);
  });

  it('rejects any one-character change of a valid key by its checksum', () => {
    const { key } = generateApiKey();
    let rejected = 0;
    for (let pos = 8; pos < key.length; pos++) {
      const original = key[pos] ?? '';
      const replacement = original === 'a' ? 'b' : 'a';
      expectInvalid(key.slice(0, pos) + replacement + key.slice(pos + 1));
      rejected++;
    }
    expect(rejected).toBe(38);
  });

  it('rejects a wrong prefix, length or alphabet', () => {
    const { key } = generateApiKey();
    expectInvalid(key.replace('sk_live_', 'sk_prod_'));
    expectInvalid(key.replace('sk_live_', 'SK_LIVE_'));
    expectInvalid(key.slice(1));
    expectInvalid(key + 'x');
    expectInvalid(key.slice(0, -1));
    expectInvalid(`${key.slice(0, 20)}-${key.slice(21)}`);
    expectInvalid('');
    expectInvalid(`Bearer ${key}`);
    expectInvalid(`${key.slice(0, 20)}é${key.slice(21)}`);
  });

  it('compares hashes in constant time and only well-formed digests', () => {
    const a = hashApiKey('a');
    expect(apiKeyHashesEqual(a, hashApiKey('a'))).toBe(true);
    expect(apiKeyHashesEqual(a, hashApiKey('b'))).toBe(false);
    expect(apiKeyHashesEqual(a, 'abc')).toBe(false);
    expect(apiKeyHashesEqual('', '')).toBe(false);
  });
});
