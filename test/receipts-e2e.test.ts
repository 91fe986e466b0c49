import { createHash, createHmac } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp, pluginPublicRoutes } from '../api/index.js';
import { signedReceipts, type NotaryReceipt } from '../payments/receipts/index.js';
import { canonicalJson } from '../payments/crypto/index.js';
import { Runtime, silentLog } from '../runtime/index.js';
import { apiIndexDocs, apiTestConfig } from '../testkit/app.js';
import { startTestServer, type TestServer } from '../testkit/upstream-server.js';
import { docExample } from './support/doc-examples.js';
import { runCli } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';
import { mutateField, RECEIPT_FIELDS } from '../testkit/receipt-mutations.js';
import { runPython, runPythonVerifier } from './support/receipts-python.js';

/**
 * Signed receipts end to end on a real port: a search with an API key and `X-Notary-Sign: required`, checked by the
 * independent Python verifier (cryptography + rfc8785, fetching the JWKS, checkpoint and proofs over HTTP) and by
 * `notary receipts verify`; then rotation, the offline audit, and every way a saved receipt can be tampered with.
 */
let dir: string;
let runtime: Runtime;
let upstream: TestServer;
let app: FastifyInstance;
let base: string;
let key: string;
let tenantId: string;
const files = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'notary-receipts-e2e-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  upstream = await startTestServer({
    '/article': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html lang="en"><head><title>Tides explained</title></head><body><article><h1>Tides explained</h1>
<p>Tides are the rise and fall of sea levels caused by the gravitational pull of the Moon and the Sun and the rotation of the Earth.</p>
<p>When the Sun and Moon line up their pulls add together and produce spring tides with a larger range than usual.</p>
</article></body></html>`);
    },
  });
  const config = apiTestConfig(dir, {
    server: { port, host: '127.0.0.1' },
    receipts: { issuer: base },
    extract: { allow_private_networks: true, respect_robots_txt: false, render: 'never' },
  });
  runtime = await Runtime.open(config, { env: {}, log: silentLog });
  await runtime.index.upsert(apiIndexDocs());
  // The app as `notary serve` builds it: the paid-call gate with the receipt extension, the receipt routes.
  app = await buildApp({
    config,
    gate: runtime.paidCallGate(),
    search: await runtime.search(),
    extract: runtime.extract(),
    health: async () => ({ status: 'ok' }),
    publicRoutes: [pluginPublicRoutes(await runtime.pluginRoutes())],
  });
  await app.listen({ port, host: '127.0.0.1' });
  const tenant = await runtime.accounts.createTenant('auditor', { credits: 100 });
  tenantId = tenant.id;
  key = (await runtime.accounts.createKey(tenant.id)).key;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await runtime?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function search(body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const res = await fetch(`${base}/v1/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

const cliEnv = () => ({ NOTARY_DATA_DIR: dir });

describe('signed receipts end to end', () => {
  const requestBody = '{"query": "vacuum dead tuples",  "depth": 2}';
  let saved: Record<string, unknown>;
  let receipt: NotaryReceipt;

  it('a search with a key and X-Notary-Sign: required returns a receipt, facts, and charges once', async () => {
    writeFileSync(files('checkpoint-0.txt'), await (await fetch(`${base}/v1/receipts/log/checkpoint`)).text());
    const before = await runtime.accounts.balance(tenantId);
    const res = await search(requestBody, { 'X-Notary-Sign': 'required' });
    expect(res.status).toBe(200);
    saved = res.json;
    receipt = saved['notary_receipt'] as NotaryReceipt;
    expect(Object.keys(receipt).sort()).toEqual([...RECEIPT_FIELDS].sort());
    expect(receipt).toMatchObject({ issuer: base, claim: 'search_call_consumed', credits: 2 });
    expect(saved['credits_used']).toBe(2);
    expect(receipt.issued_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(receipt.signature).toMatch(/^ed25519:[A-Za-z0-9_-]{86}$/);
    expect(saved['facts']).toEqual(saved['results']);
    expect((saved['results'] as unknown[]).length).toBeGreaterThan(0);
    expect(await runtime.accounts.balance(tenantId)).toBe(before - 2);
    // The bytes on the wire are what the digest covers.
    writeFileSync(files('response.json'), res.text);
    writeFileSync(files('request.bin'), requestBody);
    const jwks = await (await fetch(`${base}/.well-known/jwks.json`)).text();
    writeFileSync(files('jwks.json'), jwks);
  });

  it('the public log cannot confirm a guessed request: its request_digest is keyed with a salt only the response carries', async () => {
    const res = await fetch(`${base}/v1/receipts/log/entries?start=0&end=${await (await runtime.service(signedReceipts)).log.treeSize()}`);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const entries = (JSON.parse(text) as { entries: Array<{ receipt: NotaryReceipt }> }).entries;
    const logged = entries.find((e) => e.receipt.request_id === receipt.request_id)?.receipt;
    expect(logged).toEqual(receipt);
    // What anyone can compute from a guessed body: its SHA-256 (the version 1 digest), also as JSON re-serialised.
    for (const guess of [requestBody, JSON.stringify(JSON.parse(requestBody))]) {
      expect(text).not.toContain(createHash('sha256').update(guess).digest('base64'));
    }
    const salt = saved['notary_request_salt'];
    expect(salt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(text).not.toContain(String(salt));
    const keyed = createHmac('sha256', Buffer.from(String(salt), 'base64url')).update(requestBody).digest('base64');
    expect(receipt.request_digest).toBe(`hmac-sha-256=:${keyed}:`);
  });

  it('the Python verifier accepts it: signature, kid, validity, digests, checkpoint, inclusion, consistency', async () => {
    const out = await runPythonVerifier([
      'verify', '--server', base, '--response', files('response.json'), '--request', files('request.bin'),
      '--previous-checkpoint', files('checkpoint-0.txt'), '--save-checkpoint', files('checkpoint-1.txt'),
    ]);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    for (const check of ['kid', 'key_validity', 'signature', 'response_digest', 'request_digest', 'checkpoint', 'inclusion', 'consistency']) {
      expect(out.stdout).toMatch(new RegExp(`^ok\\s+${check}\\b`, 'm'));
    }
  });

  it("docs/receipts.md's few lines of Python accept it, and refuse a changed body", async () => {
    writeFileSync(files('readme_verify.py'), docExample('verify-receipt-python').code);
    const ok = await runPython([files('readme_verify.py'), files('response.json')]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('valid: search_call_consumed 2 credits');
    writeFileSync(files('changed.json'), JSON.stringify({ ...saved, credits_used: 1 }));
    const changed = await runPython([files('readme_verify.py'), files('changed.json')]);
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain('the saved response body was changed');
  });

  it('notary receipts verify accepts it, with --jwks and from the issuer named in the receipt', async () => {
    const pinned = await runCli(['receipts', 'verify', files('response.json'), '--jwks', files('jwks.json'), '--request', files('request.bin')], cliEnv());
    expect(pinned.stderr).toBe('');
    expect(pinned.code).toBe(0);
    for (const check of ['shape', 'kid', 'key_validity', 'signature', 'response_digest', 'request_digest']) expect(pinned.stdout).toMatch(new RegExp(`^ok\\s+${check}\\b`, 'm'));
    expect(pinned.stdout).toContain('receipt verified: search_call_consumed, 2 credits');
    const fetched = await runCli(['receipts', 'verify', files('response.json')], cliEnv());
    expect(fetched.code).toBe(0);
    expect(fetched.stdout).toContain(`keys: ${base}/.well-known/jwks.json (from the receipt's issuer`);
  });

  it.each(RECEIPT_FIELDS.map((f) => [f]))('a changed byte of %s is refused by both verifiers', async (field) => {
    const tampered = { ...saved, notary_receipt: mutateField(receipt, field) };
    const file = files(`tampered-${field}.json`);
    writeFileSync(file, JSON.stringify(tampered));
    const py = await runPythonVerifier(['verify', '--server', base, '--response', file]);
    expect(py.code, py.stdout).toBe(1);
    expect(py.stdout).toMatch(/^FAIL/m);
    const cli = await runCli(['receipts', 'verify', file, '--jwks', files('jwks.json')], cliEnv());
    expect(cli.code, cli.stdout).toBe(1);
    expect(cli.stderr).toMatch(/receipt does not verify: .*\[receipt_verification_failed\]/);
  });

  it('a changed byte of the saved response body is refused by both verifiers', async () => {
    const text = readFileSync(files('response.json'), 'utf8');
    const title = (saved['results'] as Array<{ title: string }>)[0]?.title ?? '';
    const changedTitle = title.slice(0, -1) + (title.endsWith('X') ? 'Y' : 'X');
    const file = files('tampered-body.json');
    writeFileSync(file, text.replace(JSON.stringify(title), JSON.stringify(changedTitle)));
    expect(readFileSync(file, 'utf8')).not.toBe(text);
    const py = await runPythonVerifier(['verify', '--server', base, '--response', file]);
    expect(py.code).toBe(1);
    expect(py.stdout).toMatch(/^FAIL\s+response_digest/m);
    const cli = await runCli(['receipts', 'verify', file, '--jwks', files('jwks.json')], cliEnv());
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(/^FAIL\s+response_digest/m);
  });

  it('a changed request salt fails request_digest in both verifiers', async () => {
    const salt = String(saved['notary_request_salt']);
    const file = files('tampered-salt.json');
    writeFileSync(file, JSON.stringify({ ...saved, notary_request_salt: `${salt.slice(0, 10)}${salt[10] === 'A' ? 'B' : 'A'}${salt.slice(11)}` }));
    const py = await runPythonVerifier(['verify', '--server', base, '--response', file, '--request', files('request.bin')]);
    expect(py.code).toBe(1);
    expect(py.stdout).toMatch(/^FAIL\s+request_digest/m);
    const cli = await runCli(['receipts', 'verify', file, '--jwks', files('jwks.json'), '--request', files('request.bin')], cliEnv());
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(/^FAIL\s+request_digest/m);
  });

  it('a flipped bit of the signature is refused by both verifiers', async () => {
    const sig = Buffer.from(receipt.signature.slice('ed25519:'.length), 'base64url');
    sig[5] = (sig[5] ?? 0) ^ 0x01;
    const file = files('tampered-signature-bit.json');
    writeFileSync(file, JSON.stringify({ ...saved, notary_receipt: { ...receipt, signature: `ed25519:${sig.toString('base64url')}` } }));
    expect((await runPythonVerifier(['verify', '--server', base, '--response', file])).code).toBe(1);
    expect((await runCli(['receipts', 'verify', file, '--jwks', files('jwks.json')], cliEnv())).code).toBe(1);
  });

  it('bad X-Notary-Sign values are a 400 problem with its own code; nothing is charged or logged', async () => {
    const before = await runtime.accounts.balance(tenantId);
    const receipts = await runtime.service(signedReceipts);
    const logSize = await receipts.log.treeSize();
    for (const value of ['yes', 'true', 'optional', 'required, required']) {
      const res = await search(requestBody, { 'X-Notary-Sign': value });
      expect(res.status, value).toBe(400);
      expect(res.json['code']).toBe('invalid_notary_sign');
    }
    expect(await runtime.accounts.balance(tenantId)).toBe(before);
    expect(await receipts.log.treeSize()).toBe(logSize);
    const plain = await search(requestBody);
    expect(plain.status).toBe(200);
    expect(plain.json['notary_receipt']).toBeUndefined();
    expect(plain.json['facts']).toBeUndefined();
    expect(await receipts.log.treeSize()).toBe(logSize);
  });

  it('an extraction with X-Notary-Sign gets an extract_call_consumed receipt both verifiers accept', async () => {
    const body = JSON.stringify({ url: `${upstream.origin}/article`, mode: 'excerpt' });
    const res = await fetch(`${base}/v1/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'X-Notary-Sign': 'required' },
      body,
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const extracted = JSON.parse(text) as { notary_receipt: NotaryReceipt; credits_used: number; content: string };
    expect(extracted.notary_receipt).toMatchObject({ claim: 'extract_call_consumed', credits: 1 });
    expect(extracted.credits_used).toBe(1);
    writeFileSync(files('extract.json'), text);
    writeFileSync(files('extract-request.bin'), body);
    const py = await runPythonVerifier(['verify', '--server', base, '--response', files('extract.json'), '--request', files('extract-request.bin')]);
    expect(py.code, py.stdout + py.stderr).toBe(0);
    const cli = await runCli(['receipts', 'verify', files('extract.json'), '--jwks', files('jwks.json'), '--request', files('extract-request.bin')], cliEnv());
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    expect(cli.stdout).toContain('receipt verified: extract_call_consumed, 1 credits');
  });

  it('a key file that turns unsafe while serving stops signing: 503, nothing charged or logged; unsigned calls go on', async () => {
    const file = path.join(dir, 'receipt-keys.json');
    const before = await runtime.accounts.balance(tenantId);
    const receipts = await runtime.service(signedReceipts);
    const logSize = await receipts.log.treeSize();
    chmodSync(file, 0o644);
    try {
      const refused = await search(requestBody, { 'X-Notary-Sign': 'required' });
      expect(refused.status).toBe(503);
      expect(refused.json['code']).toBe('receipt_key_insecure');
      expect(await runtime.accounts.balance(tenantId)).toBe(before);
      expect(await receipts.log.treeSize()).toBe(logSize);
      expect((await search(requestBody)).status).toBe(200);
    } finally {
      chmodSync(file, 0o600);
    }
    expect((await search(requestBody, { 'X-Notary-Sign': 'required' })).status).toBe(200);
  });

  it('after rotate-key: old receipts still verify against the published JWKS, new ones carry the new kid, an unknown kid fails', async () => {
    const rotated = await runCli(['receipts', 'rotate-key'], cliEnv());
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain(`retired ${receipt.kid}`);
    expect(statSync(path.join(dir, 'receipt-keys.json')).mode & 0o777).toBe(0o600);
    const res = await search('{"query":"analyze statistics","depth":1}', { 'X-Notary-Sign': 'required' });
    const fresh = res.json['notary_receipt'] as NotaryReceipt;
    expect(fresh.kid).not.toBe(receipt.kid);
    writeFileSync(files('response-2.json'), res.text);
    const jwks = JSON.parse(await (await fetch(`${base}/.well-known/jwks.json`)).text()) as { keys: Array<{ kid: string; exp?: number }> };
    expect(jwks.keys.map((k) => k.kid)).toEqual([receipt.kid, fresh.kid]);
    expect(jwks.keys[0]?.exp).toBeTypeOf('number');
    writeFileSync(files('jwks-2.json'), JSON.stringify(jwks));
    for (const file of ['response.json', 'response-2.json']) {
      const py = await runPythonVerifier(['verify', '--server', base, '--response', files(file), '--previous-checkpoint', files('checkpoint-1.txt')]);
      expect(py.code, py.stdout).toBe(0);
      const cli = await runCli(['receipts', 'verify', files(file), '--jwks', `${base}/.well-known/jwks.json`], cliEnv());
      expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    }
    // Only the key set before rotation: the new receipt's kid is unknown to it.
    const unknown = await runCli(['receipts', 'verify', files('response-2.json'), '--jwks', files('jwks.json')], cliEnv());
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toMatch(/^FAIL\s+kid\s+kid \S+ is not in the key set/m);
    const pyUnknown = await runPythonVerifier(['verify', '--server', base, '--response', files('response-2.json'), '--jwks', files('jwks.json')]);
    expect(pyUnknown.code).toBe(1);
    expect(pyUnknown.stdout).toMatch(/^FAIL\s+kid/m);
  });

  it('notary receipts audit verifies saved checkpoints, proofs and receipts offline, and catches a forged checkpoint', async () => {
    const checkpoint = await (await fetch(`${base}/v1/receipts/log/checkpoint`)).text();
    writeFileSync(files('checkpoint-2.txt'), checkpoint);
    const size = Number(checkpoint.split('\n')[1]);
    const first = Number(readFileSync(files('checkpoint-1.txt'), 'utf8').split('\n')[1]);
    writeFileSync(files('consistency.json'), await (await fetch(`${base}/v1/receipts/log/consistency?first=${first}&second=${size}`)).text());
    const proofs: string[] = [];
    for (const [i, file] of ['response.json', 'response-2.json'].entries()) {
      const r = (JSON.parse(readFileSync(files(file), 'utf8')) as { notary_receipt: NotaryReceipt }).notary_receipt;
      const leaf = Buffer.from(
        await crypto.subtle.digest('SHA-256', Buffer.concat([Buffer.from([0]), Buffer.from(canonicalJson(r))])),
      ).toString('base64');
      const res = await fetch(`${base}/v1/receipts/log/inclusion?leaf_hash=${encodeURIComponent(leaf)}&tree_size=${size}`);
      expect(res.headers.get('cache-control')).toContain('immutable');
      writeFileSync(files(`inclusion-${i}.json`), await res.text());
      proofs.push(files(`inclusion-${i}.json`));
    }
    const inputs = [files('checkpoint-1.txt'), files('checkpoint-2.txt'), files('consistency.json'), files('response.json'), files('response-2.json'), ...proofs];
    const audit = await runCli(['receipts', 'audit', ...inputs, '--jwks', files('jwks-2.json')], cliEnv());
    expect(audit.stderr).toBe('');
    expect(audit.code).toBe(0);
    expect(audit.stdout).toContain('audit passed: 2 checkpoint(s), 2 receipt(s)');

    // A checkpoint with its signature changed in one bit.
    const sigStart = checkpoint.lastIndexOf(' ') + 1;
    const sig = Buffer.from(checkpoint.slice(sigStart, -1), 'base64');
    sig[20] = (sig[20] ?? 0) ^ 1;
    writeFileSync(files('checkpoint-forged.txt'), `${checkpoint.slice(0, sigStart)}${sig.toString('base64')}\n`);
    const forged = await runCli(['receipts', 'audit', files('checkpoint-1.txt'), files('checkpoint-forged.txt'), files('consistency.json'), '--jwks', files('jwks-2.json')], cliEnv());
    expect(forged.code).toBe(1);
    expect(forged.stdout).toMatch(/^FAIL\s+checkpoint\s+.*does not verify/m);
    // A consistency proof that does not connect the two checkpoints (the log was rewritten).
    const bad = JSON.parse(readFileSync(files('consistency.json'), 'utf8')) as { hashes: string[] };
    bad.hashes[0] = Buffer.alloc(32, 7).toString('base64');
    writeFileSync(files('consistency-bad.json'), JSON.stringify(bad));
    const rewritten = await runCli(['receipts', 'audit', files('checkpoint-1.txt'), files('checkpoint-2.txt'), files('consistency-bad.json'), '--jwks', files('jwks-2.json')], cliEnv());
    expect(rewritten.code).toBe(1);
    expect(rewritten.stdout).toMatch(/does not extend the one of size/);
    const local = await runCli(['receipts', 'audit', '--local'], cliEnv());
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toMatch(/ok\s+local log\s+\d+ receipts re-hashed/);
  });

  it('serves the public endpoints with caching headers and clear errors', async () => {
    const jwks = await fetch(`${base}/.well-known/jwks.json`);
    expect(jwks.headers.get('content-type')).toContain('application/jwk-set+json');
    expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    const cp = await fetch(`${base}/v1/receipts/log/checkpoint`);
    expect(cp.headers.get('content-type')).toContain('text/plain');
    const info = (await (await fetch(`${base}/v1/receipts/log`)).json()) as { verifier_keys: string[]; origin: string };
    expect(info.origin).toBe(`127.0.0.1:${new URL(base).port}/receipt-log`);
    expect(info.verifier_keys).toHaveLength(2);
    const tooBig = await fetch(`${base}/v1/receipts/log/consistency?first=1&second=99999`);
    expect(tooBig.status).toBe(404);
    expect(((await tooBig.json()) as { code: string }).code).toBe('tree_size_out_of_range');
    const unknown = await fetch(`${base}/v1/receipts/log/inclusion?leaf_hash=${'00'.repeat(32)}&tree_size=1`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('receipt_not_found');
    const byRequest = await fetch(`${base}/v1/receipts/log/inclusion?request_id=${receipt.request_id}`);
    expect(byRequest.status).toBe(200);
    expect(((await byRequest.json()) as { checkpoint: string }).checkpoint).toContain('\n\n\u2014 ');
    const entries = (await (await fetch(`${base}/v1/receipts/log/entries?start=0&end=10`)).json()) as { entries: Array<{ receipt: NotaryReceipt }> };
    expect(entries.entries.map((e) => e.receipt.request_id)).toContain(receipt.request_id);
    const malformed = await fetch(`${base}/v1/receipts/log/inclusion?leaf_hash=nope&tree_size=1`);
    expect(malformed.status).toBe(400);
    // The entries range is a slice (what the OpenAPI document can say): reversed or past the log is empty, not refused;
    // a range longer than 1,000 gets its first 1,000.
    for (const query of ['start=5&end=1', 'start=0&end=0', 'start=999999&end=1000001']) {
      const slice = await fetch(`${base}/v1/receipts/log/entries?${query}`);
      expect(slice.status, query).toBe(200);
      expect(((await slice.json()) as { entries: unknown[] }).entries, query).toEqual([]);
    }
    const long = await fetch(`${base}/v1/receipts/log/entries?start=0&end=5000`);
    expect(long.status).toBe(200);
    expect(((await long.json()) as { entries: unknown[] }).entries.length).toBeGreaterThan(0);
    // What the document refuses, the server refuses: a tree size of 0, and an inclusion proof named twice or not at all.
    expect((await fetch(`${base}/v1/receipts/log/consistency?first=0&second=1`)).status).toBe(400);
    expect((await fetch(`${base}/v1/receipts/log/inclusion?tree_size=1`)).status).toBe(400);
    expect((await fetch(`${base}/v1/receipts/log/inclusion?leaf_index=0&request_id=${receipt.request_id}`)).status).toBe(400);
  });
});

describe('spec/vectors checked by the independent Python implementation', () => {
  it('every vector holds with cryptography + rfc8785', async () => {
    const out = await runPythonVerifier(['vectors', 'spec/vectors']);
    expect(out.stdout).toContain('ok: spec/vectors checked with cryptography + rfc8785 (0 failures)');
    expect(out.code).toBe(0);
  });
});
