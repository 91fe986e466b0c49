import type { NotaryConfig } from '../core/index.js';
import { NotaryError } from '../core/index.js';
import { countWords } from './content.js';
import { assertRealContent, isCaptchaPage, isJsShell } from './detect.js';
import { extractDocument } from './extract.js';
import type { SiteTitleAffixes } from './site-title.js';
import type { HostResolver } from './fetch/address-policy.js';
import { FetchCache } from './fetch/cache.js';
import { RobotsRules } from './fetch/robots.js';
import { decodeText } from './fetch/charset.js';
import { pdfToText } from './fetch/pdf.js';
import { safeFetch, sniffMimeType, type FetchedDocument } from './fetch/safe-fetch.js';
import { userAgentHeader } from './fetch/user-agent.js';
import { OUTPUT_MODES, pickExcerpt, renderDocument, type OutputMode, type ScorePassages } from './output.js';
import { BrowserRenderer } from './render/browser.js';
import type { ContentBlock, ExtractedDocument } from './types.js';

export type RenderPolicy = 'auto' | 'never' | 'always';
export const RENDER_POLICIES: readonly RenderPolicy[] = ['auto', 'never', 'always'];

export interface ExtractRequest {
  url: string;
  mode: OutputMode;
  /** With mode "excerpt" (and for the excerpt field), passages are chosen by how well they answer it. */
  query?: string;
  render?: RenderPolicy;
  /** Seconds a cached fetch may be old; 0 always fetches. Default: config extract.cache_ttl_s. */
  max_age?: number;
  /** Keep reader comments after the article (default false: the article alone). */
  include_comments?: boolean;
}

export interface ExtractResult {
  url: string;
  final_url: string;
  /** HTTP status of the page (null for a local file). */
  status: number | null;
  title: string | null;
  byline: string | null;
  site_name: string | null;
  lang: string | null;
  published_at: string | null;
  mode: OutputMode;
  content: string;
  excerpt: string;
  word_count: number;
  /** Whether the content came from the browser (render "always", or "auto" on a JS shell). */
  rendered: boolean;
}

export interface ExtractSettings {
  allowPrivateNetworks: boolean;
  /** Private CIDR ranges that may be reached (config extract.allowed_private_ranges). */
  allowedPrivateRanges?: readonly string[];
  /** Hosts exempt from the private-address check (not in the config file; for embedding and tests). */
  allowedPrivateHosts?: readonly string[];
  maxRedirects: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxBytes: number;
  respectRobotsTxt: boolean;
  cacheTtlS: number;
  render: RenderPolicy;
  renderTimeoutMs: number;
}

export interface ExtractDeps {
  userAgent: string;
  settings: ExtractSettings;
  cache?: FetchCache<FetchedDocument>;
  robots?: RobotsRules;
  /** Needed for render "always" and for "auto" on JS shells; without it those pages fail with js_shell_empty. */
  renderer?: Pick<BrowserRenderer, 'render'>;
  scorePassages?: ScorePassages;
  resolver?: HostResolver;
  signal?: AbortSignal;
  /**
   * The title prefixes and suffixes a host's pages repeat, as the index learnt them from its crawled pages: with it an
   * indexed site's page gets the same title here as in search results.
   */
  siteTitles?: (host: string) => Promise<SiteTitleAffixes | null>;
}

export function extractSettings(config: NotaryConfig): ExtractSettings {
  const e = config.extract;
  return {
    allowPrivateNetworks: e.allow_private_networks,
    allowedPrivateRanges: e.allowed_private_ranges,
    maxRedirects: e.max_redirects,
    connectTimeoutMs: e.connect_timeout_ms,
    totalTimeoutMs: e.total_timeout_ms,
    maxBytes: e.max_bytes,
    respectRobotsTxt: e.respect_robots_txt,
    cacheTtlS: e.cache_ttl_s,
    render: e.render,
    renderTimeoutMs: e.render_timeout_ms,
  };
}

/** Long-lived dependencies for a server or CLI process: cache, robots rules and a lazily started browser. */
export function createExtractDeps(config: NotaryConfig, extras: Partial<ExtractDeps> = {}): ExtractDeps & { close(): Promise<void> } {
  const renderer = new BrowserRenderer(config.extract.chromium_path);
  return {
    userAgent: userAgentHeader(config.crawler),
    settings: extractSettings(config),
    cache: new FetchCache<FetchedDocument>(config.extract.cache_max_entries),
    robots: new RobotsRules(),
    renderer,
    ...extras,
    close: () => renderer.close(),
  };
}

/** Validates an extract request body; every problem is a NotaryError invalid_request or invalid_url. */
export function parseExtractRequest(body: unknown): ExtractRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new NotaryError('invalid_request', 'the body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b['url'] !== 'string' || !b['url'].trim()) throw new NotaryError('invalid_url', 'url is required (an absolute http or https URL)');
  const mode = b['mode'] ?? 'excerpt';
  if (typeof mode !== 'string' || !OUTPUT_MODES.includes(mode as OutputMode)) {
    throw new NotaryError('invalid_request', `mode must be one of ${OUTPUT_MODES.join(', ')}`);
  }
  const render = b['render'] ?? undefined;
  if (render !== undefined && (typeof render !== 'string' || !RENDER_POLICIES.includes(render as RenderPolicy))) {
    throw new NotaryError('invalid_request', `render must be one of ${RENDER_POLICIES.join(', ')}`);
  }
  const query = b['query'];
  if (query !== undefined && query !== null && (typeof query !== 'string' || query.length > 2000)) {
    throw new NotaryError('invalid_request', 'query must be a string of at most 2000 characters');
  }
  const maxAge = b['max_age'];
  if (maxAge !== undefined && maxAge !== null && (typeof maxAge !== 'number' || !Number.isInteger(maxAge) || maxAge < 0)) {
    throw new NotaryError('invalid_request', 'max_age must be a non-negative integer (seconds)');
  }
  const includeComments = b['include_comments'];
  if (includeComments !== undefined && includeComments !== null && typeof includeComments !== 'boolean') {
    throw new NotaryError('invalid_request', 'include_comments must be true or false');
  }
  return {
    url: b['url'],
    mode: mode as OutputMode,
    ...(typeof query === 'string' && query.trim() ? { query } : {}),
    ...(render !== undefined ? { render: render as RenderPolicy } : {}),
    ...(typeof maxAge === 'number' ? { max_age: maxAge } : {}),
    ...(includeComments === true ? { include_comments: true } : {}),
  };
}

/**
 * Fetches a URL safely and returns its main content in the requested mode. render "auto" renders in Chromium only
 * when the static HTML is a JS shell with too little content. Pages that are CAPTCHAs, login walls or empty
 * fail with 422 NotaryErrors instead of returning junk.
 */
export async function extractUrl(request: ExtractRequest, deps: ExtractDeps): Promise<ExtractResult> {
  const { settings } = deps;
  const fetched = await safeFetch(request.url, {
    userAgent: deps.userAgent,
    allowPrivateNetworks: settings.allowPrivateNetworks,
    ...(settings.allowedPrivateRanges ? { allowedPrivateRanges: settings.allowedPrivateRanges } : {}),
    ...(settings.allowedPrivateHosts ? { allowedPrivateHosts: settings.allowedPrivateHosts } : {}),
    maxRedirects: settings.maxRedirects,
    connectTimeoutMs: settings.connectTimeoutMs,
    totalTimeoutMs: settings.totalTimeoutMs,
    maxBytes: settings.maxBytes,
    respectRobotsTxt: settings.respectRobotsTxt,
    maxAgeS: request.max_age ?? settings.cacheTtlS,
    ...(deps.cache ? { cache: deps.cache } : {}),
    ...(deps.robots ? { robots: deps.robots } : {}),
    ...(deps.resolver ? { resolver: deps.resolver } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  assertSuccessfulAnswer(fetched);

  if (fetched.kind !== 'html') {
    const doc = documentFromText(fetched.body, fetched.pdf?.title ?? null, fetched.pdf?.author ?? null);
    if (doc.wordCount === 0) throw new NotaryError('empty_content', `the ${fetched.kind === 'pdf' ? 'PDF' : 'text file'} has no text`);
    return buildResult(request, doc, { url: fetched.url, finalUrl: fetched.finalUrl, status: fetched.status, rendered: false }, deps.scorePassages);
  }

  const policy = request.render ?? settings.render;
  let html = fetched.body;
  let finalUrl = fetched.finalUrl;
  let status = fetched.status;
  const siteTitles = deps.siteTitles ? await deps.siteTitles(hostOf(finalUrl)).catch(() => null) : null;
  const includeComments = request.include_comments === true;
  let doc = extractDocument(html, finalUrl, { siteTitles, includeComments });
  let rendered = false;
  if (policy === 'always' || (policy === 'auto' && isJsShell(html, doc))) {
    if (!deps.renderer) {
      if (policy === 'always') throw new NotaryError('render_failed', 'no browser is available on this server');
    } else {
      const page = await deps.renderer.render(finalUrl, {
        userAgent: deps.userAgent,
        allowPrivateNetworks: settings.allowPrivateNetworks,
        ...(settings.allowedPrivateRanges ? { allowedPrivateRanges: settings.allowedPrivateRanges } : {}),
        ...(settings.allowedPrivateHosts ? { allowedPrivateHosts: settings.allowedPrivateHosts } : {}),
        timeoutMs: settings.renderTimeoutMs,
        ...(deps.signal ? { signal: deps.signal } : {}),
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
      });
      html = page.html;
      finalUrl = page.finalUrl;
      status = page.status || status;
      doc = extractDocument(html, finalUrl, { siteTitles, includeComments });
      rendered = true;
    }
  }
  assertRealContent(html, doc, rendered);
  return buildResult(request, doc, { url: fetched.url, finalUrl, status, rendered }, deps.scorePassages);
}

/** Answers that bot walls (Cloudflare and the like) give with a challenge page instead of the content. */
const CHALLENGE_STATUSES = new Set([403, 429, 503]);

/**
 * What a site's non-2xx answer means for an extraction: a bot challenge page behind 403/429/503 is captcha_detected,
 * 404/410 is upstream_not_found (the page does not exist: not worth retrying), anything else upstream_error with
 * the status (and Retry-After when the site gave one).
 */
function assertSuccessfulAnswer(doc: FetchedDocument): void {
  const { status } = doc;
  if (status >= 200 && status < 300) return;
  if (CHALLENGE_STATUSES.has(status) && doc.kind === 'html' && isCaptchaPage(doc.body, extractDocument(doc.body, doc.finalUrl))) {
    throw new NotaryError('captcha_detected', `${doc.finalUrl} answered HTTP ${status} with a bot challenge`, { upstream_status: status });
  }
  if (status === 404 || status === 410) {
    throw new NotaryError('upstream_not_found', `${doc.finalUrl} answered HTTP ${status}: the page does not exist`, { upstream_status: status });
  }
  throw new NotaryError('upstream_error', `${doc.finalUrl} answered HTTP ${status}`, {
    upstream_status: status,
    ...(doc.retryAfter ? { upstream_retry_after: doc.retryAfter } : {}),
  });
}

export interface LocalExtractOptions {
  query?: string;
  scorePassages?: ScorePassages;
  /** Keep reader comments after the article. */
  includeComments?: boolean;
}

/** `notary extract <file>`: the same extraction and output modes on HTML already in hand. */
export async function extractLocalHtml(
  html: string,
  url: string,
  mode: OutputMode,
  options: LocalExtractOptions = {},
): Promise<ExtractResult> {
  if (!OUTPUT_MODES.includes(mode)) throw new NotaryError('invalid_request', `mode must be one of ${OUTPUT_MODES.join(', ')}`);
  const doc = extractDocument(html, url, { includeComments: options.includeComments === true });
  assertRealContent(html, doc, false);
  return buildResult({ mode, ...(options.query ? { query: options.query } : {}) }, doc, { url, finalUrl: url, status: null, rendered: false }, options.scorePassages);
}

/**
 * `notary extract <file>`: a local file's bytes read the way /v1/extract reads a response without a Content-Type: a
 * PDF by its signature, otherwise HTML whose charset comes from a byte-order mark, then <meta charset>, then UTF-8
 * when the bytes are valid UTF-8, else windows-1252.
 */
export async function extractLocalFile(
  bytes: Uint8Array,
  url: string,
  mode: OutputMode,
  options: LocalExtractOptions = {},
): Promise<ExtractResult> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (sniffMimeType(null, buffer) === 'application/pdf') {
    if (!OUTPUT_MODES.includes(mode)) throw new NotaryError('invalid_request', `mode must be one of ${OUTPUT_MODES.join(', ')}`);
    const pdf = await pdfToText(buffer);
    const doc = documentFromText(pdf.text, pdf.title, pdf.author);
    if (doc.wordCount === 0) throw new NotaryError('empty_content', 'the PDF has no text');
    return buildResult({ mode, ...(options.query ? { query: options.query } : {}) }, doc, { url, finalUrl: url, status: null, rendered: false }, options.scorePassages);
  }
  return extractLocalHtml(decodeText(buffer, null, true).text, url, mode, options);
}

/** Plain text (text/plain, PDF) as an ExtractedDocument: paragraphs split at blank lines. */
export function documentFromText(text: string, title: string | null, byline: string | null): ExtractedDocument {
  const blocks: ContentBlock[] = text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/[ \t]+/g, ' ').trim())
    .filter((p) => p.length > 0)
    .map((p) => ({ type: 'paragraph', text: p }));
  const joined = blocks.map((b) => b.text).join('\n\n');
  return {
    title,
    byline,
    siteName: null,
    lang: null,
    publishedAt: null,
    description: null,
    canonicalUrl: null,
    blocks,
    text: joined,
    wordCount: countWords(joined),
  };
}

async function buildResult(
  request: Pick<ExtractRequest, 'mode' | 'query'>,
  doc: ExtractedDocument,
  where: { url: string; finalUrl: string; status: number | null; rendered: boolean },
  scorePassages: ScorePassages | undefined,
): Promise<ExtractResult> {
  const excerpt = await pickExcerpt(doc, request.query, scorePassages);
  const content = request.mode === 'excerpt' ? excerpt : await renderDocument(doc, request.mode);
  return {
    url: where.url,
    final_url: where.finalUrl,
    status: where.status,
    title: doc.title,
    byline: doc.byline,
    site_name: doc.siteName,
    lang: doc.lang,
    published_at: doc.publishedAt,
    mode: request.mode,
    content,
    excerpt,
    word_count: doc.wordCount,
    rendered: where.rendered,
  };
}

/** The host part of a URL ("docs.example.org:8080"), lower-cased; "" when it does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return '';
  }
}
