import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Socket } from 'node:net';
import {
  DEFAULT_COLLECTION_ID,
  DEFAULT_COLLECTION_NAME,
  collectionSettingsOf,
  type CollectionSettings,
  NotaryError,
} from '../../core/index.js';
import {
  checkCollectionAccess,
  type CollectionRead,
  REPLAY_HEADER,
  type Admission,
  type PaidCallGate,
  type PaidResponseContext,
  registeredPlugins,
  FACTS_ORDER,
  type ResponseMember,
} from '../../payments/index.js';
import type { PriceRequest, StoredResponse } from '../../payments/index.js';
import { paymentRequestFrom } from './request.js';
import { PAID_ROUTE_PROBLEM_STATUSES, creditsUsedSchema, problemResponses, rateLimitBodySchema } from './schemas.js';

type JsonSchema = Readonly<Record<string, unknown>>;

interface ResultShape {
  properties: Readonly<Record<string, JsonSchema>>;
  required: readonly string[];
}

export interface WorkContext {
  requestId: string;
  /** The collection the call reads, for a route that reads one (PaidRouteDefinition.collection). */
  collection?: ResolvedCollection;
}

/** A collection a call reads: its id and name, and whether it is the deployment's only one (then no filter is needed). */
export interface ResolvedCollection extends CollectionRead {
  only: boolean;
  /** Its own search prices and maximum depth, where the operator set them. */
  settings: CollectionSettings;
}

/** Where the paid-route context finds collections by name (storage/collections.ts CollectionStore). */
export interface CollectionResolver {
  resolve(name: string): Promise<{ collection: { id: string; name: string; credits_by_depth?: string | null; max_depth?: number | null }; total: number } | undefined>;
}

/** Without a store, the deployment has the default collection alone. */
const DEFAULT_ONLY: CollectionResolver = {
  resolve: async (name) => (name === DEFAULT_COLLECTION_NAME ? { collection: { id: DEFAULT_COLLECTION_ID, name }, total: 1 } : undefined),
};

/**
 * A paid route as its file declares it: its request schema, its result, its price and its work. Everything else
 * (who pays, limits, idempotency, the charge, the shared response members) is the paid-route context's job, and a
 * route never names a payment mode.
 */
export interface PaidRouteDefinition<Body, Result extends object> {
  url: string;
  summary: string;
  /** JSON Schema of the body (validated before pricing). */
  body: JsonSchema;
  /** The route's own members of a 200 answer. */
  result: ResultShape;
  /** Another shape of a 200 answer (a batch's), told apart by its required members; the document lists both (oneOf). */
  alternativeResult?: ResultShape;
  /** Statuses the work itself can answer with a problem, besides the ones every paid route has. */
  problems?: readonly number[];
  /** The result list that `facts` repeats, with its item schema. */
  facts?: { items: JsonSchema; maxItems: number; from(result: Result): readonly unknown[] };
  /** Checks beyond the schema (400 NotaryErrors) and the body the route works on (e.g. its query trimmed). */
  prepare?(body: Body): Body;
  /**
   * The call's price request. For a route that reads a collection it is asked twice: first without one (the quote of a
   * challenge to a caller without credentials), then with the collection resolved (its own prices and limits apply;
   * a NotaryError thrown here, e.g. a depth above the collection's maximum, answers before anything is charged).
   */
  price(body: Body, collection?: ResolvedCollection): PriceRequest;
  /**
   * For a route that reads a collection: the name the body gives (undefined: the default collection). The context
   * resolves it (404 collection_not_found) and the gate checks the payer may read it (403 collection_forbidden), both
   * before anything is charged.
   */
  collection?(body: Body): string | undefined;
  /** How many of the quoted units a result delivered (a batch's URLs that succeeded): the call is charged for those. */
  units?(result: Result): number;
  work(body: Body, context: WorkContext): Promise<Result>;
}

/** A route definition with its types closed over, ready to register in the paid-route context. */
export interface PaidRoute {
  url: string;
  register(app: FastifyInstance, context: PaidContext): void;
}

export interface PaidContext {
  gate: PaidCallGate;
  /** Default: the default collection alone. */
  collections?: CollectionResolver;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact body bytes of a paid call. */
    rawBody: Buffer | null;
    /** Phase 1 of the paid-call path (who pays, within limits). */
    admission: Admission | null;
    /** The credits_used of the answer this call made (not of a replay); null until then (metrics count it on a 200). */
    creditsCharged: number | null;
  }
}

export function sendStored(reply: FastifyReply, response: StoredResponse, replayed: boolean): FastifyReply {
  reply.code(response.status).headers(response.headers);
  if (replayed) reply.header(REPLAY_HEADER, 'true');
  return reply.send(response.body);
}

/** The registered plug-ins' members of a paid 200 body and the route's facts, in their order. */
function responseMembers(facts: JsonSchema | undefined): Record<string, JsonSchema> {
  const members: ResponseMember[] = registeredPlugins().flatMap((plugin) => plugin.responseMembers ?? []);
  if (facts) members.push({ name: 'facts', schema: facts, order: FACTS_ORDER });
  return Object.fromEntries(members.sort((a, b) => a.order - b.order).map((member) => [member.name, member.schema]));
}

export function definePaidRoute<Body, Result extends object>(definition: PaidRouteDefinition<Body, Result>): PaidRoute {
  return {
    url: definition.url,
    register(app, { gate, collections = DEFAULT_ONLY }) {
      const shape = (result: ResultShape) => ({
        type: 'object',
        additionalProperties: false,
        required: [...result.required, 'credits_used', 'rate_limit'],
        properties: {
          ...result.properties,
          credits_used: creditsUsedSchema,
          rate_limit: rateLimitBodySchema,
          ...responseMembers(definition.facts ? { type: 'array', maxItems: definition.facts.maxItems, items: definition.facts.items } : undefined),
        },
      });
      const response200 = definition.alternativeResult ? { oneOf: [shape(definition.result), shape(definition.alternativeResult)] } : shape(definition.result);
      // `summary` is not Fastify's, but OpenAPI generation reads it from the route schema.
      const schema = {
        summary: definition.summary,
        'x-notary-paid': true,
        body: definition.body,
        response: { 200: response200, ...problemResponses([...PAID_ROUTE_PROBLEM_STATUSES, ...(definition.problems ?? [])]) },
      } as FastifySchema;
      app.post(
        definition.url,
        { schema },
        async (request, reply) => {
          const admission = request.admission;
          if (!admission) throw new Error('paid route reached without the paid-call admission');
          // The body passed the route's schema.
          const validated = request.body as Body;
          const body = definition.prepare ? definition.prepare(validated) : validated;
          // Quoted from the price list in force when the call was admitted: fixed before the work.
          const quote = admission.pricing.price(definition.price(body));
          const rawBody = request.rawBody ?? Buffer.alloc(0);
          const collection = definition.collection ? await resolveCollection(collections, definition.collection(body), admission, () => gate.begin(admission, rawBody, quote)) : undefined;
          const price = collection ? admission.pricing.price(definition.price(body, collection)) : quote;
          const begun = await gate.begin(admission, rawBody, price, collection);
          if (begun.kind === 'replay') return sendStored(reply, begun.response, true);
          const work: WorkContext = { requestId: request.id, ...(collection ? { collection } : {}) };
          const response = await begun.call.run(() => definition.work(body, work), {
            body: (result: Result, context: PaidResponseContext) => {
              request.creditsCharged = context.creditsUsed;
              return {
                ...result,
                credits_used: context.creditsUsed,
                rate_limit: { limit: context.rateLimit.limit, remaining: context.rateLimit.remaining, reset_ms: context.rateLimit.resetMs },
                ...context.members,
                ...(context.facts && definition.facts ? { facts: definition.facts.from(result) } : {}),
                ...(context.test ? { test: true } : {}),
              };
            },
            serialize: (value) => String(reply.code(200).serialize(value)),
            deliverable: () => answerCanReachCaller(request, reply),
            ...(definition.units ? { units: definition.units } : {}),
          });
          return sendStored(reply, response, false);
        },
      );
    },
  };
}

/**
 * The collection a call names (default: the default collection). An unknown name is 404 collection_not_found, but
 * not to a caller without credentials (it gets the challenges: names are not told to strangers) nor to one limited to
 * some collections (403 collection_forbidden, as for any collection outside its list).
 */
export async function resolveCollection(
  collections: CollectionResolver,
  given: string | undefined,
  admission: Admission,
  challenge: () => Promise<unknown>,
): Promise<ResolvedCollection> {
  const name = given ?? DEFAULT_COLLECTION_NAME;
  const found = await collections.resolve(name);
  if (found) {
    const { id, name: foundName, credits_by_depth = null, max_depth = null } = found.collection;
    return { id, name: foundName, only: found.total <= 1, settings: collectionSettingsOf({ credits_by_depth, max_depth }) };
  }
  const payer = admission.payer;
  if (!payer) await challenge(); // throws the challenges of a call without credentials
  if (payer?.collections !== undefined) checkCollectionAccess(payer, { id: '', name });
  throw new NotaryError('collection_not_found', `There is no collection "${name}": name one of this service's collections, or leave "collection" out for "${DEFAULT_COLLECTION_NAME}"`, {
    collection: name,
  });
}

/**
 * Whether this answer can still be written to its caller: the response was not destroyed, and the connection is open
 * for writing (a connection that an earlier answer closed, e.g. a 413 ahead of this call in a pipeline, is not).
 */
function answerCanReachCaller(request: FastifyRequest, reply: FastifyReply): boolean {
  const socket = request.raw.socket as Socket | null;
  if (reply.raw.destroyed || reply.raw.writableEnded || socket === null) return false;
  // Compared with true/false: an injected request (tests, light-my-request) has a socket without these members.
  return socket.destroyed !== true && socket.writable !== false;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The paid-route context (Fastify encapsulation): every route registered inside runs identify -> rate limit (from
 * the headers, before the body is read) -> validate -> price -> authorize -> work -> settle -> response members.
 * JSON bodies are kept as the exact bytes too (a mode may bind their digest, a signed receipt hashes them) and must be UTF-8.
 */
export async function paidRoutes(app: FastifyInstance, options: { context: PaidContext; routes: readonly PaidRoute[] }): Promise<void> {
  const { gate } = options.context;
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.decorateRequest('rawBody', null);
  app.decorateRequest('admission', null);
  app.decorateRequest('creditsCharged', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    request.rawBody = bytes;
    if (bytes.length === 0) {
      done(new NotaryError('invalid_json', 'The body is empty but the content type is application/json'), undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      done(new NotaryError('invalid_json', 'The body is not valid UTF-8'), undefined);
      return;
    }
    parseJson(request, text, (err, parsed) => {
      if (err) done(new NotaryError('invalid_json', `The body is not valid JSON: ${err.message}`), undefined);
      else done(null, parsed);
    });
  });
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const admission = await gate.admit(paymentRequestFrom(request));
    request.admission = admission;
    reply.headers(admission.rateLimitHeaders);
  });
  for (const route of options.routes) route.register(app, options.context);
}
