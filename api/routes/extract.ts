import type { FastifyInstance } from 'fastify';
import type { NotaryConfig } from '../../core/config.js';
import {
  OUTPUT_MODES,
  RENDER_POLICIES,
  extractUrl,
  type ExtractDeps,
  type ExtractRequest,
  type ExtractResult,
} from '../../extract/index.js';
import { requirePayer } from '../plugins/payer.js';
import { rateLimitBody, rateLimitBodySchema, type RateLimitBody } from '../plugins/rate-limit.js';

export interface ExtractRouteOptions {
  config: NotaryConfig;
  deps: ExtractDeps;
}

type ExtractReplyBody = Omit<ExtractResult, 'rendered'> & {
  credits_used: number;
  rate_limit: RateLimitBody;
};

export const extractBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 4096, description: 'An absolute http(s) URL.' },
    mode: { type: 'string', enum: [...OUTPUT_MODES], default: 'excerpt' },
    query: { type: 'string', maxLength: 2000, description: 'With mode excerpt: pick the passages that best answer it.' },
    render: { type: 'string', enum: [...RENDER_POLICIES], description: 'auto (default): a browser only for JS shells.' },
    max_age: { type: 'integer', minimum: 0, description: 'Seconds a cached copy may be old; 0 fetches fresh.' },
  },
} as const;

const nullableString = { type: ['string', 'null'] } as const;

export const extractResponseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'final_url', 'status', 'title', 'byline', 'site_name', 'lang', 'published_at', 'mode', 'content', 'excerpt', 'word_count', 'credits_used', 'rate_limit'],
  properties: {
    url: { type: 'string' },
    final_url: { type: 'string' },
    status: { type: ['integer', 'null'] },
    title: nullableString,
    byline: nullableString,
    site_name: nullableString,
    lang: nullableString,
    published_at: nullableString,
    mode: { type: 'string' },
    content: { type: 'string' },
    excerpt: { type: 'string' },
    word_count: { type: 'integer' },
    credits_used: { type: 'integer' },
    rate_limit: rateLimitBodySchema,
  },
} as const;

/**
 * `POST /v1/extract`: authenticate -> rate limit -> validate -> balance pre-check for the dearer (rendered) price ->
 * fetch and extract -> one atomic charge at the price of what was done. A failed extraction charges nothing.
 */
export async function extractRoute(app: FastifyInstance, options: ExtractRouteOptions): Promise<void> {
  const { config, deps } = options;
  app.post<{ Body: ExtractRequest; Reply: ExtractReplyBody }>(
    '/v1/extract',
    {
      schema: { body: extractBodySchema, response: { 200: extractResponseSchema } },
      onRequest: [app.authenticatePayer, app.enforceRateLimit],
    },
    async (request) => {
      const payer = requirePayer(request);
      const rateLimit = request.rateLimit;
      if (!rateLimit) throw new Error('extract route reached without enforceRateLimit');
      const mayRender = (request.body.render ?? config.extract.render) !== 'never';
      await payer.ensureCanPay(mayRender ? Math.max(config.extract.credits, config.extract.credits_rendered) : config.extract.credits);
      const { rendered, ...result } = await extractUrl(request.body, deps);
      const credits = rendered ? config.extract.credits_rendered : config.extract.credits;
      await payer.charge(credits, { requestId: request.id, reason: rendered ? 'extract rendered' : 'extract' });
      return {
        ...result,
        credits_used: credits,
        rate_limit: rateLimitBody(rateLimit),
      };
    },
  );
}
