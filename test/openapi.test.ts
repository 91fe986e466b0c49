import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allErrorCodes } from '../core/errors.js';
import { generateDocuments, LLMS_FILE, OPENAPI_FILE } from '../scripts/openapi.js';

type Operation = { responses: Record<string, { content: Record<string, unknown> }>; parameters?: Array<{ name: string }>; requestBody?: unknown };

/** The committed OpenAPI document and llms.txt are what `notary serve` serves on the default configuration. */
describe('spec/openapi.json and spec/llms.txt', () => {
  it('are up to date with the routes (regenerate with npx tsx scripts/openapi.ts)', async () => {
    const { openapi, llms } = await generateDocuments();
    expect(readFileSync(OPENAPI_FILE, 'utf8'), 'spec/openapi.json is stale: run npx tsx scripts/openapi.ts').toBe(openapi);
    expect(readFileSync(LLMS_FILE, 'utf8'), 'spec/llms.txt is stale: run npx tsx scripts/openapi.ts').toBe(llms);
  }, 120_000);

  it('documents every paid route with its body, 200 schema, headers and every problem status as problem+json', () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties: { code: { enum: string[] } } }> } };
    expect(doc.openapi).toBe('3.1.0');
    for (const path of ['/v1/search', '/v1/extract']) {
      const op = doc.paths[path]?.['post'];
      expect(op, path).toBeDefined();
      if (!op) continue;
      expect(op.requestBody).toBeDefined();
      expect(Object.keys(op.responses['200']?.content ?? {})).toEqual(['application/json']);
      for (const status of ['400', '401', '402', '408', '409', '413', '415', '422', '429', '500', '503']) {
        expect(op.responses[status]?.content['application/problem+json'], `${path} ${status}`).toEqual({ schema: { $ref: '#/components/schemas/Problem' } });
      }
      expect(op.parameters?.map((p) => p.name)).toEqual(expect.arrayContaining(['Idempotency-Key', 'X-Notary-Sign']));
    }
    expect(doc.components.schemas['Problem']?.properties.code.enum.sort()).toEqual(Object.keys(allErrorCodes()).sort());
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/openapi.json', '/llms.txt', '/.well-known/jwks.json', '/v1/receipts/log/inclusion']));
  });
});
