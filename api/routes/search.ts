import type { NotaryConfig } from '../../core/config.js';
import { NotaryError } from '../../core/errors.js';
import { normalizeQuery } from '../../search/query.js';
import type { SearchResultItem, SearchService } from '../../search/service.js';
import { definePaidRoute, type PaidRoute } from '../paid/context.js';

export interface SearchBody {
  query: string;
  depth: number;
  language?: string;
}

export function searchBodySchema(config: NotaryConfig) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['query', 'depth'],
    properties: {
      query: { type: 'string', minLength: 1, maxLength: config.search.max_query_length, pattern: '\\S', description: 'What to search for.' },
      depth: {
        type: 'integer',
        minimum: 1,
        maximum: config.search.max_depth,
        description: 'Higher depth adds reflection passes for hard queries; its price is set per depth (pricing.search.credits_by_depth, in every challenge and in credits_used).',
      },
      language: {
        type: 'string',
        pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$',
        maxLength: 35,
        description: 'Results in this language only (BCP 47, "en", "pt-BR"); default: the deployment\'s, else the query\'s own.',
      },
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
  },
} as const;

/** `POST /v1/search`: retrieve, rerank and (depth > 1) reflect; priced by depth. */
export function searchRoute(config: NotaryConfig, search: SearchService): PaidRoute {
  return definePaidRoute<SearchBody, { query: string; depth: number; results: SearchResultItem[] }>({
    url: '/v1/search',
    summary: 'Search the index; higher depth adds reflection passes, priced per depth.',
    body: searchBodySchema(config),
    result: {
      properties: { query: { type: 'string' }, depth: { type: 'integer' }, results: { type: 'array', items: searchResultItemSchema } },
      required: ['query', 'depth', 'results'],
    },
    facts: { items: searchResultItemSchema, from: (result) => result.results },
    prepare: (body) => ({ ...body, query: normalizeQuery(body.query, config.search.max_query_length) }),
    price: (body) => ({ operation: 'search', depth: body.depth }),
    async work(body, { requestId }) {
      const { results } = await search.search({ query: body.query, depth: body.depth, requestId, ...(body.language ? { language: body.language } : {}) });
      if (!Array.isArray(results)) throw new NotaryError('internal_error', 'search returned no result list');
      return { query: body.query, depth: body.depth, results };
    },
  });
}
