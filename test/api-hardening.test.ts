import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import type { TestServer } from '../testkit/upstream-server.js';
import { startListeningApi, type ListeningApi } from './support/listening-api.js';

/** Raw bytes to a real socket; resolves with everything the server wrote once it closes (or after `maxMs`). */
function rawExchange(port: number, chunks: Array<string | Buffer>, maxMs = 8000): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), maxMs);
    socket.on('connect', () => {
      for (const chunk of chunks) socket.write(chunk);
    });
    socket.on('data', (data) => received.push(data));
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (received.length > 0) resolve({ text: Buffer.concat(received).toString('utf8'), ms: Date.now() - started });
      else reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(received).toString('utf8'), ms: Date.now() - started });
    });
  });
}

function parseRaw(text: string): { status: number; headers: Record<string, string[]>; body: Record<string, unknown> } {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string[]> = {};
  for (const line of headerLines) {
    const at = line.indexOf(':');
    (headers[line.slice(0, at).toLowerCase()] ??= []).push(line.slice(at + 1).trim());
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n') || '{}') as Record<string, unknown> };
}

function expectRawProblem(text: string, status: number, code: string): void {
  const res = parseRaw(text);
  expect(res.status, text).toBe(status);
  expect(res.headers['content-type']?.[0]).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
  expect(res.body['request_id']).toMatch(/^req_/);
}

describe('bad input found by fuzzing the service: each a clear 4xx problem, nothing charged', () => {
  let served: ListeningApi;
  let api: ApiHarness;
  let port: number;
  let upstream: TestServer;
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    served = await startListeningApi(
      'hardening',
      {
        '/article': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(
            `<!doctype html><html><head><title>Static page</title></head><body><article><h1>Static page</h1><p>${'A plain page that needs no browser to read, with enough words in it to count as main content. '.repeat(4)}</p></article></body></html>`,
          );
        },
      },
      { server: { body_timeout_ms: 500, headers_timeout_ms: 3000, max_header_bytes: 16 * 1024 } },
    );
    ({ api, port, upstream } = served);
    ({ tenantId, key } = await served.tenantWithKey('fuzzed'));
  });
  afterAll(async () => {
    await served?.close();
  });

  const searchRequest = (headers: string[], body: string | Buffer, contentLength = Buffer.byteLength(body)): Array<string | Buffer> => [
    ['POST /v1/search HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', `Content-Length: ${contentLength}`, ...headers, '', ''].join('\r\n'),
    body,
  ];

  it('a body shorter than its Content-Length gets a 408 problem after body_timeout_ms, not a connection held for minutes', async () => {
    const { text, ms } = await rawExchange(port, searchRequest([`Authorization: Bearer ${key}`], '{"query":"vac', 200));
    expectRawProblem(text, 408, 'request_timeout');
    expect(parseRaw(text).headers['connection']?.[0]).toBe('close');
    expect(ms).toBeLessThan(5000);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('a 20 KB header gets a 431 problem, a NUL or a CR in a header value a 400 problem', async () => {
    const body = '{"query":"vacuum","depth":1}';
    expectRawProblem((await rawExchange(port, searchRequest([`X-Big: ${'a'.repeat(20_000)}`], body))).text, 431, 'header_too_large');
    expectRawProblem((await rawExchange(port, searchRequest([`Authorization: Bearer ${key}`, 'X-Note: a\u0000b'], body))).text, 400, 'invalid_header');
    expectRawProblem((await rawExchange(port, searchRequest([`Authorization: Bearer ${key}`, 'X-Request-Id: abc\rdef1234'], body))).text, 400, 'invalid_header');
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('two Authorization headers are refused with 400 duplicate_header, even when both hold valid keys', async () => {
    const { text } = await rawExchange(port, searchRequest([`Authorization: Bearer ${key}`, `Authorization: Bearer ${key}`, 'Connection: close'], '{"query":"vacuum","depth":1}'));
    expectRawProblem(text, 400, 'duplicate_header');
    expect(parseRaw(text).body['detail']).toMatch(/Authorization header was sent 2 times/);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('queries that are empty in effect get 400 and are not charged', async () => {
    const cases: Array<[string, Buffer]> = [
      ['NUL', Buffer.from('{"query":"\\u0000","depth":1}')],
      ['lone surrogate', Buffer.from('{"query":"\\ud800","depth":1}')],
      ['invalid UTF-8', Buffer.concat([Buffer.from('{"query":"'), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from('","depth":1}')])],
      ['zero-width only', Buffer.from('{"query":"\u200B\u200C\u2060\uFEFF","depth":1}')],
      ['a lone quote', Buffer.from('{"query":"\\"","depth":1}')],
    ];
    const searchesBefore = api.search.calls.length;
    for (const [name, body] of cases) {
      const { text } = await rawExchange(port, searchRequest([`Authorization: Bearer ${key}`, 'Connection: close'], body));
      const res = parseRaw(text);
      expect(res.status, `${name}: ${text}`).toBe(400);
      expect(['invalid_request', 'invalid_json'], name).toContain(res.body['code']);
    }
    expect(api.search.calls.length).toBe(searchesBefore);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('a tenant with 1 credit can buy a static extraction: the pre-check uses the price it will be charged', async () => {
    const poor = await api.runtime.accounts.createTenant('one-credit', { credits: 1, tier: 'bulk' });
    const poorKey = (await api.runtime.accounts.createKey(poor.id)).key;
    const extract = (body: unknown) =>
      api.app.inject({ method: 'POST', url: '/v1/extract', headers: { authorization: `Bearer ${poorKey}` }, payload: body as object });
    const rendered = await extract({ url: `${upstream.origin}/article`, mode: 'text', render: 'always' });
    expect(rendered.statusCode).toBe(402);
    expect(rendered.json()).toMatchObject({ code: 'insufficient_credits', required_credits: 2, available_credits: 1 });
    const auto = await extract({ url: `${upstream.origin}/article`, mode: 'text' });
    expect(auto.statusCode, auto.body).toBe(200);
    expect(auto.json()).toMatchObject({ credits_used: 1, title: 'Static page' });
    expect(await api.runtime.accounts.balance(poor.id)).toBe(0);
  });
});

describe('HTTP edges: every answer a problem with a body, every limit as documented', () => {
  let dir: string;
  let api: ApiHarness;
  let port: number;
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-edges-'));
    api = await startApi(apiTestConfig(dir, { server: { body_timeout_ms: 1000, headers_timeout_ms: 1500 }, default_tier: 'bulk' }));
    const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
    port = Number(new URL(address).port);
    const tenant = await api.runtime.accounts.createTenant('edges', { credits: 100, tier: 'bulk' });
    tenantId = tenant.id;
    key = (await api.runtime.accounts.createKey(tenant.id)).key;
  });
  afterAll(async () => {
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const body = '{"query":"vacuum","depth":1}';
  const head = (lines: string[], length = Buffer.byteLength(body)) => [...lines, `Content-Length: ${length}`, 'Connection: close', '', ''].join('\r\n');

  it('half-sent headers get a 408 problem within headers_timeout_ms (plus a second), not Node\'s 30 s sweep', async () => {
    const { text, ms } = await rawExchange(port, ['POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl'], 10_000);
    expectRawProblem(text, 408, 'request_timeout');
    expect(ms).toBeLessThan(1500 + 1500);
  });

  it('an HTTP/1.1 request without Host gets a 400 problem naming the header', async () => {
    const { text } = await rawExchange(port, [head(['POST /v1/search HTTP/1.1', 'Content-Type: application/json', `Authorization: Bearer ${key}`]), body]);
    expectRawProblem(text, 400, 'invalid_header');
    expect(parseRaw(text).body['detail']).toMatch(/Host/);
  });

  it('an Expect the server does not support gets a 417 problem', async () => {
    const { text } = await rawExchange(port, [head(['POST /v1/search HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Expect: 200-ok']), body]);
    expectRawProblem(text, 417, 'expectation_failed');
  });

  it('two Host or two Content-Type headers are refused with 400 duplicate_header', async () => {
    const twoHosts = await rawExchange(port, [head(['POST /v1/search HTTP/1.1', 'Host: 127.0.0.1', 'Host: evil.test', 'Content-Type: application/json', `Authorization: Bearer ${key}`]), body]);
    expectRawProblem(twoHosts.text, 400, 'duplicate_header');
    expect(parseRaw(twoHosts.text).body['detail']).toMatch(/Host header was sent 2 times/);
    const twoTypes = await rawExchange(port, [head(['POST /v1/search HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Type: text/plain', `Authorization: Bearer ${key}`]), body]);
    expectRawProblem(twoTypes.text, 400, 'duplicate_header');
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('a compressed body gets 415 naming Content-Encoding, not invalid_json', async () => {
    const gz = gzipSync(body);
    const { text } = await rawExchange(port, [head(['POST /v1/search HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Encoding: gzip', `Authorization: Bearer ${key}`], gz.length), gz]);
    expectRawProblem(text, 415, 'unsupported_media_type');
    expect(parseRaw(text).body['detail']).toMatch(/Content-Encoding/);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(100);
  });

  it('the same search with none of these faults is answered and charged once', async () => {
    const { text } = await rawExchange(port, [head(['POST /v1/search HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Encoding: identity', `Authorization: Bearer ${key}`]), body]);
    expect(parseRaw(text).status, text).toBe(200);
    expect(await api.runtime.accounts.balance(tenantId)).toBe(99);
  });
});
