/** JSON Schema of paid responses' members, without any HTTP framework: what plug-ins add to a paid 200 body. */

/** A count (credits, words, milliseconds): a JSON integer is exact up to 2^53 - 1. */
export const countSchema = { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

/**
 * A member a plug-in adds to the 200 body of every paid route, with its JSON Schema (Fastify serialises the body in
 * schema order, and the OpenAPI document lists it). `order` places it among the others: the route's facts are at 40.
 */
export interface ResponseMember {
  readonly name: string;
  readonly schema: Readonly<Record<string, unknown>>;
  readonly order: number;
}

/** Where a paid route's `facts` member sits among the plug-ins' members. */
export const FACTS_ORDER = 40;
