import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';

/** `notary serve` and the receipt key file: created at first start (0600, never logged), refused when unsafe or broken. */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const env = { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off', NOTARY_LOG_LEVEL: 'info' };

function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-receipts-serve-'));
  dirs.push(dir);
  return dir;
}

describe('notary serve with signed receipts', () => {
  it('creates the key at first start, publishes it, and never prints the private key', async () => {
    const data = dataDir();
    const port = await freePort();
    const server = await startServer(['--data', data, '--no-crawl'], port, { ...env, NOTARY_RECEIPTS_ISSUER: `http://127.0.0.1:${port}` });
    try {
      const keyring = JSON.parse(readFileSync(path.join(data, 'receipt-keys.json'), 'utf8')) as { keys: Array<{ kid: string; d: string }> };
      const [key] = keyring.keys;
      const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string; d?: string }> };
      expect(jwks.keys.map((k) => k.kid)).toEqual([key?.kid]);
      expect(jwks.keys[0]?.d).toBeUndefined();
      const checkpoint = await (await fetch(`${server.url}/v1/receipts/log/checkpoint`)).text();
      expect(checkpoint).toMatch(new RegExp(`^127\\.0\\.0\\.1:${port}/receipt-log\\n0\\n`));
      expect(server.output()).toContain(`signed receipts: issuer http://127.0.0.1:${port}, key ${key?.kid}`);
      expect(server.output()).not.toContain(key?.d);
    } finally {
      await server.stop();
    }
  });

  it('refuses to start with a key file other users can read, or a corrupted one, and says why', async () => {
    const data = dataDir();
    const created = await runCli(['--data', data, 'receipts', 'rotate-key'], env);
    expect(created.code, created.stderr).toBe(0);
    const file = path.join(data, 'receipt-keys.json');
    chmodSync(file, 0o644);
    const loose = await runCli(['--data', data, 'serve', '--no-crawl', '--port', String(await freePort())], env, 60_000);
    expect(loose.code).toBe(1);
    expect(loose.stderr).toMatch(/receipt key file .* is accessible to other users \(mode 0644\).*chmod 600 .*\[receipt_key_insecure\]/);
    chmodSync(file, 0o600);
    const good = readFileSync(file, 'utf8');
    writeFileSync(file, good.slice(0, 100), { mode: 0o600 });
    const corrupted = await runCli(['--data', data, 'serve', '--no-crawl', '--port', String(await freePort())], env, 60_000);
    expect(corrupted.code).toBe(1);
    expect(corrupted.stderr).toMatch(/receipt key file .* is not valid JSON .*\[receipt_key_invalid\]/);
    // A configured key file that does not exist is an error, not a silently generated key.
    const missing = await runCli(['--data', data, 'serve', '--no-crawl', '--port', String(await freePort())], { ...env, NOTARY_RECEIPTS_KEY_FILE: path.join(data, 'nope.json') }, 60_000);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.json: does not exist .*\[receipt_key_invalid\]/);
  });
});
