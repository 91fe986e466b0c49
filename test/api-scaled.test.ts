import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiMetrics } from '../api/metrics.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-api-scaled-'));
const harnesses: ApiHarness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
  rmSync(dir, { recursive: true, force: true });
});
let counter = 0;
const METRICS_TOKEN = 'scrape-token-0123456789';

async function api(overrides: Parameters<typeof apiTestConfig>[1] = {}) {
  const config = apiTestConfig(path.join(dir, `d${counter++}`), overrides);
  const ref: { harness?: ApiHarness } = {};
  const metrics = new ApiMetrics({ pages: async () => ref.harness!.runtime.pages.counts() });
  const harness = await startApi(config, { deps: { metrics, ready: () => ref.harness!.runtime.readiness() } });
  ref.harness = harness;
  harnesses.push(harness);
  return harness;
}

describe('stateless API node: /metrics, /readyz, proxies, TLS', () => {
  it('counts requests by route, status and mode, latency, and credits charged (not replays)', async () => {
    const { app, runtime } = await api({ server: { metrics_token: METRICS_TOKEN } });
    const tenant = await runtime.accounts.createTenant('acme', { credits: 100, tier: 'bulk' });
    const { key } = await runtime.accounts.createKey(tenant.id);
    const call = (idem: string) =>
      app.inject({ method: 'POST', url: '/v1/search', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idem }, payload: { query: 'vacuum', depth: 2 } });
    expect((await call('a')).statusCode).toBe(200);
    expect((await call('a')).headers['idempotency-replayed']).toBe('true');
    expect((await call('b')).statusCode).toBe(200);
    await app.inject({ method: 'POST', url: '/v1/search', headers: { 'content-type': 'application/json' }, payload: { query: 'vacuum', depth: 1 } });
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0.0.4/);
    const text = res.body;
    expect(text).toContain('notary_http_requests_total{route="/v1/search",method="POST",status="200",mode="api_key"} 3');
    expect(text).toMatch(/notary_http_requests_total\{route="\/v1\/search",method="POST",status="401",mode="[a-z]*"\} 1/);
    expect(text).toContain('notary_credits_charged_total{route="/v1/search",mode="api_key"} 4');
    expect(text).toMatch(/notary_http_request_duration_seconds_bucket\{le="0.5",route="\/v1\/search",method="POST"\} \d+/);
    expect(text).toMatch(/notary_passages_indexed \d+/);
  });

  it('answers /readyz with each dependency', async () => {
    const { app } = await api();
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: true, index: true, stores: true } });
  });

  it('answers /readyz 503 naming Redis when the shared store is unreachable', async () => {
    const { app } = await api({ stores: { backend: 'redis', redis_url: 'redis://127.0.0.1:9' } });
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'unavailable', checks: { database: true, stores: false } });
  });

  it('believes X-Forwarded-For only from a trusted proxy (rate limits per real client)', async () => {
    const untrusted = await api({ tiers: { free: { requests_per_minute: 1, burst: 1 } } });
    const trusted = await api({ tiers: { free: { requests_per_minute: 1, burst: 1 } }, server: { trusted_proxies: ['127.0.0.1'] } });
    const anonymous = (app: ApiHarness['app'], forwarded: string) =>
      app.inject({ method: 'POST', url: '/v1/search', remoteAddress: '127.0.0.1', headers: { 'content-type': 'application/json', 'x-forwarded-for': forwarded }, payload: { query: 'vacuum', depth: 1 } });
    // Untrusted: both calls come from the proxy's address, so the second is limited.
    expect((await anonymous(untrusted.app, '203.0.113.1')).statusCode).toBe(401);
    expect((await anonymous(untrusted.app, '203.0.113.2')).statusCode).toBe(429);
    // Trusted: two clients, two limits.
    expect((await anonymous(trusted.app, '203.0.113.1')).statusCode).toBe(401);
    expect((await anonymous(trusted.app, '203.0.113.2')).statusCode).toBe(401);
    expect((await anonymous(trusted.app, '203.0.113.1')).statusCode).toBe(429);
  });

  it('serves HTTPS with HTTP/2 (and HTTP/1.1) from a certificate and key', async () => {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const { app } = await api({ server: { tls: { cert_file: cert, key_file: key } } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const session = connect(`https://127.0.0.1:${port}`, { ca: readFileSync(cert) });
    const body = await new Promise<string>((resolve, reject) => {
      const stream = session.request({ ':path': '/readyz' });
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString()));
      stream.on('end', () => resolve(data));
      stream.on('error', reject);
    });
    session.close();
    expect(JSON.parse(body)).toMatchObject({ status: 'ready' });
    const https = await import('node:https');
    const status = await new Promise<number>((resolve, reject) => {
      https.get({ host: '127.0.0.1', port, path: '/readyz', ca: readFileSync(cert) }, (res) => resolve(res.statusCode ?? 0)).on('error', reject);
    });
    expect(status).toBe(200);
  });
});
