import type { NotaryConfig } from '../../core/index.js';
import { NotaryError } from '../../core/index.js';
import { OUTPUT_MODES, RENDER_POLICIES, extractUrl, type ExtractDeps, type ExtractRequest, type ExtractResult } from '../../extract/index.js';
import { definePaidRoute, type PaidRoute } from '../paid/context.js';
import { collectionSchema } from './search.js';
import { countSchema, httpStatusSchema, problemSchema } from '../paid/schemas.js';
import { MAX_BATCH_URLS, batchLimits, duplicateUrls, extractBatch, succeeded, type BatchResult } from './extract-batch.js';

const label = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const octet = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const hex = '[0-9A-Fa-f]{1,4}';
/**
 * An absolute http(s) URL every WHATWG URL parser takes: a host name whose last label starts with a letter (as every
 * top-level domain does; an all-digit one would be read as an IPv4 number), a dotted IPv4 address or a bracketed
 * IPv6 one, an optional port, no credentials. What it refuses is answered as invalid_url (api/problem.ts).
 */
export const ABSOLUTE_HTTP_URL =
  `^[Hh][Tt][Tt][Pp][Ss]?://(?:(?:${label}\\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?|(?:${octet}\\.){3}${octet}|\\[(?:(?:${hex}:){7}${hex}|::(?:${hex}:){0,6}${hex}|::)\\])` +
  '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}|0))?(?:[/?#]\\S*)?$';

const urlSchema = { type: 'string', minLength: 1, maxLength: 4096, pattern: ABSOLUTE_HTTP_URL } as const;

export const extractBodySchema = {
  type: 'object',
  additionalProperties: false,
  // One page (`url`) or a batch (`urls`), never both; either alone is answered as invalid_batch (api/problem.ts).
  oneOf: [{ required: ['url'] }, { required: ['urls'] }],
  properties: {
    url: { ...urlSchema, description: 'An absolute http(s) URL.' },
    urls: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_URLS,
      uniqueItems: true,
      items: urlSchema,
      description:
        `A batch instead of url: 1 to ${MAX_BATCH_URLS} distinct absolute http(s) URLs, answered in order with a result or a problem each; ` +
        'quoted at the per-URL price times their number, charged only for those that succeed.',
    },
    mode: { type: 'string', enum: [...OUTPUT_MODES], default: 'excerpt' },
    query: { type: 'string', maxLength: 2000, description: 'With mode excerpt: pick the passages that best answer it.' },
    render: {
      type: 'string',
      enum: [...RENDER_POLICIES],
      description: 'auto (default): a browser only for JS shells, at the static price; always: the rendered price.',
    },
    max_age: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'Seconds a cached copy may be old; 0 fetches fresh.' },
    include_comments: { type: 'boolean', default: false, description: 'Keep the reader comments after the article.' },
    collection: {
      ...collectionSchema,
      description: `${collectionSchema.description} The page is fetched as without it: the collection decides who may call.`,
    },
  },
} as const;

const nullableString = { type: ['string', 'null'] } as const;

const extractResultProperties = {
  url: { type: 'string' },
  final_url: { type: 'string' },
  status: { ...httpStatusSchema, type: ['integer', 'null'] },
  title: nullableString,
  byline: nullableString,
  site_name: nullableString,
  lang: nullableString,
  published_at: nullableString,
  mode: { type: 'string' },
  content: { type: 'string' },
  excerpt: { type: 'string' },
  word_count: countSchema,
} as const;

const { url: _url, ...pageProperties } = extractResultProperties;

/** One URL of a batch: `ok` and the page's members, or `ok: false` and its problem. */
const batchItemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'ok'],
  properties: {
    url: { type: 'string', description: 'The URL as the request listed it.' },
    ok: { type: 'boolean' },
    ...pageProperties,
    problem: problemSchema,
  },
} as const;

/** The body: one page (`url`) or a batch (`urls`) with the options they share. */
export type ExtractBody = Omit<ExtractRequest, 'url'> & { url?: string; urls?: string[]; collection?: string };

type SingleResult = Omit<ExtractResult, 'rendered'>;

function isBatch(result: SingleResult | BatchResult): result is BatchResult {
  return 'results' in result;
}

/** `POST /v1/extract`: fetch (SSRF-safe), render when needed, extract the main content; one page or a batch. */
export function extractRoute(config: NotaryConfig, deps: ExtractDeps): PaidRoute {
  const limits = batchLimits(config);
  return definePaidRoute<ExtractBody, SingleResult | BatchResult>({
    url: '/v1/extract',
    summary: 'Main content of a page (url) or of up to 20 pages (urls) as excerpt, text, markdown or html; failed extractions cost nothing.',
    body: extractBodySchema,
    result: { properties: extractResultProperties, required: Object.keys(extractResultProperties) },
    alternativeResult: {
      properties: { results: { type: 'array', minItems: 1, maxItems: MAX_BATCH_URLS, items: batchItemSchema } },
      required: ['results'],
    },
    problems: [403, 404, 502, 504],
    prepare(body) {
      if (body.urls !== undefined) {
        const pair = duplicateUrls(body.urls);
        if (pair) {
          throw new NotaryError('invalid_batch', `urls[${pair[0]}] and urls[${pair[1]}] name the same page; list each URL once`, { duplicate: pair });
        }
      }
      return body;
    },
    price: (body) => ({ operation: 'extract', render: body.render ?? config.extract.render, ...(body.urls !== undefined ? { urls: body.urls.length } : {}) }),
    units: (result) => (isBatch(result) ? succeeded(result) : 1),
    collection: (body) => body.collection,
    async work(body, { requestId }) {
      const { url, urls, collection: _collection, ...options } = body;
      if (urls !== undefined) return extractBatch(urls, options, deps, limits, requestId);
      const { rendered: _rendered, ...result } = await extractUrl({ ...options, url: url ?? '' }, deps);
      return result;
    },
  });
}
