import { NotaryError } from '../../core/index.js';
import { normaliseUrl, urlPatternProblem } from '../../crawler/index.js';
import type { CrawlJobRow } from '../../storage/index.js';
import { countSchema } from '../paid/schemas.js';
import { ABSOLUTE_HTTP_URL } from './extract.js';

/** Most seeds one job may name, and the most include or exclude patterns (each at most MAX_PATTERN characters). */
export const MAX_SEEDS = 20;
export const MAX_PATTERNS = 20;
export const MAX_PATTERN = 200;
export const MAX_JOB_DEPTH = 20;
export const DEFAULT_MAX_PAGES = 100;
export const DEFAULT_MAX_DEPTH = 3;

/** The body of POST /v1/crawl as the schema let it through. */
export interface CrawlJobBody {
  url?: string;
  urls?: string[];
  collection?: string;
  scope?: 'path' | 'host' | 'domain';
  max_pages?: number;
  max_depth?: number;
  include?: string[];
  exclude?: string[];
  webhook?: string;
}

/** A job request once checked: its seeds normalised, every default filled in. */
export interface CrawlJobRequest {
  seeds: string[];
  collection: string | undefined;
  scope: 'path' | 'host' | 'domain';
  /** Undefined: DEFAULT_MAX_PAGES, or the tier's crawl_pages_per_job when that is less. */
  maxPages: number | undefined;
  maxDepth: number;
  include: string[];
  exclude: string[];
  webhook: string | null;
}

const patterns = { type: 'array', maxItems: MAX_PATTERNS, items: { type: 'string', minLength: 1, maxLength: MAX_PATTERN } } as const;

export const crawlBodySchema = {
  type: 'object',
  additionalProperties: false,
  // Exactly one of url and urls.
  oneOf: [{ required: ['url'] }, { required: ['urls'] }],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, pattern: ABSOLUTE_HTTP_URL, description: 'The seed: where the crawl starts. Exactly one of url and urls.' },
    urls: { type: 'array', minItems: 1, maxItems: MAX_SEEDS, items: { type: 'string', minLength: 1, maxLength: 2048, pattern: ABSOLUTE_HTTP_URL }, description: 'Several seeds.' },
    collection: { type: 'string', minLength: 1, maxLength: 64, description: 'The collection the pages join (default: the default collection); it must exist.' },
    scope: { type: 'string', enum: ['path', 'host', 'domain'], description: "How far from the seeds: under the seed's folder (default), its host, or its registrable domain." },
    max_pages: { type: 'integer', format: 'int32', minimum: 1, maximum: 10_000_000, description: "Pages to store at most (default 100, at most the tier's crawl_pages_per_job): the quote." },
    max_depth: { type: 'integer', format: 'int32', minimum: 0, maximum: MAX_JOB_DEPTH, description: 'Links followed from a seed at most (default 3).' },
    include: { ...patterns, description: 'Regular expressions in RE2 syntax (no lookaround or backreferences): a URL must match one of them.' },
    exclude: { ...patterns, description: 'Regular expressions in RE2 syntax (no lookaround or backreferences): a URL matching one of them is not fetched.' },
    webhook: { type: 'string', maxLength: 68, pattern: '^whe_[A-Za-z0-9]{1,64}$', description: 'A webhook endpoint (whe_...) told when the job ends.' },
  },
} as const;

const nullableNumber = { anyOf: [{ type: 'number' }, { type: 'null' }] } as const;
const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] } as const;

export const crawlJobSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status', 'collection', 'seeds', 'scope', 'max_pages', 'max_depth', 'progress', 'credits_quoted', 'credits_used', 'created_at', 'started_at', 'ended_at', 'error', 'webhook'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'completed', 'cancelled', 'failed'] },
    collection: { type: 'string' },
    seeds: { type: 'array', maxItems: MAX_SEEDS, items: { type: 'string' } },
    scope: { type: 'string', enum: ['path', 'host', 'domain'] },
    max_pages: countSchema,
    max_depth: countSchema,
    progress: {
      type: 'object',
      additionalProperties: false,
      required: ['stored', 'queued', 'failed', 'pages_per_minute', 'eta_seconds'],
      properties: { stored: countSchema, queued: countSchema, failed: countSchema, pages_per_minute: nullableNumber, eta_seconds: nullableNumber },
    },
    credits_quoted: countSchema,
    credits_used: { anyOf: [countSchema, { type: 'null' }], description: 'What the job was charged: null until it is over.' },
    created_at: { type: 'string' },
    started_at: nullableString,
    ended_at: nullableString,
    error: {
      anyOf: [{ type: 'object', additionalProperties: false, required: ['code', 'detail'], properties: { code: { type: 'string' }, detail: { type: 'string' } } }, { type: 'null' }],
    },
    webhook: nullableString,
  },
} as const;

export const crawlJobListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['jobs', 'next_cursor'],
  properties: { jobs: { type: 'array', maxItems: 50, items: crawlJobSchema }, next_cursor: nullableString },
} as const;

/** The job object of the API. */
export function presentJob(row: CrawlJobRow): Record<string, unknown> {
  return {
    id: row.id,
    status: row.status,
    collection: row.collection_name,
    seeds: JSON.parse(row.seeds) as string[],
    scope: row.scope,
    max_pages: row.max_pages,
    max_depth: row.max_depth,
    progress: { stored: row.stored, queued: row.queued, failed: row.failed, pages_per_minute: row.pages_per_minute, eta_seconds: row.eta_seconds },
    credits_quoted: row.credits_quoted,
    credits_used: row.credits_used,
    created_at: row.created_at,
    started_at: row.started_at,
    ended_at: row.ended_at,
    error: row.error_code !== null ? { code: row.error_code, detail: row.error_detail ?? '' } : null,
    webhook: row.webhook,
  };
}

function checkPatterns(list: readonly string[], key: 'include' | 'exclude'): void {
  for (const [i, pattern] of list.entries()) {
    const problem = urlPatternProblem(pattern);
    if (problem !== null) {
      throw new NotaryError('invalid_crawl_pattern', `${key}[${i}] "${pattern.slice(0, 80)}" is not a valid pattern (${problem})`, { member: key, index: i });
    }
  }
}

/** Exactly one of url and urls, every seed an absolute http(s) URL, valid patterns; defaults filled in. */
export function crawlJobRequest(body: CrawlJobBody): CrawlJobRequest {
  if ((body.url === undefined) === (body.urls === undefined)) {
    throw new NotaryError('invalid_request', 'Name the seeds with exactly one of "url" (one URL) and "urls" (up to 20)');
  }
  const raw = body.urls ?? [body.url ?? ''];
  const seeds: string[] = [];
  for (const given of raw) {
    const url = normaliseUrl(given.trim());
    if (url === null) throw new NotaryError('invalid_url', `"${given.slice(0, 200)}" is not an absolute http(s) URL`);
    if (!seeds.includes(url)) seeds.push(url);
  }
  const include = body.include ?? [];
  const exclude = body.exclude ?? [];
  checkPatterns(include, 'include');
  checkPatterns(exclude, 'exclude');
  return {
    seeds,
    collection: body.collection,
    scope: body.scope ?? 'path',
    maxPages: body.max_pages,
    maxDepth: body.max_depth ?? DEFAULT_MAX_DEPTH,
    include,
    exclude,
    webhook: body.webhook ?? null,
  };
}
