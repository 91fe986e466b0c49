import { NotaryError } from '../../core/index.js';
import type { AddressPolicy } from './address-policy.js';
import type { FetchCache } from './cache.js';
import { decodeText } from './charset.js';
import { FETCH_DEFAULTS, fetchResource, headerValue, type FetchHop, type FetchResponse } from './fetcher.js';
import { pdfToText } from './pdf.js';
import { RobotsRules } from './robots.js';

export type DocumentKind = 'html' | 'text' | 'pdf';

export interface FetchedDocument {
  /** The URL asked for (fragment removed). */
  url: string;
  /** The URL after redirects. */
  finalUrl: string;
  /** The site's answer; any status (what an error status means is decided by the caller). */
  status: number;
  /** The Retry-After header of the answer, if any. */
  retryAfter: string | null;
  /** null when the body was not decoded: an error status with a body that is not HTML or text. */
  kind: DocumentKind | null;
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
  /** Every request made and the address it went to. */
  hops: FetchHop[];
  fetchedAt: string;
  fromCache: boolean;
  pdf: { title: string | null; author: string | null; pages: number } | null;
}

export interface SafeFetchOptions {
  /** Same identifiable User-Agent as the crawler (see userAgentHeader). */
  userAgent: string;
  /** Reach `private` addresses (loopback, RFC 1918, unique-local, CGNAT); never link-local or metadata. Default false. */
  allowPrivateNetworks?: boolean;
  /** CIDR ranges of private addresses that may be reached. */
  allowedPrivateRanges?: readonly string[];
  /** Hosts whose private addresses may be reached (see AddressPolicy.allowedPrivateHosts). */
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
  resolver?: AddressPolicy['resolver'];
}

const ACCEPT = 'text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1';
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

export function addressPolicyOf(options: Pick<SafeFetchOptions, 'allowPrivateNetworks' | 'allowedPrivateRanges' | 'allowedPrivateHosts' | 'resolver'>): AddressPolicy {
  return {
    allowPrivateNetworks: options.allowPrivateNetworks ?? false,
    ...(options.allowedPrivateRanges ? { allowedPrivateRanges: options.allowedPrivateRanges } : {}),
    ...(options.allowedPrivateHosts ? { allowedPrivateHosts: options.allowedPrivateHosts } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
  };
}

/**
 * Fetches a URL that a client named through the one fetcher (address policy on every hop, timeouts, byte cap), with
 * robots.txt checked for every hop, and decodes the answer: HTML, XHTML, plain text and PDF
 * (unsupported_content_type otherwise). Any HTTP status is returned as a document; only 2xx documents are cached.
 */
export async function safeFetch(rawUrl: string, options: SafeFetchOptions): Promise<FetchedDocument> {
  const cached = options.cache?.get(cacheKeyOf(rawUrl), options.maxAgeS ?? 0);
  if (cached) return { ...cached, fromCache: true };
  const policy = addressPolicyOf(options);
  const robots = (options.respectRobotsTxt ?? true) ? (options.robots ?? new RobotsRules()) : null;
  const response = await fetchResource(rawUrl, {
    userAgent: options.userAgent,
    policy,
    headers: { accept: ACCEPT, 'accept-language': 'en;q=1.0, *;q=0.5' },
    maxRedirects: options.maxRedirects ?? FETCH_DEFAULTS.maxRedirects,
    connectTimeoutMs: options.connectTimeoutMs ?? FETCH_DEFAULTS.connectTimeoutMs,
    totalTimeoutMs: options.totalTimeoutMs ?? FETCH_DEFAULTS.totalTimeoutMs,
    maxBytes: options.maxBytes ?? FETCH_DEFAULTS.maxBytes,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(robots
      ? {
          beforeHop: async (url: URL, signal: AbortSignal) => {
            const verdict = await robots.verdict(url, {
              userAgent: options.userAgent,
              policy,
              ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
              signal,
            });
            if (!verdict.allowed) throw robotsRefusal(url, verdict.reason, verdict.rules.cause, verdict.rules.detail);
          },
        }
      : {}),
  });
  const document = await toDocument(response);
  if (document.status >= 200 && document.status < 300) options.cache?.set(cacheKeyOf(rawUrl), document);
  return document;
}

function cacheKeyOf(rawUrl: string): string {
  try {
    const url = new URL(rawUrl.trim());
    url.hash = '';
    return url.href;
  } catch {
    return rawUrl;
  }
}

/**
 * What a robots.txt refusal is for a caller: a disallow is robots_disallowed; an unreachable robots.txt means the
 * site could not be asked (RFC 9309 then disallows everything): the network failure itself, or upstream_unreachable
 * for a robots.txt that answers 429/5xx.
 */
function robotsRefusal(url: URL, reason: 'disallowed' | 'unreachable', cause: NotaryError | null, detail: string | null): NotaryError {
  if (reason === 'disallowed') return new NotaryError('robots_disallowed', `${url.origin}/robots.txt disallows ${url.pathname}`);
  if (cause) return new NotaryError(cause.code, cause.message, cause.extra);
  return new NotaryError(
    'upstream_unreachable',
    `${url.origin}: ${detail ?? 'robots.txt could not be read'}; RFC 9309 treats the site as disallowed until it can be read`,
    { robots_txt: 'unreachable' },
  );
}

/**
 * Decodes a fetched answer. A 2xx must be HTML, text or PDF (unsupported_content_type otherwise); an error status is
 * decoded when it is HTML or text (challenge pages are), else kept without a body.
 */
export async function toDocument(res: FetchResponse): Promise<FetchedDocument> {
  const contentType = headerValue(res.headers['content-type']);
  const mimeType = sniffMimeType(contentType, res.body);
  const base = {
    url: res.url,
    finalUrl: res.finalUrl,
    status: res.status,
    retryAfter: headerValue(res.headers['retry-after']),
    mimeType,
    bytes: res.body.length,
    redirects: res.redirects,
    hops: res.hops,
    fetchedAt: new Date().toISOString(),
    fromCache: false,
  };
  const success = res.status >= 200 && res.status < 300;
  if (mimeType === 'application/pdf' && success) {
    const pdf = await pdfToText(res.body);
    return { ...base, kind: 'pdf', charset: null, body: pdf.text, pdf: { title: pdf.title, author: pdf.author, pages: pdf.pages } };
  }
  const isHtml = HTML_TYPES.has(mimeType);
  if (!isHtml && mimeType !== 'text/plain') {
    if (!success) return { ...base, kind: null, charset: null, body: '', pdf: null };
    throw new NotaryError('unsupported_content_type', `${res.finalUrl} serves ${mimeType}; only HTML, plain text and PDF are extracted`, {
      content_type: mimeType,
    });
  }
  const decoded = decodeText(res.body, contentType, isHtml);
  return { ...base, kind: isHtml ? 'html' : 'text', charset: decoded.charset, body: decoded.text, pdf: null };
}

/** The served type's essence; without a Content-Type, PDF and HTML are recognised by their first bytes. */
export function sniffMimeType(contentType: string | null, body: Buffer): string {
  const essence = contentType?.split(';')[0]?.trim().toLowerCase();
  if (essence) return essence;
  const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
  if (head.startsWith('%pdf-')) return 'application/pdf';
  if (/^(?:\xef\xbb\xbf)?<(?:!doctype html|html|head|body|!--|meta|title|p\b|div)/.test(head)) return 'text/html';
  return 'application/octet-stream';
}
