import { describe, expect, it } from 'vitest';
import { configSchema } from '../core/config.js';
import { parseHttpUrl } from '../extract/fetch/address-policy.js';
import { parseIdempotencyKey } from '../payments/paid-call.js';
import { normalizeQuery } from '../search/query.js';
import { seededRandom } from '../testkit/seeded-random.js';
import { API_KEY_SECURITY_SCHEME } from '../payments/modes/api-key/index.js';
import { openApiDocument, type RouteRecord } from './openapi.js';
import { problemSchema } from './paid/schemas.js';
import { ABSOLUTE_HTTP_URL } from './routes/extract.js';
import { QUERY_PATTERN } from './routes/search.js';

/**
 * Schemathesis ST202 ("schema-valid request rejected"): every value a pattern of the OpenAPI document allows must be
 * one the server takes. Each pattern is checked against the server's own parser on hand-picked edges and on
 * thousands of seeded random strings drawn from the characters that matter.
 */
const random = seededRandom(20261126);
function draw(alphabet: string, maxLength: number): string {
  const length = Math.floor(random() * (maxLength + 1));
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(random() * alphabet.length)] ?? '';
  return out;
}
const accepts = (parse: () => unknown): boolean => {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
};

function documentOf(routes: RouteRecord[]) {
  return openApiDocument(routes, { version: 'test', securitySchemes: [API_KEY_SECURITY_SCHEME] }, problemSchema) as {
    paths: Record<string, Record<string, { parameters?: Array<{ name: string; schema: { pattern?: string; maxLength?: number } }>; responses: Record<string, { content: Record<string, unknown> }> }>>;
  };
}

describe('the OpenAPI document allows only what the server takes', () => {
  it('Idempotency-Key: its pattern admits only keys payments/paid-call.ts parses', () => {
    const doc = documentOf([{ methods: ['POST'], url: '/v1/search', schema: { 'x-notary-paid': true, body: { type: 'object' } } }]);
    const header = doc.paths['/v1/search']?.['post']?.parameters?.find((p) => p.name === 'Idempotency-Key');
    expect(header?.schema.pattern, 'the header has a pattern').toBeDefined();
    const pattern = new RegExp(header?.schema.pattern ?? '', 'u');
    const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
    const edges = [' ', '', '"', '""', '"a"', '"a', 'a"', 'a\\b', 'a b', 'x'.repeat(255), 'x'.repeat(256), `"${'x'.repeat(255)}"`, '\u00e9'];
    let admitted = 0;
    for (const value of [...edges, ...Array.from({ length: 5000 }, () => draw(ascii + '\t\u00e9', 8))]) {
      if (!pattern.test(value)) continue;
      admitted++;
      expect(accepts(() => parseIdempotencyKey(value)), JSON.stringify(value)).toBe(true);
    }
    expect(admitted).toBeGreaterThan(100);
  });

  it('extract url: its pattern admits only absolute http(s) URLs the fetcher parses', () => {
    const pattern = new RegExp(ABSOLUTE_HTTP_URL, 'u');
    const edges = ['http://a', 'HTTP://A', 'http://0', 'http://0x12', 'http://1.2.3.999', 'http://1.2.3.4', 'http://[::]', 'http://[::1]:0/', 'http://a.b.', 'http://a:65535', 'http://a:65536', 'http://u@a', 'http://a/ b', 'http://a#\u0090', 'http://-a', 'http://1password.com'];
    let admitted = 0;
    for (const value of [...edges, ...Array.from({ length: 20000 }, () => `${random() < 0.5 ? 'http' : 'hTtPs'}://${draw('ab0129.-:@[]/?#% x', 14)}`)]) {
      if (!pattern.test(value)) continue;
      admitted++;
      expect(accepts(() => parseHttpUrl(value)), value).toBe(true);
    }
    expect(admitted).toBeGreaterThan(500);
  });

  it('search query: its pattern admits only queries search/query.ts searches', () => {
    const maxLength = configSchema.parse({}).search.max_query_length;
    const pattern = new RegExp(QUERY_PATTERN, 'u');
    const edges = ['a', ' a ', '?!', '\u0000a', 'a\tb', '\u00e9', '\u4e0a', '\u200b', '\u00d7', '\u0640', 'a\u0085'];
    let admitted = 0;
    for (const value of [...edges, ...Array.from({ length: 5000 }, () => draw('a1 ?\t\u0000\u0001\u007f\u0085\u00e9\u00d7\u200b\u4e0a\u0640.', 6))]) {
      if (!pattern.test(value)) continue;
      admitted++;
      expect(accepts(() => normalizeQuery(value, maxLength)), JSON.stringify(value)).toBe(true);
    }
    expect(admitted).toBeGreaterThan(100);
  });

  it('declares 4XX and 500 problems on every public route and the response media type of routes without a schema', () => {
    const doc = documentOf([{ methods: ['GET'], url: '/metrics', schema: { 'x-notary-produces': 'text/plain; version=0.0.4' } }]);
    const responses = doc.paths['/metrics']?.['get']?.responses ?? {};
    expect(Object.keys(responses['200']?.content ?? {})).toEqual(['text/plain; version=0.0.4']);
    expect(Object.keys(responses['4XX']?.content ?? {})).toEqual(['application/problem+json']);
    expect(Object.keys(responses['500']?.content ?? {})).toEqual(['application/problem+json']);
  });
});
