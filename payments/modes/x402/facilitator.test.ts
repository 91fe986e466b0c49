import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSeed, publicKeyFromSeed } from '../../crypto/ed25519.js';
import { toBase64Url } from '../../crypto/encoding.js';
import { jwkThumbprint } from '../../crypto/jwk.js';
import { KEYRING_FORMAT, ReceiptKeyring } from '../../receipts/index.js';
import { facilitatorJwks, openFacilitatorKeyring } from './facilitator.js';
import { signReceipt, trustedKeyring, verifyReceiptSignature } from './receipt.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-facilitator-keys-'));
  dirs.push(dir);
  return path.join(dir, 'facilitator-keys.json');
}

const claims = {
  iss: 'test-facilitator',
  challenge: 'ch_1',
  network: 'eip155:31337',
  asset: `0x${'a'.repeat(40)}`,
  amount: '1000',
  pay_to: `0x${'b'.repeat(40)}`,
  payer: `0x${'c'.repeat(40)}`,
  transaction: `0x${'d'.repeat(64)}`,
  settled_at: '2026-11-27T09:00:00Z',
};

/** A receipt signed with the keyring's current key verifies under the JWKS the facilitator publishes. */
function signsUnderItsJwks(keyring: ReceiptKeyring): boolean {
  const receipt = signReceipt(claims, keyring.current().seedForSigning());
  return verifyReceiptSignature(receipt, trustedKeyring(facilitatorJwks(keyring).keys));
}

describe("the facilitator's receipt keys (the receipts plug-in's keyring)", () => {
  it('creates a 0600 keyring on first start and publishes plain Ed25519 JWKs, oldest first after a rotation', () => {
    const file = tempFile();
    const keyring = openFacilitatorKeyring(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const [first] = facilitatorJwks(keyring).keys;
    expect(Object.keys(first ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect(signsUnderItsJwks(keyring)).toBe(true);
    const { current } = ReceiptKeyring.rotate(file);
    // The running facilitator signs with the new key and still publishes the old one.
    expect(facilitatorJwks(keyring).keys.map((k) => k.kid)).toEqual([first?.kid, current.kid]);
    expect(keyring.current().kid).toBe(current.kid);
    expect(signsUnderItsJwks(keyring)).toBe(true);
  });

  it('keeps the keys of a file in the older facilitator format: same kids, the unretired one signs', () => {
    const file = tempFile();
    const [oldSeed, newSeed] = [generateSeed(), generateSeed()];
    const kid = (seed: Uint8Array) => jwkThumbprint(publicKeyFromSeed(seed));
    const legacy = {
      keys: [
        { kid: kid(oldSeed), secret: toBase64Url(oldSeed), created_at: '2026-01-01T00:00:00Z', retired_at: '2026-06-01T00:00:00Z' },
        { kid: kid(newSeed), secret: toBase64Url(newSeed), created_at: '2026-06-01T00:00:00Z' },
      ],
    };
    writeFileSync(file, JSON.stringify(legacy), { mode: 0o600 });
    const keyring = openFacilitatorKeyring(file);
    expect(facilitatorJwks(keyring).keys.map((k) => k.kid)).toEqual([kid(oldSeed), kid(newSeed)]);
    expect(keyring.current().kid).toBe(kid(newSeed));
    expect(signsUnderItsJwks(keyring)).toBe(true);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { format: string }).format).toBe(KEYRING_FORMAT);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Opening again reads the upgraded file as it is.
    expect(openFacilitatorKeyring(file).all().map((k) => [k.kid, k.notBefore, k.notAfter])).toEqual(keyring.all().map((k) => [k.kid, k.notBefore, k.notAfter]));
  });

  it('an older file with no keys gets its first key, as the older facilitator did', () => {
    const file = tempFile();
    writeFileSync(file, JSON.stringify({ keys: [] }), { mode: 0o600 });
    const keyring = openFacilitatorKeyring(file);
    expect(facilitatorJwks(keyring).keys).toHaveLength(1);
    expect(signsUnderItsJwks(keyring)).toBe(true);
  });
});
