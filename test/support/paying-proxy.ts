import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { x402Client } from '@x402/core/client';
import { authorizationHeader, buildEnvelope, type PartySigner } from '../../payments/modes/mpp/envelope.js';
import { signPayment } from '../../testkit/x402.js';

/**
 * A proxy on 127.0.0.1 in front of `notary serve` that pays for the requests an outside tool sends it, so that a tool
 * which cannot sign (Schemathesis) drives the pay-per-call modes. A request carrying the mode's marker credential
 * (`markerHeader: markerValue`, the tool's `--header`) has the marker replaced by a real one made for that exact
 * request: an MPP envelope over its method, path and body bytes, or an x402 PAYMENT-SIGNATURE for the challenge the
 * server answers it unpaid. Any other request (no marker, or the tool's own invalid credentials) passes untouched, so
 * the tool's authentication probes still see what the server says to them. Requests and responses are forwarded byte
 * for byte (raw header order and duplicates kept), except the marker header.
 */

export interface Forwarded {
  status: number;
  statusMessage: string;
  rawHeaders: string[];
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface ProxiedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  body: Buffer;
}

/** Makes the request's credential; `forward` sends it upstream (without the marker) with extra headers. */
export type Payer = (request: ProxiedRequest, forward: (extra: Record<string, string>) => Promise<Forwarded>) => Promise<Forwarded>;

export interface PayingProxyStats {
  /** Requests that carried the marker. */
  marked: number;
  /** Marked requests sent upstream with a credential made for them. */
  paid: number;
  /** Marked requests answered 200 with `credits_used`: paid calls served and charged in the mode. */
  charged: number;
  /** Statuses of the answers to marked requests (after payment), e.g. {"200": 31, "400": 12}. */
  statuses: Record<string, number>;
  /** The first answer of each status other than 200 to a marked request: method, path, header names, the body's start. */
  samples: Record<string, string>;
  /** Failures of the proxy itself (signing, upstream unreachable): each is answered 599 so the tool reports it. */
  errors: string[];
}

export interface PayingProxy {
  url: string;
  stats: PayingProxyStats;
  close(): Promise<void>;
}

const UPSTREAM_TIMEOUT_MS = 60_000;

function forwardTo(upstream: URL, method: string, url: string, rawHeaders: string[], body: Buffer, drop: readonly string[], extra: Record<string, string>): Promise<Forwarded> {
  const headers: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    if (drop.includes(name.toLowerCase()) || name.toLowerCase() in extra) continue;
    headers.push(name, rawHeaders[i + 1] ?? '');
  }
  for (const [name, value] of Object.entries(extra)) headers.push(name, value);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: upstream.hostname, port: upstream.port, method, path: url, headers, timeout: UPSTREAM_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusMessage: res.statusMessage ?? '', rawHeaders: res.rawHeaders, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${upstream.origin} within ${UPSTREAM_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function chargedCall(body: Buffer): boolean {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as Record<string, unknown>)['credits_used'] === 'number';
  } catch {
    return false;
  }
}

export async function startPayingProxy(options: {
  upstream: string;
  markerHeader: string;
  markerValue: string;
  pay: Payer;
  /** Headers the tool adds to marked requests that the mode's payer never sends (dropped along with the marker). */
  alsoDrop?: readonly string[];
}): Promise<PayingProxy> {
  const upstream = new URL(options.upstream);
  const marker = options.markerHeader.toLowerCase();
  const dropped = [marker, ...(options.alsoDrop ?? []).map((h) => h.toLowerCase())];
  const stats: PayingProxyStats = { marked: 0, paid: 0, charged: 0, statuses: {}, samples: {}, errors: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      const marked = req.headers[marker] === options.markerValue;
      const forward = (extra: Record<string, string>): Promise<Forwarded> => forwardTo(upstream, method, url, req.rawHeaders, body, marked ? dropped : [], extra);
      let answer: Promise<Forwarded>;
      if (marked) {
        stats.marked++;
        answer = options.pay({ method, url, body }, (extra) => {
          if (Object.keys(extra).length > 0) stats.paid++;
          return forward(extra);
        });
      } else {
        answer = forward({});
      }
      answer.then(
        (out) => {
          if (marked) {
            const status = String(out.status);
            stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
            if (out.status === 200 && chargedCall(out.body)) stats.charged++;
            if (out.status !== 200) stats.samples[status] ??= `${method} ${url.split('?')[0] ?? ''} (${Object.keys(req.headers).join(' ')}): ${out.body.subarray(0, 240).toString('utf8')}`;
          }
          // Hop-by-hop framing is the proxy's own: the body is sent whole with its length.
          const headers: string[] = [];
          for (let i = 0; i + 1 < out.rawHeaders.length; i += 2) {
            const name = (out.rawHeaders[i] ?? '').toLowerCase();
            if (name === 'transfer-encoding' || name === 'content-length') continue;
            headers.push(out.rawHeaders[i] ?? '', out.rawHeaders[i + 1] ?? '');
          }
          headers.push('Content-Length', String(out.body.length));
          res.writeHead(out.status, out.statusMessage, headers);
          res.end(out.body);
        },
        (err: unknown) => {
          stats.errors.push(`${method} ${url}: ${err instanceof Error ? err.message : String(err)}`);
          res.writeHead(599, { 'content-type': 'text/plain' });
          res.end(`paying proxy: ${String(err)}`);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** MPP: an envelope signed by every party for the request's method, URL and exact body, at most `totalCredits`. */
export function mppPayer(options: { upstream: string; parties: readonly PartySigner[]; totalCredits: number }): Payer {
  return (request, forward) => {
    const { encoded } = buildEnvelope({
      method: request.method,
      url: new URL(request.url, options.upstream).toString(),
      body: new Uint8Array(request.body),
      totalCredits: options.totalCredits,
      parties: options.parties,
    });
    return forward({ authorization: authorizationHeader(encoded) });
  };
}

/**
 * x402: the request is sent unpaid; a 402 with PAYMENT-REQUIRED is paid by `client` (an EIP-3009 authorization for
 * exactly that challenge) and the request sent again with PAYMENT-SIGNATURE. Any other answer is the answer.
 */
export function x402Payer(client: x402Client): Payer {
  return async (_request, forward) => {
    const unpaid = await forward({});
    const required = unpaid.headers['payment-required'];
    if (unpaid.status !== 402 || typeof required !== 'string') return unpaid;
    const { header } = await signPayment(client, decodePaymentRequiredHeader(required));
    return forward({ 'payment-signature': header });
  };
}
