import { allErrorCodes } from '../../core/index.js';
import { countSchema } from '../../payments/index.js';

/** Shared JSON Schema fragments of paid responses; the OpenAPI document is generated from the route schemas. */

export { countSchema };

/** An HTTP status code. */
export const httpStatusSchema = { type: 'integer', format: 'int32', minimum: 100, maximum: 599 } as const;

export const creditsUsedSchema = { ...countSchema, description: 'Credits this call cost: never more than quoted.' } as const;

export const rateLimitBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['limit', 'remaining', 'reset_ms'],
  properties: { limit: countSchema, remaining: countSchema, reset_ms: countSchema },
} as const;

/** RFC 9457 problem details with notary's members; `code` is one of core/errors.ts. */
export const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'request_id', 'retryable'],
  additionalProperties: true,
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: httpStatusSchema,
    detail: { type: 'string' },
    // Read when the document is built, after the plug-ins registered their codes.
    code: {
      type: 'string',
      get enum(): string[] {
        return Object.keys(allErrorCodes());
      },
    },
    request_id: { type: 'string' },
    retryable: { type: 'boolean' },
  },
} as const;

/** Statuses every paid route can answer with a problem, whatever its work. */
export const PAID_ROUTE_PROBLEM_STATUSES = [400, 401, 402, 408, 409, 413, 415, 422, 429, 500, 503] as const;

export function problemResponses(statuses: readonly number[]): Record<number, { description: string; content: Record<string, { schema: typeof problemSchema }> }> {
  const out: Record<number, { description: string; content: Record<string, { schema: typeof problemSchema }> }> = {};
  for (const status of [...new Set(statuses)].sort((a, b) => a - b)) {
    const codes = Object.entries(allErrorCodes())
      .filter(([, entry]) => entry.status === status)
      .map(([code]) => code);
    out[status] = { description: `Problem (${codes.join(', ') || 'see docs/errors.md'})`, content: { 'application/problem+json': { schema: problemSchema } } };
  }
  return out;
}
