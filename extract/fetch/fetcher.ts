import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { NotaryError, isNotaryError } from '../../core/index.js';
import { parseHttpUrl, vetUrl, type AddressPolicy, type ResolvedAddress } from './address-policy.js';

/**
 * The one fetcher: every request notary makes to a site (`/v1/extract`, the crawler's pages, robots.txt and
 * sitemaps) goes through `fetchResource`. It only fetches: bytes, status, headers and the addresses it went through.
 * What a status or a body means is for the caller.
 */
export interface FetchOptions {
  /** The identifiable User-Agent (see userAgentHeader). */
  userAgent: string;
  policy: AddressPolicy;
  /** Extra request headers (Accept, If-None-Match, ...); names in lower case. */
  headers?: Record<string, string>;
  maxRedirects?: number;
  connectTimeoutMs?: number;
  /** The whole fetch: every hop, DNS, connect and body. */
  totalTimeoutMs?: number;
  /** Cap on the body after decompression. */
  maxBytes?: number;
  /** "error" (default): a larger body fails with body_too_large; "truncate": the first maxBytes are kept. */
  overflow?: 'error' | 'truncate';
  /**
   * Called before each request, the first and every redirect target (robots.txt is checked per hop), with the
   * fetch's signal (its total deadline and the caller's signal).
   */
  beforeHop?: (url: URL, signal: AbortSignal) => Promise<void>;
  /**
   * Called when the final answer's headers arrive, before its body is read; throwing stops the download and fails
   * the fetch with that error (the crawler skips a PDF or an oversized page without downloading it).
   */
  onHeaders?: (answer: { url: string; status: number; headers: http.IncomingHttpHeaders }) => void;
  signal?: AbortSignal;
  /** Keep-alive connections per vetted address, for callers making many requests (the crawler). */
  agents?: AgentPool;
}

export interface FetchHop {
  url: string;
  status: number;
  /** The address connected to (after the policy check). */
  address: string;
}

export interface FetchResponse {
  /** The URL asked for (fragment removed). */
  url: string;
  /** The URL after redirects. */
  finalUrl: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body with Content-Encoding undone (empty for a HEAD-like answer). */
  body: Buffer;
  /** True when overflow "truncate" cut the body at maxBytes. */
  truncated: boolean;
  /** URLs redirected through, in order, before finalUrl. */
  redirects: string[];
  /** Every request made, in order; the last is the final answer. */
  hops: FetchHop[];
}

export const FETCH_DEFAULTS = {
  maxRedirects: 5,
  connectTimeoutMs: 5_000,
  totalTimeoutMs: 20_000,
  maxBytes: 10 * 1024 * 1024,
} as const;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

interface HopContext {
  userAgent: string;
  headers: Record<string, string>;
  policy: AddressPolicy;
  connectTimeoutMs: number;
  maxBytes: number;
  truncate: boolean;
  onHeaders: FetchOptions['onHeaders'];
  agents: AgentPool | undefined;
  /** Aborts at the total deadline or when the caller aborts. */
  signal: AbortSignal;
  deadline: AbortSignal;
  callerSignal: AbortSignal | undefined;
}

interface HopResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  address: string;
}

/**
 * GETs a URL defensively: http(s) only; the host is resolved here and every address must pass the address policy;
 * the connection goes to the vetted address (the name is kept for Host and SNI, so there is no window for DNS
 * rebinding); every redirect is vetted the same way, at most maxRedirects; connect and total timeouts; a byte cap
 * after decompression. Any HTTP status is returned; failures to get one are NotaryErrors: invalid_url,
 * blocked_address, too_many_redirects, upstream_unreachable, upstream_timeout, upstream_error (a body that does not
 * decompress), body_too_large, or whatever beforeHop throws.
 */
export async function fetchResource(rawUrl: string | URL, options: FetchOptions): Promise<FetchResponse> {
  const start = parseHttpUrl(typeof rawUrl === 'string' ? rawUrl : rawUrl.href);
  const deadline = AbortSignal.timeout(options.totalTimeoutMs ?? FETCH_DEFAULTS.totalTimeoutMs);
  const ctx: HopContext = {
    userAgent: options.userAgent,
    headers: options.headers ?? {},
    policy: options.policy,
    connectTimeoutMs: options.connectTimeoutMs ?? FETCH_DEFAULTS.connectTimeoutMs,
    maxBytes: options.maxBytes ?? FETCH_DEFAULTS.maxBytes,
    truncate: options.overflow === 'truncate',
    onHeaders: options.onHeaders,
    agents: options.agents,
    signal: options.signal ? AbortSignal.any([deadline, options.signal]) : deadline,
    deadline,
    callerSignal: options.signal,
  };
  const maxRedirects = options.maxRedirects ?? FETCH_DEFAULTS.maxRedirects;
  const redirects: string[] = [];
  const hops: FetchHop[] = [];
  let url = start;
  for (;;) {
    if (options.beforeHop) await options.beforeHop(url, ctx.signal);
    const res = await requestOnce(url, ctx);
    hops.push({ url: url.href, status: res.status, address: res.address });
    const location = res.headers.location;
    if (!REDIRECT_STATUSES.has(res.status) || !location) {
      return { url: start.href, finalUrl: url.href, status: res.status, headers: res.headers, body: res.body, truncated: res.truncated, redirects, hops };
    }
    if (redirects.length >= maxRedirects) {
      throw new NotaryError('too_many_redirects', `more than ${maxRedirects} redirects from ${start.href}`, {
        redirects: [...redirects, url.href],
      });
    }
    redirects.push(url.href);
    try {
      url = parseHttpUrl(new URL(location, url).href);
    } catch (err) {
      throw new NotaryError('invalid_url', `${url.href} redirects to an unusable URL: ${(err as Error).message}`);
    }
  }
}

export function headerValue(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

/** One GET to the vetted address of `url`. Redirect bodies are not read; other bodies are read under the cap. */
async function requestOnce(url: URL, ctx: HopContext): Promise<HopResponse> {
  const address = await vetUrl(url, ctx.policy);
  if (ctx.signal.aborted) throw abortError(ctx, url);
  const transport = url.protocol === 'https:' ? https : http;
  const agent = ctx.agents ? ctx.agents.agentFor(url, address) : false;
  return new Promise<HopResponse>((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      reject(err);
    };
    const req = transport.request(url, {
      method: 'GET',
      agent,
      lookup: pinnedLookup(address),
      signal: ctx.signal,
      headers: { 'user-agent': ctx.userAgent, 'accept-encoding': 'gzip, deflate, br', ...ctx.headers },
    });
    const connectTimer = setTimeout(() => {
      fail(new NotaryError('upstream_timeout', `no connection to ${url.host} within ${ctx.connectTimeoutMs} ms`, { phase: 'connect' }));
      req.destroy();
    }, ctx.connectTimeoutMs);
    req.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once('connect', () => clearTimeout(connectTimer));
    });
    req.on('error', (err) => fail(mapRequestError(err, ctx, url)));
    req.on('response', (res) => {
      clearTimeout(connectTimer);
      const status = res.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status) && res.headers.location) {
        res.resume();
        settled = true;
        resolve({ status, headers: res.headers, body: Buffer.alloc(0), truncated: false, address: address.address });
        return;
      }
      try {
        ctx.onHeaders?.({ url: url.href, status, headers: res.headers });
      } catch (err) {
        res.destroy();
        fail(err);
        return;
      }
      readCapped(res, ctx, url).then(
        ({ body, truncated }) => {
          if (settled) return;
          settled = true;
          resolve({ status, headers: res.headers, body, truncated, address: address.address });
        },
        (err: unknown) => fail(err),
      );
    });
    req.end();
  });
}

function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  };
}

function decoderFor(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return null;
  }
}

/** Reads a response body, undoing Content-Encoding, and stops as soon as the decoded size passes the cap. */
async function readCapped(res: http.IncomingMessage, ctx: HopContext, url: URL): Promise<{ body: Buffer; truncated: boolean }> {
  const declared = Number(res.headers['content-length']);
  const tooLarge = (): NotaryError =>
    new NotaryError('body_too_large', `${url.href} is larger than the ${ctx.maxBytes}-byte cap`, { max_bytes: ctx.maxBytes });
  if (!ctx.truncate && !res.headers['content-encoding'] && Number.isFinite(declared) && declared > ctx.maxBytes) {
    res.destroy();
    throw tooLarge();
  }
  const decoder = decoderFor(res.headers['content-encoding']);
  const stream: Readable = decoder ? res.pipe(decoder) : res;
  if (decoder) res.on('error', (err) => decoder.destroy(err));
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      if (size + buf.length > ctx.maxBytes) {
        res.destroy();
        decoder?.destroy();
        if (!ctx.truncate) throw tooLarge();
        chunks.push(buf.subarray(0, ctx.maxBytes - size));
        return { body: Buffer.concat(chunks), truncated: true };
      }
      size += buf.length;
      chunks.push(buf);
    }
  } catch (err) {
    if (isNotaryError(err)) throw err;
    throw mapRequestError(err as Error, ctx, url);
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

function abortError(ctx: HopContext, url: URL): Error {
  if (ctx.deadline.aborted) return new NotaryError('upstream_timeout', `${url.href} did not answer within the time limit`, { phase: 'total' });
  const reason: unknown = ctx.callerSignal?.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}

function mapRequestError(err: Error, ctx: HopContext, url: URL): Error {
  if (isNotaryError(err)) return err;
  if (ctx.signal.aborted) return abortError(ctx, url);
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR' || code.startsWith('ERR_BROTLI')) {
    return new NotaryError('upstream_error', `${url.href} sent a body that does not decompress: ${err.message}`);
  }
  return new NotaryError('upstream_unreachable', `${url.host}: ${code ? `${code} ` : ''}${err.message}`.trim(), {
    cause_code: code || null,
  });
}

/**
 * Keep-alive agents, one per (origin, vetted address): connections are reused only to the address that was checked.
 * Oldest agents are closed past `maxAgents`. Close with destroy() when the work is done.
 */
export class AgentPool {
  private readonly agents = new Map<string, http.Agent>();

  constructor(
    private readonly maxSocketsPerAgent = 8,
    private readonly maxAgents = 256,
  ) {}

  agentFor(url: URL, address: ResolvedAddress): http.Agent {
    const key = `${url.origin} ${address.address}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const options = { keepAlive: true, maxSockets: this.maxSocketsPerAgent, maxFreeSockets: this.maxSocketsPerAgent, timeout: 30_000 };
      agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
      this.agents.set(key, agent);
      while (this.agents.size > this.maxAgents) {
        const oldest = this.agents.entries().next();
        if (oldest.done) break;
        oldest.value[1].destroy();
        this.agents.delete(oldest.value[0]);
      }
    }
    return agent;
  }

  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
