import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Meilisearch } from 'meilisearch';
import { afterEach, describe, expect, it } from 'vitest';
import { asIndexError } from './connection.js';
import { apiErrorOf, keepAliveClient } from './http-client.js';

/** A stand-in HTTP server on 127.0.0.1 speaking Meilisearch's error shape; `handle` answers each request. */
async function server(handle: (req: http.IncomingMessage, res: http.ServerResponse, nth: { onSocket: number }) => void) {
  const sockets = new Set<Socket>();
  const perSocket = new Map<Socket, number>();
  const srv = http.createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handle(Object.assign(req, { body }), res, { onSocket: n }));
  });
  srv.on('connection', (s: Socket) => sockets.add(s));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return {
    url,
    connections: () => sockets.size,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      srv.close(() => resolve());
    }),
  };
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

let closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closing) await c();
  closing = [];
});

describe('Meilisearch HTTP over kept-alive connections', () => {
  it('answers the client through one connection for requests one after another', async () => {
    const srv = await server((req, res) => json(res, 200, { hits: [{ id: 1 }], processingTimeMs: 0, query: 'q', path: req.url }));
    const http = keepAliveClient();
    closing.push(srv.close, http.close);
    const client = new Meilisearch({ host: srv.url, apiKey: 'k', httpClient: http.request });
    for (let i = 0; i < 20; i++) expect((await client.index('p').search('q')).hits).toEqual([{ id: 1 }]);
    expect(srv.connections()).toBe(1);
  });

  it("gives Meilisearch's own error (code, status, message) for an answer that is not 2xx", async () => {
    const srv = await server((_req, res) => json(res, 404, { message: 'Index `p` not found.', code: 'index_not_found', type: 'invalid_request', link: '' }));
    const http = keepAliveClient();
    closing.push(srv.close, http.close);
    const client = new Meilisearch({ host: srv.url, httpClient: http.request });
    const err = await client.index('p').getSettings().catch((e: unknown) => e);
    expect(apiErrorOf(err)?.cause?.code).toBe('index_not_found');
    expect(apiErrorOf(err)?.response.status).toBe(404);
    expect(asIndexError(err, 'reading settings').message).toBe('Meilisearch reading settings failed: Index `p` not found.');
  });

  it('sends a request again on a new connection when the kept-alive one was closed by the server', async () => {
    // The server drops every connection's second request unanswered, as one closing an idle connection does.
    const srv = await server((req, res, { onSocket }) => (onSocket > 1 ? req.socket.destroy() : json(res, 200, { hits: [], processingTimeMs: 0, query: '' })));
    const http = keepAliveClient();
    closing.push(srv.close, http.close);
    const client = new Meilisearch({ host: srv.url, httpClient: http.request });
    for (let i = 0; i < 5; i++) expect((await client.index('p').search('q')).hits).toEqual([]);
  });

  it('times out after the request timeout with the error that names it', async () => {
    const srv = await server(() => undefined); // never answers
    const http = keepAliveClient();
    closing.push(srv.close, http.close);
    const client = new Meilisearch({ host: srv.url, httpClient: http.request, timeout: 150 });
    const started = performance.now();
    const err = await client.index('p').search('q').catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(asIndexError(err, 'search').message).toMatch(/search failed: request timed out after 150ms/);
  });
});
