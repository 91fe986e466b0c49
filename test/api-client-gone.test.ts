import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTestConfig, startApi, type ApiHarness } from './support/app.js';
import { startTestServer, type TestServer } from './support/upstream-server.js';

/**
 * No charge without a delivered answer: a paid call whose client can no longer receive the answer when the work
 * ends (it closed the connection, or the call was pipelined behind an answer that closes the connection) is released,
 * not settled. Raw sockets, a real server on 127.0.0.1.
 */

/** Writes `bytes`, collects what comes back until the server closes or `maxMs` passes. */
function exchange(port: number, bytes: string | Buffer, maxMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(done, maxMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
    socket.on('close', done);
    socket.on('error', done);
  });
}

/** Sends `bytes` and closes the connection after `afterMs`, whatever came back. */
function sendAndHangUp(port: number, bytes: string, afterMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
    socket.on('error', () => undefined);
    setTimeout(() => {
      socket.destroy();
      resolve(text);
    }, afterMs);
  });
}

const request = (method: string, url: string, headers: string[], body = ''): string =>
  [`${method} ${url} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');

describe('no charge without a delivered answer', () => {
  let dir: string;
  let api: ApiHarness;
  let port: number;
  let upstream: TestServer;
  let pageRequests = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-client-gone-'));
    upstream = await startTestServer({
      // A page that takes 1.5 s: the client gives up before.
      '/slow': (_req, res) => {
        pageRequests += 1;
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(`<!doctype html><html><head><title>Slow page</title></head><body><article><h1>Slow page</h1><p>${'Words that make a page worth extracting, written slowly. '.repeat(6)}</p></article></body></html>`);
        }, 1500);
      },
    });
    api = await startApi(
      apiTestConfig(dir, {
        server: { body_limit_bytes: 1024 },
        extract: { allow_private_networks: true, respect_robots_txt: false },
        pricing: { extract: { credits: 1, credits_rendered: 2 } },
        default_tier: 'bulk',
      }),
      { withExtract: true },
    );
    const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
    port = Number(new URL(address).port);
  });
  afterAll(async () => {
    await api?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const tenantWithKey = async (name: string) => {
    const tenant = await api.runtime.accounts.createTenant(name, { credits: 100, tier: 'bulk' });
    return { tenantId: tenant.id, key: (await api.runtime.accounts.createKey(tenant.id)).key };
  };

  it('a search pipelined behind a 413 that closes the connection is not charged', async () => {
    const { tenantId, key } = await tenantWithKey('pipelined');
    const auth = [`Authorization: Bearer ${key}`, 'Content-Type: application/json'];
    const tooLarge = request('POST', '/v1/search', auth, `{"query":"${'x'.repeat(2000)}","depth":1}`);
    const search = request('POST', '/v1/search', auth, '{"query":"vacuum","depth":1}');
    const text = await exchange(port, tooLarge + search);
    expect(text.split('\r\n')[0]).toMatch(/ 413 /);
    // The 413 closes the connection: the search behind it can never be answered on it.
    expect(text).not.toMatch(/HTTP\/1\.1 200/);
    await new Promise((r) => setTimeout(r, 500));
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('an extraction whose client hung up before the page arrived is not charged', async () => {
    const { tenantId, key } = await tenantWithKey('abandoned');
    const before = pageRequests;
    const body = JSON.stringify({ url: `${upstream.origin}/slow`, mode: 'excerpt' });
    const text = await sendAndHangUp(port, request('POST', '/v1/extract', [`Authorization: Bearer ${key}`, 'Content-Type: application/json'], body), 500);
    expect(text).toBe('');
    // The work went on (the page was fetched) and ended after the client was gone.
    await new Promise((r) => setTimeout(r, 2500));
    expect(pageRequests).toBe(before + 1);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('the same extraction with the client still there is charged once and answered', async () => {
    const { tenantId, key } = await tenantWithKey('patient');
    const body = JSON.stringify({ url: `${upstream.origin}/slow?patient=1`, mode: 'excerpt' });
    const text = await exchange(port, request('POST', '/v1/extract', [`Authorization: Bearer ${key}`, 'Content-Type: application/json', 'Connection: close'], body), 8000);
    expect(text, text).toMatch(/^HTTP\/1.1 200 /);
    expect(text).toMatch(/"credits_used":1/);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(99);
  });
});
