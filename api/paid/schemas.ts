import { allErrorCodes } from '../../core/errors.js';

/** Shared JSON Schema fragments of paid responses; the OpenAPI document is generated from the route schemas. */

/** A count (credits, words, milliseconds): a JSON integer is exact up to 2^53 - 1. */
export const countSchema = { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

/** An HTTP status code. */
export const httpStatusSchema = { type: 'integer', format: 'int32', minimum: 100, maximum: 599 } as const;

/** The most parties an MPP envelope can name (payments.modes.mpp.max_parties is at most 64). */
export const MAX_PAYING_PARTIES = 64;

export const creditsUsedSchema = { ...countSchema, description: 'Credits this call cost: never more than quoted.' } as const;

export const rateLimitBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['limit', 'remaining', 'reset_ms'],
  properties: { limit: countSchema, remaining: countSchema, reset_ms: countSchema },
} as const;

/** MPP: one receipt per paying party, adding up to credits_used. */
export const partyReceiptsSchema = {
  type: 'array',
  maxItems: MAX_PAYING_PARTIES,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['party', 'credits', 'share'],
    properties: { party: { type: 'string' }, credits: countSchema, share: { type: 'string' } },
  },
} as const;

/** The signed receipt of `X-Notary-Sign: required` (wire format: ../shared/docs/field-notes.md §5). */
export const notaryReceiptSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['issuer', 'issued_at', 'claim', 'credits', 'kid', 'request_id', 'signature'],
  properties: {
    issuer: { type: 'string' },
    issued_at: { type: 'string' },
    claim: { type: 'string' },
    credits: countSchema,
    kid: { type: 'string' },
    request_id: { type: 'string' },
    request_digest: { type: 'string' },
    response_digest: { type: 'string' },
    signature: { type: 'string' },
  },
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
