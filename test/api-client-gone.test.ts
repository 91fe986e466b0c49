import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHarness } from '../testkit/app.js';
import { exchange, rawRequest as request, sendAndHangUp, startListeningApi, type ListeningApi } from './support/listening-api.js';

/**
 * No charge without a delivered answer: a paid call whose client can no longer receive the answer when the work
 * ends (it closed the connection, or the call was pipelined behind an answer that closes the connection) is released,
 * not settled. Raw sockets, a real server on 127.0.0.1.
 */

describe('no charge without a delivered answer', () => {
  let served: ListeningApi;
  let api: ApiHarness;
  let port: number;
  let origin: string;
  let pageRequests = 0;

  beforeAll(async () => {
    served = await startListeningApi(
      'client-gone',
      {
        // A page that takes 1.5 s: the client gives up before.
        '/slow': (_req, res) => {
          pageRequests += 1;
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
            res.end(`<!doctype html><html><head><title>Slow page</title></head><body><article><h1>Slow page</h1><p>${'Words that make a page worth extracting, written slowly. '.repeat(6)}</p></article></body></html>`);
          }, 1500);
        },
      },
      { server: { body_limit_bytes: 1024 } },
    );
    ({ api, port } = served);
    origin = served.upstream.origin;
  });
  afterAll(async () => {
    await served?.close();
  });

  const tenantWithKey = (name: string) => served.tenantWithKey(name);

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
    const body = JSON.stringify({ url: `${origin}/slow`, mode: 'excerpt' });
    const text = await sendAndHangUp(port, request('POST', '/v1/extract', [`Authorization: Bearer ${key}`, 'Content-Type: application/json'], body), 500);
    expect(text).toBe('');
    // The work went on (the page was fetched) and ended after the client was gone.
    await new Promise((r) => setTimeout(r, 2500));
    expect(pageRequests).toBe(before + 1);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('the same extraction with the client still there is charged once and answered', async () => {
    const { tenantId, key } = await tenantWithKey('patient');
    const body = JSON.stringify({ url: `${origin}/slow?patient=1`, mode: 'excerpt' });
    const text = await exchange(port, request('POST', '/v1/extract', [`Authorization: Bearer ${key}`, 'Content-Type: application/json', 'Connection: close'], body), 8000);
    expect(text, text).toMatch(/^HTTP\/1.1 200 /);
    expect(text).toMatch(/"credits_used":1/);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(99);
  });
});
