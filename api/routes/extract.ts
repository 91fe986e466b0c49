import type { NotaryConfig } from '../../core/config.js';
import { OUTPUT_MODES, RENDER_POLICIES, extractUrl, type ExtractDeps, type ExtractRequest } from '../../extract/index.js';
import { definePaidRoute, type PaidRoute } from '../paid/context.js';

export const extractBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 4096, description: 'An absolute http(s) URL.' },
    mode: { type: 'string', enum: [...OUTPUT_MODES], default: 'excerpt' },
    query: { type: 'string', maxLength: 2000, description: 'With mode excerpt: pick the passages that best answer it.' },
    render: {
      type: 'string',
      enum: [...RENDER_POLICIES],
      description: 'auto (default): a browser only for JS shells, at the static price; always: the rendered price.',
    },
    max_age: { type: 'integer', minimum: 0, description: 'Seconds a cached copy may be old; 0 fetches fresh.' },
  },
} as const;

const nullableString = { type: ['string', 'null'] } as const;

const extractResultProperties = {
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
} as const;

/** `POST /v1/extract`: fetch (SSRF-safe), render when needed, extract the main content. */
export function extractRoute(config: NotaryConfig, deps: ExtractDeps): PaidRoute {
  return definePaidRoute<ExtractRequest, Omit<Awaited<ReturnType<typeof extractUrl>>, 'rendered'>>({
    url: '/v1/extract',
    summary: 'Main content of a page as excerpt, text, markdown or html; failed extractions cost nothing.',
    body: extractBodySchema,
    result: { properties: extractResultProperties, required: Object.keys(extractResultProperties) },
    problems: [403, 404, 502, 504],
    price: (body) => ({ operation: 'extract', render: body.render ?? config.extract.render }),
    async work(body) {
      const { rendered: _rendered, ...result } = await extractUrl(body, deps);
      return result;
    },
  });
}
