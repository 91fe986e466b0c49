import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.xhtml': 'application/xhtml+xml; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
};

export function contentTypeFor(file: string): string {
  return contentTypes[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export interface ServedRequest {
  /** Path and query as requested. */
  path: string;
  status: number;
  headers: IncomingHttpHeaders;
}

export interface StaticServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
  /** Every request's path and query, in arrival order. */
  requests: string[];
  /** Every request with its answer status and request headers. */
  log: ServedRequest[];
}

function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => bare(tag) === bare(etag));
}

/**
 * A small static file server on 127.0.0.1 for tests and benchmarks: content types by extension, directory index.html,
 * ETag/Last-Modified validators with 304 answers (when `etag` is not false), GET and HEAD only.
 */
export async function serveDirectory(dir: string, options: { port?: number; etag?: boolean } = {}): Promise<StaticServer> {
  const root = path.resolve(dir);
  const withValidators = options.etag !== false;
  const requests: string[] = [];
  const log: ServedRequest[] = [];

  const server = createServer((req, res) => {
    const target = req.url ?? '/';
    requests.push(target);
    const entry: ServedRequest = { path: target, status: 0, headers: req.headers };
    log.push(entry);
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      entry.status = status;
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, 'method not allowed');
      return;
    }
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(target, 'http://127.0.0.1').pathname);
    } catch {
      send(400, 'bad request');
      return;
    }
    let file = path.join(root, pathname);
    if (file !== root && !file.startsWith(root + path.sep)) {
      send(403, 'forbidden');
      return;
    }
    void (async () => {
      let info = await stat(file).catch(() => null);
      if (info?.isDirectory()) {
        file = path.join(file, 'index.html');
        info = await stat(file).catch(() => null);
      }
      if (!info?.isFile()) {
        send(404, 'not found');
        return;
      }
      const headers: Record<string, string | number> = {
        'content-type': contentTypeFor(file),
        'content-length': info.size,
      };
      if (withValidators) {
        const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
        const lastModified = new Date(Math.floor(info.mtimeMs / 1000) * 1000).toUTCString();
        headers['etag'] = etag;
        headers['last-modified'] = lastModified;
        const ifNoneMatch = req.headers['if-none-match'];
        const ifModifiedSince = req.headers['if-modified-since'];
        const notModified = ifNoneMatch
          ? etagMatches(ifNoneMatch, etag)
          : ifModifiedSince !== undefined && Date.parse(ifModifiedSince) >= Date.parse(lastModified);
        if (notModified) {
          entry.status = 304;
          res.writeHead(304, { etag, 'last-modified': lastModified });
          res.end();
          return;
        }
      }
      entry.status = 200;
      res.writeHead(200, headers);
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      createReadStream(file)
        .on('error', () => res.destroy())
        .pipe(res);
    })().catch(() => {
      if (!res.headersSent) send(500, 'internal error');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    log,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
