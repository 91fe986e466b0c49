import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect as http2Connect } from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';

/** A self-signed certificate for 127.0.0.1, made for the test with openssl; returns its PEM files' contents. */
function makeCertificate(dir: string, name: string): { cert: string; key: string; fingerprint: string } {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${name}`, '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const pem = readFileSync(cert, 'utf8');
  return { cert: pem, key: readFileSync(key, 'utf8'), fingerprint: new X509Certificate(pem).fingerprint256 };
}

/** A search over HTTPS/1.1 trusting `ca`; resolves with the status, body and the certificate the server showed. */
function searchOverTls(port: number, ca: string, apiKey: string): Promise<{ status: number; body: Record<string, unknown>; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify({ query: 'vacuum tables', depth: 1 });
    const req = request(
      { host: '127.0.0.1', port, path: '/v1/search', method: 'POST', ca, agent: false, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? '';
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown>, fingerprint }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('HTTPS for real: search over TLS, HTTP/2, certificates renewed without a restart', () => {
  let dir: string;
  let api: ApiHarness;
  let port: number;
  let apiKey: string;
  let first: ReturnType<typeof makeCertificate>;
  const certFile = () => path.join(dir, 'live.crt');
  const keyFile = () => path.join(dir, 'live.key');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-tls-'));
    first = makeCertificate(dir, 'first');
    writeFileSync(certFile(), first.cert);
    writeFileSync(keyFile(), first.key);
    api = await startApi(apiTestConfig(dir, { server: { tls: { cert_file: certFile(), key_file: keyFile() } } }));
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const address = api.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
    const tenant = await api.runtime.accounts.createTenant('tls', { credits: 100 });
    apiKey = (await api.runtime.accounts.createKey(tenant.id)).key;
  });
  afterAll(async () => {
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a paid search over HTTPS/1.1 with the configured certificate, charging once', async () => {
    const res = await searchOverTls(port, first.cert, apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.fingerprint).toBe(first.fingerprint);
    expect(res.body['credits_used']).toBe(1);
  });

  it('answers over HTTP/2 (ALPN h2)', async () => {
    const session = http2Connect(`https://127.0.0.1:${port}`, { ca: first.cert });
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ':path': '/healthz' });
      stream.on('response', (headers) => resolve(Number(headers[':status'])));
      stream.on('error', reject);
      stream.resume();
    });
    session.close();
    expect(status).toBe(200);
  });

  it('takes a renewed certificate without a restart (files replaced by rename), and keeps the old one when the new pair is broken', async () => {
    const second = makeCertificate(dir, 'second');
    // Written beside and renamed over, as renewal tools do.
    writeFileSync(`${keyFile()}.new`, second.key);
    writeFileSync(`${certFile()}.new`, second.cert);
    renameSync(`${keyFile()}.new`, keyFile());
    renameSync(`${certFile()}.new`, certFile());
    let seen = '';
    for (let i = 0; i < 40 && seen !== second.fingerprint; i++) {
      await new Promise((r) => setTimeout(r, 250));
      seen = (await searchOverTls(port, second.cert, apiKey).catch(() => ({ fingerprint: '' }))).fingerprint;
    }
    expect(seen).toBe(second.fingerprint);
    // A half-written certificate: the server keeps serving the second one.
    writeFileSync(certFile(), '-----BEGIN CERTIFICATE-----\nnot a certificate\n');
    await new Promise((r) => setTimeout(r, 3_000));
    const after = await searchOverTls(port, second.cert, apiKey);
    expect(after.status).toBe(200);
    expect(after.fingerprint).toBe(second.fingerprint);
  });
});
