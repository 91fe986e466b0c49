import { createRequire } from 'node:module';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { NotaryError, isNotaryError } from '../../core/errors.js';
import { isCaptchaPage } from '../detect.js';
import { extractDocument } from '../extract.js';
import { parseHttpUrl, vetHost, type HostResolver, type ResolvedAddress } from './address-policy.js';
import { FetchCache } from './cache.js';
import { decodeText } from './charset.js';
import { pdfToText } from './pdf.js';

export type DocumentKind = 'html' | 'text' | 'pdf';

export interface FetchedDocument {
  /** The URL asked for (fragment removed). */
  url: string;
  /** The URL after redirects. */
  finalUrl: string;
  status: number;
  kind: DocumentKind;
  /** Content-Type essence as served (or sniffed when missing). */
  mimeType: string;
  /** Charset used to decode (null for PDF). */
  charset: string | null;
  /** Decoded HTML or text; for a PDF, its extracted text. */
  body: string;
  /** Body bytes received (after content decoding). */
  bytes: number;
  /** Every URL redirected through, in order, before finalUrl. */
  redirects: string[];
  fetchedAt: string;
  fromCache: boolean;
  pdf: { title: string | null; author: string | null; pages: number } | null;
}

export interface SafeFetchOptions {
  /** Same identifiable User-Agent as the crawler: `${user_agent} (+${contact_url})`. */
  userAgent: string;
  /** Reach loopback, private, link-local and other non-public addresses. Default false. */
  allowPrivateNetworks?: boolean;
  /** Hosts exempt from the address check (see AddressPolicy.allowedPrivateHosts). */
  allowedPrivateHosts?: readonly string[];
  signal?: AbortSignal;
  maxRedirects?: number;
  connectTimeoutMs?: number;
  totalTimeoutMs?: number;
  /** Cap on the (decompressed) body; a larger response fails with body_too_large. */
  maxBytes?: number;
  respectRobotsTxt?: boolean;
  /** Shared robots.txt rules; a fresh one per call when omitted. */
  robots?: RobotsRules;
  /** Shared document cache; with maxAgeS > 0 a cached copy that young is returned instead of fetching. */
  cache?: FetchCache<FetchedDocument>;
  maxAgeS?: number;
  /** Host name resolution (tests point names at chosen addresses); the system resolver by default. */
  resolver?: HostResolver;
}

export const FETCH_DEFAULTS = {
  maxRedirects: 5,
  connectTimeoutMs: 5_000,
  totalTimeoutMs: 20_000,
  maxBytes: 10 * 1024 * 1024,
} as const;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const ACCEPT = 'text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Null for redirects (the body is discarded unread). */
  body: Buffer | null;
}

export interface RequestContext {
  userAgent: string;
  allowPrivateNetworks: boolean;
  allowedPrivateHosts: readonly string[];
  resolver: HostResolver | undefined;
  connectTimeoutMs: number;
  maxBytes: number;
  /** Aborts at the total deadline or when the caller aborts. */
  signal: AbortSignal;
  deadline: AbortSignal;
  callerSignal: AbortSignal | undefined;
}

/**
 * Fetches a URL that a client named, defensively: http(s) only; the host is resolved here and every address must be
 * public unless allowPrivateNetworks; the connection goes to the vetted address (the name is kept for Host and
 * SNI, so there is no window for DNS rebinding); every redirect is checked the same way, at most maxRedirects;
 * connect and total timeouts; a byte cap; robots.txt; HTML/XHTML, text/plain and PDF only.
 * Failures are NotaryErrors: invalid_url, blocked_address, robots_disallowed, too_many_redirects, upstream_error
 * (extra.upstream_status), upstream_unreachable, upstream_timeout, body_too_large, unsupported_content_type.
 */
export async function safeFetch(rawUrl: string, options: SafeFetchOptions): Promise<FetchedDocument> {
  const start = parseHttpUrl(rawUrl);
  const cacheKey = start.href;
  const cached = options.cache?.get(cacheKey, options.maxAgeS ?? 0);
  if (cached) return { ...cached, fromCache: true };

  const totalTimeoutMs = options.totalTimeoutMs ?? FETCH_DEFAULTS.totalTimeoutMs;
  const deadline = AbortSignal.timeout(totalTimeoutMs);
  const ctx: RequestContext = {
    userAgent: options.userAgent,
    allowPrivateNetworks: options.allowPrivateNetworks ?? false,
    allowedPrivateHosts: options.allowedPrivateHosts ?? [],
    resolver: options.resolver,
    connectTimeoutMs: options.connectTimeoutMs ?? FETCH_DEFAULTS.connectTimeoutMs,
    maxBytes: options.maxBytes ?? FETCH_DEFAULTS.maxBytes,
    signal: options.signal ? AbortSignal.any([deadline, options.signal]) : deadline,
    deadline,
    callerSignal: options.signal,
  };
  const robots = (options.respectRobotsTxt ?? true) ? (options.robots ?? new RobotsRules()) : null;
  const maxRedirects = options.maxRedirects ?? FETCH_DEFAULTS.maxRedirects;

  let url = start;
  const redirects: string[] = [];
  for (;;) {
    if (robots) await robots.check(url, ctx);
    const res = await requestOnce(url, ctx, true);
    const location = res.headers.location;
    if (REDIRECT_STATUSES.has(res.status) && location) {
      if (redirects.length >= maxRedirects) {
        throw new NotaryError('too_many_redirects', `more than ${maxRedirects} redirects from ${start.href}`, {
          redirects: [...redirects, url.href],
        });
      }
      redirects.push(url.href);
      let next: URL;
      try {
        next = parseHttpUrl(new URL(location, url).href);
      } catch (err) {
        throw new NotaryError('invalid_url', `${url.href} redirects to an unusable URL: ${(err as Error).message}`);
      }
      url = next;
      continue;
    }
    if (res.status >= 400) {
      // Bot walls (Cloudflare and the like) answer 403/429/503 with a challenge page: name them for what they are.
      if (CHALLENGE_STATUSES.has(res.status) && (await isChallengeResponse(start.href, url.href, res, redirects))) {
        throw new NotaryError('captcha_detected', `${url.href} answered HTTP ${res.status} with a bot challenge`, { upstream_status: res.status });
      }
      throw new NotaryError('upstream_error', `${url.href} answered HTTP ${res.status}`, { upstream_status: res.status });
    }
    const document = await toDocument(start.href, url.href, res, redirects);
    options.cache?.set(cacheKey, document);
    return document;
  }
}

const CHALLENGE_STATUSES = new Set([403, 429, 503]);

async function isChallengeResponse(requested: string, finalUrl: string, res: RawResponse, redirects: string[]): Promise<boolean> {
  try {
    const doc = await toDocument(requested, finalUrl, res, redirects);
    return doc.kind === 'html' && isCaptchaPage(doc.body, extractDocument(doc.body, finalUrl));
  } catch {
    return false;
  }
}

async function toDocument(requested: string, finalUrl: string, res: RawResponse, redirects: string[]): Promise<FetchedDocument> {
  const body = res.body ?? Buffer.alloc(0);
  const contentType = headerValue(res.headers['content-type']);
  const mimeType = sniffMimeType(contentType, body);
  const base = {
    url: requested,
    finalUrl,
    status: res.status,
    mimeType,
    bytes: body.length,
    redirects,
    fetchedAt: new Date().toISOString(),
    fromCache: false,
  };
  if (mimeType === 'application/pdf') {
    const pdf = await pdfToText(body);
    return { ...base, kind: 'pdf', charset: null, body: pdf.text, pdf: { title: pdf.title, author: pdf.author, pages: pdf.pages } };
  }
  const isHtml = HTML_TYPES.has(mimeType);
  if (!isHtml && mimeType !== 'text/plain') {
    throw new NotaryError('unsupported_content_type', `${finalUrl} serves ${mimeType}; only HTML, plain text and PDF are extracted`, {
      content_type: mimeType,
    });
  }
  const decoded = decodeText(body, contentType, isHtml);
  return { ...base, kind: isHtml ? 'html' : 'text', charset: decoded.charset, body: decoded.text, pdf: null };
}

function headerValue(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

/** The served type's essence; without a Content-Type, PDF and HTML are recognised by their first bytes. */
function sniffMimeType(contentType: string | null, body: Buffer): string {
  const essence = contentType?.split(';')[0]?.trim().toLowerCase();
  if (essence) return essence;
  const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
  if (head.startsWith('%pdf-')) return 'application/pdf';
  if (/^(?:\ufeff)?<(?:!doctype html|html|head|body|!--|meta|title|p\b|div)/.test(head)) return 'text/html';
  return 'application/octet-stream';
}

/** One GET to the vetted address of `url`. Redirect bodies are not read; other bodies are read under the cap. */
async function requestOnce(url: URL, ctx: RequestContext, readBody: boolean): Promise<RawResponse> {
  const address = await vetHost(url.hostname, {
    allowPrivateNetworks: ctx.allowPrivateNetworks,
    allowedPrivateHosts: ctx.allowedPrivateHosts,
    resolver: ctx.resolver,
  });
  if (ctx.signal.aborted) throw abortError(ctx, url);
  const lookup = pinnedLookup(address);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      reject(err);
    };
    const req = transport.request(url, {
      method: 'GET',
      agent: false,
      lookup,
      signal: ctx.signal,
      headers: {
        'user-agent': ctx.userAgent,
        accept: ACCEPT,
        'accept-encoding': 'gzip, deflate, br',
        'accept-language': 'en;q=1.0, *;q=0.5',
      },
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
      const mayBeChallenge = CHALLENGE_STATUSES.has(status) && /html/i.test(headerValue(res.headers['content-type']) ?? '');
      if (!readBody || (REDIRECT_STATUSES.has(status) && res.headers.location) || (status >= 400 && !mayBeChallenge)) {
        res.resume();
        settled = true;
        resolve({ status, headers: res.headers, body: null });
        return;
      }
      readCapped(res, ctx, url).then(
        (body) => {
          if (settled) return;
          settled = true;
          resolve({ status, headers: res.headers, body });
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
async function readCapped(res: http.IncomingMessage, ctx: RequestContext, url: URL): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  const tooLarge = (): NotaryError =>
    new NotaryError('body_too_large', `${url.href} is larger than the ${ctx.maxBytes}-byte cap`, { max_bytes: ctx.maxBytes });
  if (!res.headers['content-encoding'] && Number.isFinite(declared) && declared > ctx.maxBytes) {
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
      size += buf.length;
      if (size > ctx.maxBytes) {
        res.destroy();
        decoder?.destroy();
        throw tooLarge();
      }
      chunks.push(buf);
    }
  } catch (err) {
    if (isNotaryError(err)) throw err;
    throw mapRequestError(err as Error, ctx, url);
  }
  return Buffer.concat(chunks);
}

function abortError(ctx: RequestContext, url: URL): Error {
  if (ctx.deadline.aborted) return new NotaryError('upstream_timeout', `${url.href} did not answer within the time limit`, { phase: 'total' });
  const reason: unknown = ctx.callerSignal?.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}

function mapRequestError(err: Error, ctx: RequestContext, url: URL): Error {
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

interface RobotsFile {
  isAllowed(url: string, ua?: string): boolean | undefined;
}
// robots-parser is CommonJS with `export default` typings that do not match its module.exports under NodeNext.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => RobotsFile;

/**
 * robots.txt rules per origin, fetched through the same vetted path (so robots.txt cannot be used to reach a
 * private address either) and kept for an hour. As RFC 9309 says: a 4xx allows everything; a 5xx or an
 * unreachable file disallows the origin.
 */
export class RobotsRules {
  private readonly origins = new FetchCache<Promise<RobotsFile | string>>(512);

  constructor(private readonly ttlS = 3600) {}

  async check(url: URL, ctx: RequestContext): Promise<void> {
    let pending = this.origins.get(url.origin, this.ttlS);
    if (!pending) {
      pending = this.load(url, ctx);
      this.origins.set(url.origin, pending);
      // A failure of this request (deadline, abort, blocked address) is not a fact about the site: forget it.
      pending.catch(() => this.origins.delete(url.origin));
    }
    const rules = await pending;
    if (typeof rules === 'string') {
      throw new NotaryError('robots_disallowed', `${url.origin}/robots.txt ${rules}; the site is treated as disallowed`);
    }
    if (rules.isAllowed(url.href, ctx.userAgent) === false) {
      throw new NotaryError('robots_disallowed', `${url.origin}/robots.txt disallows ${url.pathname}`);
    }
  }

  private async load(url: URL, ctx: RequestContext): Promise<RobotsFile | string> {
    const robotsUrl = new URL('/robots.txt', url.origin);
    const robotsCtx: RequestContext = { ...ctx, maxBytes: 512 * 1024 };
    let target = robotsUrl;
    try {
      for (let hop = 0; hop <= 5; hop++) {
        const res = await requestOnce(target, robotsCtx, true);
        const location = res.headers.location;
        if (REDIRECT_STATUSES.has(res.status) && location) {
          target = parseHttpUrl(new URL(location, target).href);
          continue;
        }
        if (res.status >= 500) return `answered HTTP ${res.status}`;
        const text = res.status >= 200 && res.status < 300 && res.body ? res.body.toString('utf8') : '';
        return robotsParser(robotsUrl.href, text);
      }
      return 'redirects too many times';
    } catch (err) {
      // A deadline or a caller abort belongs to this request, not to the site's rules: do not remember it.
      if (ctx.signal.aborted) throw isNotaryError(err) ? err : abortError(ctx, url);
      if (isNotaryError(err) && err.code === 'blocked_address') throw err;
      return `could not be read (${(err as Error).message})`;
    }
  }
}
