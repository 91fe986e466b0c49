import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available } from '../testkit/components.js';
import { runCli, startServer, type RunningServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';

/**
 * The README's worked example, run for real: party keys made with `notary mpp keygen` (and one with openssl),
 * registered with `notary parties add-key`, an envelope signed by `notary mpp envelope`, and the call made with curl
 * against `notary serve`; then a replay, a revoked key and the listings.
 */
const hasCurl = spawnSync('curl', ['--version']).status === 0;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const env = { NOTARY_LOG_LEVEL: 'warn', NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off' };

describe.runIf(available('curl', hasCurl) && available('openssl', hasOpenssl))('MPP from the command line', () => {
  let root: string;
  let data: string;
  let site: StaticServer;
  let server: RunningServer | undefined;
  const cli = (...args: string[]) => runCli(['--data', data, ...args], env, 120_000);
  const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';
  const curl = (url: string, body: string, authorization: string) => {
    const run = spawnSync('curl', ['-s', '-i', url, '-H', 'content-type: application/json', '-H', `Authorization: ${authorization}`, '-d', body], { encoding: 'utf8' });
    const [head = '', ...rest] = run.stdout.split('\r\n\r\n');
    return { status: Number(/^HTTP\/[\d.]+ (\d{3})/.exec(head)?.[1]), head, json: JSON.parse(rest.join('\r\n\r\n')) as Record<string, unknown> };
  };

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'notary-mpp-cli-'));
    data = path.join(root, 'data');
    const siteDir = path.join(root, 'site');
    mkdirSync(siteDir);
    writeFileSync(path.join(siteDir, 'index.html'), '<html><head><title>Manual</title></head><body><p><a href="vacuum.html">vacuum</a></p></body></html>');
    writeFileSync(
      path.join(siteDir, 'vacuum.html'),
      '<html><head><title>VACUUM</title></head><body><h1>VACUUM</h1><p>VACUUM reclaims storage occupied by dead tuples in tables and indexes; run it after large deletes.</p></body></html>',
    );
    site = await serveDirectory(siteDir);
    // Prices pinned here (depth 2 at 2 credits), so the split below does not follow changes of the defaults.
    mkdirSync(data, { recursive: true });
    writeFileSync(path.join(data, 'notary.json'), JSON.stringify({ pricing: { search: { credits_by_depth: [1, 2] } } }));
    const crawl = await cli('crawl', `${site.url}/index.html`, '--delay-ms', '0');
    expect(crawl.code, crawl.stderr).toBe(0);
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
    await site?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('keygen, add-key, envelope and curl pay one search three ways; a replay and a revoked key are refused', async () => {
    const keys: Record<string, { pub: string; kid: string }> = {};
    for (const name of ['alice', 'bob']) {
      const file = path.join(root, `${name}.jwk`);
      const made = await cli('mpp', 'keygen', '--out', file);
      expect(made.code, made.stderr).toBe(0);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const jwk = JSON.parse(readFileSync(file, 'utf8')) as { x: string; kid: string; d: string };
      expect(lastLine(made.stdout)).toBe(jwk.x);
      keys[name] = { pub: jwk.x, kid: jwk.kid };
    }
    expect((await cli('mpp', 'keygen', '--out', path.join(root, 'alice.jwk'))).code).toBe(1);
    // carol keeps her key in OpenSSL's PEM form; the public key is the last 32 bytes of its DER SubjectPublicKeyInfo.
    const pem = path.join(root, 'carol.pem');
    expect(spawnSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', pem]).status).toBe(0);
    const der = spawnSync('openssl', ['pkey', '-in', pem, '-pubout', '-outform', 'DER']).stdout as Buffer;
    keys['carol'] = { pub: der.subarray(-32).toString('base64url'), kid: '' };

    for (const [name, credits] of [['alice', 10], ['bob', 10], ['carol', 1]] as const) {
      const added = await cli('parties', 'add-key', '--tenant', name, '--public-key', keys[name]?.pub ?? '', '--credits', String(credits), '--tier', 'pro');
      expect(added.code, added.stderr).toBe(0);
      expect(lastLine(added.stdout)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      if (name !== 'carol') expect(lastLine(added.stdout)).toBe(keys[name]?.kid);
      keys[name] = { pub: keys[name]?.pub ?? '', kid: lastLine(added.stdout) };
    }
    const again = await cli('parties', 'add-key', '--tenant', 'alice', '--public-key', keys['alice']?.pub ?? '');
    expect(lastLine(again.stdout)).toBe(keys['alice']?.kid);
    const stolen = await cli('parties', 'add-key', '--tenant', 'bob', '--public-key', keys['alice']?.pub ?? '');
    expect(stolen.code).toBe(1);
    expect(stolen.stderr).toMatch(/party_key_exists/);
    const bad = await cli('parties', 'add-key', '--tenant', 'bob', '--public-key', 'not-a-key');
    expect(bad.stderr).toMatch(/invalid_public_key/);

    const port = await freePort();
    server = await startServer(['--data', data, '--no-crawl'], port, env);
    const url = `${server.url}/v1/search`;
    const body = '{"query":"vacuum dead tuples","depth":2}';
    const signed = await cli(
      'mpp', 'envelope', '--url', url, '--body', body, '--credits', '2',
      '--party', `alice=0.5:${path.join(root, 'alice.jwk')}`,
      '--party', `bob=0.3:${path.join(root, 'bob.jwk')}`,
      '--party', `carol=0.2:${pem}`,
    );
    expect(signed.code, signed.stderr).toBe(0);
    const envelope = lastLine(signed.stdout);
    expect(envelope).toMatch(/^[A-Za-z0-9_-]+$/);
    const decoded = await cli('mpp', 'decode', `MPP envelope=${envelope}`);
    expect(JSON.parse(decoded.stdout)).toMatchObject({ v: 1, htm: 'POST', htu: url, total_credits: 2, parties: [{ party: 'alice', share: '0.5' }, { party: 'bob' }, { party: 'carol' }] });

    const paid = curl(url, body, `MPP envelope=${envelope}`);
    expect(paid.status, JSON.stringify(paid.json)).toBe(200);
    // 2 credits by 0.5/0.3/0.2: floors 1, 0, 0; the leftover goes to bob (remainder .6 against carol's .4).
    expect(paid.json).toMatchObject({
      credits_used: 2,
      receipts: [
        { party: 'alice', credits: 1, share: '0.5' },
        { party: 'bob', credits: 1, share: '0.3' },
        { party: 'carol', credits: 0, share: '0.2' },
      ],
    });
    const results = paid.json['results'] as Array<{ title: string }>;
    expect(results[0]?.title).toBe('VACUUM');
    expect(paid.json['facts']).toEqual(results);

    const replay = curl(url, body, `MPP envelope=${envelope}`);
    expect(replay.status).toBe(401);
    expect(replay.json).toMatchObject({ code: 'mpp_nonce_replayed' });
    expect(replay.head).toMatch(/www-authenticate: MPP realm="notary", error="mpp_nonce_replayed"/i);

    const listed = await cli('parties', 'list', '--json');
    const rows = JSON.parse(listed.stdout) as Array<{ tenant: string; kid: string; revoked_at: string | null }>;
    expect(rows.map((r) => r.tenant).sort()).toEqual(['alice', 'bob', 'carol']);
    const text = (await cli('parties', 'list')).stdout;
    expect(text).toMatch(new RegExp(`^${keys['alice']?.kid} {2}party alice \\(9 credits\\) {2}- {2}active`, 'm'));
    expect(text).toMatch(/party bob \(9 credits\)/);
    expect(text).toMatch(/party carol \(1 credits\)/);

    const revoked = await cli('parties', 'revoke', keys['bob']?.kid ?? '');
    expect(revoked.code, revoked.stderr).toBe(0);
    const equal = await cli('mpp', 'envelope', '--url', url, '--body', body, '--credits', '2', '--party', `alice=${path.join(root, 'alice.jwk')}`, '--party', `bob=${path.join(root, 'bob.jwk')}`, '--header');
    expect(lastLine(equal.stdout)).toMatch(/^MPP envelope=/);
    const refused = curl(url, body, lastLine(equal.stdout));
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ code: 'mpp_key_revoked', party: 'bob' });
    const status = JSON.parse((await cli('parties', 'list', '--tenant', 'bob', '--json')).stdout) as Array<{ revoked_at: string | null }>;
    expect(status[0]?.revoked_at).not.toBeNull();
  });
});
