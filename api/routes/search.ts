import type { FastifyInstance } from 'fastify';
import { creditsForDepth, type NotaryConfig } from '../../core/config.js';
import { NotaryError } from '../../core/errors.js';
import type { SearchResultItem, SearchService } from '../../search/service.js';
import { requirePayer } from '../plugins/payer.js';
import { rateLimitBody, rateLimitBodySchema, type RateLimitBody } from '../plugins/rate-limit.js';

export interface SearchRouteOptions {
  config: NotaryConfig;
  search: SearchService;
}

export interface SearchBody {
  query: string;
  depth: number;
  language?: string;
}

export interface SearchReplyBody {
  query: string;
  depth: number;
  results: SearchResultItem[];
  credits_used: number;
  rate_limit: RateLimitBody;
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
        description: 'Higher depth adds reflection passes for hard queries and costs more credits.',
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

export const searchResponseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['query', 'depth', 'results', 'credits_used', 'rate_limit'],
  properties: {
    query: { type: 'string' },
    depth: { type: 'integer' },
    results: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['url', 'title', 'snippet', 'rerank_score'],
        properties: {
          url: { type: 'string' },
          title: { type: 'string' },
          snippet: { type: 'string' },
          rerank_score: { type: 'number', minimum: 0, maximum: 1 },
        },
      },
    },
    credits_used: { type: 'integer' },
    rate_limit: rateLimitBodySchema,
  },
} as const;

/**
 * `POST /v1/search`. Order: authenticate -> rate limit (onRequest hooks) -> validate -> balance pre-check -> search ->
 * one atomic charge. A search that throws charges nothing; a charge that loses a race returns 402 and no results.
 */
export async function searchRoute(app: FastifyInstance, options: SearchRouteOptions): Promise<void> {
  const { config, search } = options;
  app.post<{ Body: SearchBody; Reply: SearchReplyBody }>(
    '/v1/search',
    {
      schema: { body: searchBodySchema(config), response: { 200: searchResponseSchema } },
      onRequest: [app.authenticatePayer, app.enforceRateLimit],
    },
    async (request) => {
      const payer = requirePayer(request);
      const rateLimit = request.rateLimit;
      if (!rateLimit) throw new Error('search route reached without enforceRateLimit');
      const query = request.body.query.trim();
      const depth = request.body.depth;
      const credits = creditsForDepth(config, depth);
      await payer.ensureCanPay(credits);
      const language = request.body.language;
      const { results } = await search.search({ query, depth, requestId: request.id, ...(language ? { language } : {}) });
      if (!Array.isArray(results)) throw new NotaryError('internal_error', 'search returned no result list');
      await payer.charge(credits, { requestId: request.id, reason: `search depth ${depth}` });
      return {
        query,
        depth,
        results,
        credits_used: credits,
        rate_limit: rateLimitBody(rateLimit),
      };
    },
  );
}
