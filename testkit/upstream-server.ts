import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface TestServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  port: number;
  /** Requests seen, as "METHOD path host". */
  hits: string[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 routing by path; unknown paths answer 404. */
export async function startTestServer(routes: Record<string, Handler>): Promise<TestServer> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    hits.push(`${req.method ?? 'GET'} ${req.url ?? '/'} ${req.headers.host ?? ''}`);
    const handler = routes[path];
    if (handler) handler(req, res);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function html(body: string, contentType = 'text/html; charset=utf-8'): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': contentType });
    res.end(body);
  };
}
