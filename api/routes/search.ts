import { COLLECTION_NAME_PATTERN, DEFAULT_COLLECTION_NAME, NotaryError } from '../../core/index.js';
import type { NotaryConfig } from '../../core/index.js';
import {
  normalizeQuery,
  MAX_HIGHLIGHTS,
  searchOptions,
  searchOptionsSchema,
  type SearchOptions,
  type SearchOptionsBody,
} from '../../search/index.js';
import type { SearchResultItem, SearchService } from '../../search/index.js';
import { definePaidRoute, type PaidRoute } from '../paid/context.js';

export interface SearchBody extends SearchOptionsBody {
  query: string;
  depth: number;
  language?: string;
  collection?: string;
}

/** The `collection` member of the search and extract bodies. */
export const collectionSchema = {
  type: 'string',
  pattern: COLLECTION_NAME_PATTERN,
  maxLength: 64,
  description: `The collection to read (default: "${DEFAULT_COLLECTION_NAME}", every page not put in another one). An unknown one is 404 collection_not_found; one the credentials may not read, 403 collection_forbidden (nothing charged).`,
} as const;

/** No control characters (tab, LF, CR aside), at least one letter or digit of the common scripts (search/query.ts refuses the rest). */
const TEXT = '[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]';
const LETTER_OR_DIGIT =
  '[0-9A-Za-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u024F\\u0391-\\u03A9\\u03B1-\\u03C9\\u0410-\\u044F\\u05D0-\\u05EA\\u0621-\\u064A\\u0905-\\u0939\\u3041-\\u3096\\u30A1-\\u30FA\\u4E00-\\u9FFF\\uAC00-\\uD7A3]';
export const QUERY_PATTERN = `^${TEXT}*${LETTER_OR_DIGIT}${TEXT}*$`;

export function searchBodySchema(config: NotaryConfig) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['query', 'depth'],
    properties: {
      query: { type: 'string', minLength: 1, maxLength: config.search.max_query_length, pattern: QUERY_PATTERN, description: 'What to search for: at least one letter or digit, no control characters.' },
      depth: {
        type: 'integer',
        format: 'int32',
        minimum: 1,
        maximum: config.search.max_depth,
        description: 'Higher depth adds reflection passes for hard queries; its price is set per depth (pricing.search.credits_by_depth, plus pricing.search.cross_encoder_credits where the cross-encoder judges the results; in every challenge and in credits_used).',
      },
      language: {
        type: 'string',
        pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$',
        maxLength: 35,
        description: 'Results in this language only (BCP 47, "en", "pt-BR"); default: the deployment\'s, else the query\'s own.',
      },
      collection: collectionSchema,
      ...searchOptionsSchema(config.search),
    },
  } as const;
}

export const searchResultItemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'title', 'snippet', 'rerank_score'],
  properties: {
    url: { type: 'string' },
    title: { type: 'string' },
    snippet: { type: 'string' },
    rerank_score: { type: 'number', minimum: 0, maximum: 1 },
    highlights: {
      type: 'array',
      maxItems: MAX_HIGHLIGHTS,
      description: "Only when the request asks for highlights: the page's passages most relevant to the query, best first.",
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['text', 'score'],
        properties: { text: { type: 'string' }, score: { type: 'number', minimum: 0, maximum: 1 } },
      },
    },
    published_date: {
      type: 'string',
      format: 'date-time',
      description: 'Only when the request asks for it (`include: ["published_date"]`) and the page\'s publication date is known: that date, ISO 8601 UTC.',
    },
  },
} as const;

/** `POST /v1/search`: retrieve, rerank and (depth > 1) reflect; priced by depth. */
export function searchRoute(config: NotaryConfig, search: SearchService): PaidRoute {
  const maxItems = Math.max(config.search.max_results_cap, config.search.max_results);
  // The options as the pipeline takes them, by body (made once in prepare, where an invalid one is refused unpaid).
  const prepared = new WeakMap<SearchBody, SearchOptions>();
  return definePaidRoute<SearchBody, { query: string; depth: number; results: SearchResultItem[] }>({
    url: '/v1/search',
    summary: 'Search the index; higher depth adds reflection passes, priced per depth.',
    body: searchBodySchema(config),
    result: {
      properties: {
        query: { type: 'string' },
        depth: { type: 'integer', format: 'int32', minimum: 1, maximum: config.search.max_depth },
        results: { type: 'array', maxItems, items: searchResultItemSchema },
      },
      required: ['query', 'depth', 'results'],
    },
    // 403 collection_forbidden, 404 collection_not_found.
    problems: [403, 404],
    facts: { items: searchResultItemSchema, maxItems, from: (result) => result.results },
    prepare: (body) => {
      const options = searchOptions(body, config.search.snippet_chars);
      const next = { ...body, query: normalizeQuery(body.query, config.search.max_query_length) };
      prepared.set(next, options);
      return next;
    },
    price: (body, collection) => {
      const own = collection?.settings;
      if (own?.maxDepth != null && body.depth > own.maxDepth) {
        throw new NotaryError('depth_out_of_range', `depth must be an integer from 1 to ${own.maxDepth} in the collection "${collection?.name ?? ''}" (its own maximum)`, {
          max_depth: own.maxDepth,
          collection: collection?.name,
        });
      }
      return { operation: 'search', depth: body.depth, ...(own?.creditsByDepth ? { creditsByDepth: own.creditsByDepth } : {}) };
    },
    collection: (body) => body.collection,
    async work(body, { requestId, collection }) {
      const given = prepared.get(body) ?? searchOptions(body, config.search.snippet_chars);
      // The collection filters inside retrieval, unless it is the deployment's only one (every page is in it).
      const options = collection && !collection.only ? { ...given, filter: { ...given.filter, collections: [collection.id] } } : given;
      const { results } = await search.search({ query: body.query, depth: body.depth, requestId, ...(body.language ? { language: body.language } : {}), ...options });
      if (!Array.isArray(results)) throw new NotaryError('internal_error', 'search returned no result list');
      return { query: body.query, depth: body.depth, results };
    },
  });
}
