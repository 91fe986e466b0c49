import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { NotaryError } from '../../core/errors.js';
import { ReceiptKeyring } from './index.js';
import { jwkThumbprint, parseJwks, toBase64Url } from '../crypto/index.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-keys-'));
  dirs.push(dir);
  return path.join(dir, 'data', 'receipt-keys.json');
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof NotaryError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return 'no error';
}

describe('ReceiptKeyring', () => {
  it('creates a 0600 key file at first start and loads the same key afterwards', () => {
    const file = tempFile();
    const first = ReceiptKeyring.open(file, { createIfMissing: true });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = first.current();
    expect(key.kid).toBe(jwkThumbprint(key.publicKey));
    const again = ReceiptKeyring.open(file, { createIfMissing: true });
    expect(again.current().kid).toBe(key.kid);
    const jwks = again.jwks();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: key.kid, x: toBase64Url(key.publicKey) });
    expect(jwks.keys[0]?.exp).toBeUndefined();
  });

  it('never shows the private key in JSON, inspect or the JWKS', () => {
    const file = tempFile();
    const keyring = ReceiptKeyring.open(file, { createIfMissing: true });
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { keys: Array<{ d: string }> };
    const secret = stored.keys[0]?.d as string;
    expect(secret).toHaveLength(43);
    const key = keyring.current();
    for (const shown of [JSON.stringify(key), inspect(key, { depth: 5 }), JSON.stringify(keyring.jwks()), inspect(keyring, { depth: 5 }), String(key)]) {
      expect(shown).not.toContain(secret);
    }
  });

  it('a configured file that does not exist is an error, not a new key', () => {
    const file = tempFile();
    expect(codeOf(() => ReceiptKeyring.open(file, { createIfMissing: false }))).toMatch(/^receipt_key_invalid: .*does not exist/);
  });

  it('refuses a key file other users can read or write', () => {
    const file = tempFile();
    ReceiptKeyring.open(file, { createIfMissing: true });
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      chmodSync(file, mode);
      expect(codeOf(() => ReceiptKeyring.open(file, { createIfMissing: true }))).toMatch(/^receipt_key_insecure: .*chmod 600/);
    }
    chmodSync(file, 0o600);
    expect(ReceiptKeyring.open(file, { createIfMissing: true }).current().kid).toHaveLength(43);
  });

  it('refuses corrupted key files with the reason', () => {
    const file = tempFile();
    const keyring = ReceiptKeyring.open(file, { createIfMissing: true });
    const good = readFileSync(file, 'utf8');
    const doc = JSON.parse(good) as { keys: Array<Record<string, unknown>> };
    const other = ReceiptKeyring.open(tempFile(), { createIfMissing: true }).current();
    const cases: Array<[string, string, RegExp]> = [
      ['truncated', good.slice(0, good.length / 2), /not valid JSON/],
      ['empty', '', /not valid JSON/],
      ['wrong format', JSON.stringify({ format: 'x', keys: [] }), /is not a notary-receipt-keys-v1 document/],
      ['short seed', JSON.stringify({ ...doc, keys: [{ ...doc.keys[0], d: 'AAAA' }] }), /"d" is not a 32-byte/],
      ['public key of another seed', JSON.stringify({ ...doc, keys: [{ ...doc.keys[0], x: toBase64Url(other.publicKey) }] }), /"x" is not the public key/],
      ['kid of another key', JSON.stringify({ ...doc, keys: [{ ...doc.keys[0], kid: other.kid }] }), /"kid" is not the RFC 7638 thumbprint/],
      ['no current key', JSON.stringify({ ...doc, keys: [{ ...doc.keys[0], exp: 2_000_000_000 }] }), /exactly one current key/],
      ['two current keys', JSON.stringify({ ...doc, keys: [doc.keys[0], { ...doc.keys[0] }] }), /listed twice/],
    ];
    for (const [name, text, why] of cases) {
      writeFileSync(file, text, { mode: 0o600 });
      expect(codeOf(() => ReceiptKeyring.open(file, { createIfMissing: true })), name).toMatch(why);
      // A running keyring that sees the file change to garbage stops signing instead of using its stale key.
      expect(codeOf(() => keyring.current()), name).toMatch(/^receipt_key_invalid/);
    }
    writeFileSync(file, good, { mode: 0o600 });
    expect(keyring.current().kid).toBe(JSON.parse(good).keys[0].kid);
  });

  it('rotation adds a current key, retires the old one with its window, and a running keyring picks it up', () => {
    const file = tempFile();
    const t0 = new Date('2026-11-01T00:00:00Z');
    const running = ReceiptKeyring.open(file, { createIfMissing: true, now: () => t0 });
    const before = running.current();
    const at = new Date('2026-11-10T12:00:00.250Z');
    const { current, retired } = ReceiptKeyring.rotate(file, at);
    expect(retired?.kid).toBe(before.kid);
    expect(retired?.notAfter).toBe(Math.ceil(at.getTime() / 1000));
    expect(current.notBefore).toBe(Math.floor(at.getTime() / 1000));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(running.current().kid).toBe(current.kid);
    const keys = parseJwks(running.jwks());
    expect(keys.map((k) => [k.kid, k.notAfter])).toEqual([
      [before.kid, Math.ceil(at.getTime() / 1000)],
      [current.kid, null],
    ]);
    ReceiptKeyring.rotate(file, new Date('2026-11-20T00:00:00Z'));
    expect(running.all()).toHaveLength(3);
    expect(running.all().filter((k) => k.notAfter === null)).toHaveLength(1);
  });

  it('rotate-key creates a missing configured file', () => {
    const file = tempFile();
    const { current, retired } = ReceiptKeyring.rotate(file);
    expect(retired).toBeNull();
    expect(ReceiptKeyring.open(file, { createIfMissing: false }).current().kid).toBe(current.kid);
  });
});
