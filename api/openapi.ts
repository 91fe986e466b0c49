import type { FastifyInstance, RouteOptions } from 'fastify';
import { allErrorCodes } from '../core/index.js';

type Json = Record<string, unknown>;

/** What the OpenAPI document is built from: every route as Fastify registered it, with its schema. */
export interface RouteRecord {
  methods: string[];
  url: string;
  schema: Json;
}

/** Route schema members that are ours (Fastify ignores them): the OpenAPI document reads them. */
export interface RouteDocs {
  summary?: string;
  description?: string;
  tags?: string[];
  /** A paid route: payment headers, security schemes and the paid-call problems apply. */
  'x-notary-paid'?: boolean;
  /** An account route (api/account-routes.ts): authenticated and rate limited as a paid call, never charged. */
  'x-notary-authenticated'?: boolean;
  /** Response media types of a route without a response schema, e.g. text/plain for the checkpoint. */
  'x-notary-produces'?: string;
  /**
   * Query members of which a request names exactly one (the handler checks it and says so): the document makes the
   * query string one exploded object parameter whose schema says it, so no generated request breaks the rule.
   */
  'x-notary-query-one-of'?: readonly string[];
}

declare module 'fastify' {
  // The documentation members are part of every route schema (the OpenAPI document reads them).
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FastifySchema extends RouteDocs {}
}

/** Records every route registered after this call (Fastify's onRoute hook), HEAD routes excluded. */
export function recordRoutes(app: FastifyInstance): RouteRecord[] {
  const routes: RouteRecord[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    // The web dashboard (its pages and its cookie-session JSON API) is a browser app, not the API agents call.
    if (route.url === '/dashboard' || route.url.startsWith('/dashboard/')) return;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase()).filter((m) => m !== 'HEAD');
    if (methods.length === 0) return;
    routes.push({ methods, url: route.url, schema: (route.schema ?? {}) as Json });
  });
  return routes;
}

export interface OpenApiOptions {
  version: string;
  /** The security schemes of the payment modes the deployment offers (each mode describes its own), in their order. */
  securitySchemes: ReadonlyArray<{ key: string; scheme: Readonly<Record<string, unknown>> }>;
}

const paidHeaders: Json[] = [
  {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'A retried call with the same key and body gets the stored response and is charged once (1-255 visible ASCII characters).',
    // payments/paid-call.ts: 1-255 visible ASCII characters but `"` and `\`, bare or as a structured-field string.
    schema: { type: 'string', maxLength: 257, pattern: '^(?:[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,255}|"[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,255}")$' },
  },
  {
    name: 'X-Notary-Sign',
    in: 'header',
    required: false,
    description: '`required` adds a signed receipt (`notary_receipt`) and `facts` to the response.',
    schema: { type: 'string', enum: ['required'] },
  },
  {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    // Any value is taken (none is refused), so the schema constrains nothing: its size is bounded by server.max_header_bytes.
    description: 'Echoed when well-formed (8-64 of A-Z a-z 0-9 _ -); otherwise the service assigns one.',
    schema: { type: 'string' },
  },
];

const responseHeaders: Json = {
  'X-Request-Id': { description: 'The request id (`req_...`), also in problem bodies as `request_id`.', schema: { type: 'string' } },
};

const paidResponseHeaders: Json = {
  ...responseHeaders,
  RateLimit: { description: 'IETF rate-limit header: `"<tier>";r=<remaining>;t=<seconds to reset>`.', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'IETF rate-limit policy: `"<tier>";q=<burst>;w=<window seconds>`.', schema: { type: 'string' } },
};

const retryAfterHeaders: Json = {
  ...paidResponseHeaders,
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 } },
};

/** `/v1/things/:id` style paths become `/v1/things/{id}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operationId(method: string, url: string): string {
  const words = url
    .replace(/^\/(v\d+\/)?/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const name = words.map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())).join('');
  return method === 'POST' ? name : `${method.toLowerCase()}${name.charAt(0).toUpperCase()}${name.slice(1)}`;
}

function queryParameters(schema: Json | undefined, oneOf: readonly string[] | undefined): Json[] {
  if (!schema) return [];
  if (oneOf) {
    const named = { ...schema, oneOf: oneOf.map((name) => ({ required: [name] })) };
    return [{ name: 'query', in: 'query', required: true, style: 'form', explode: true, description: `Exactly one of ${oneOf.join(', ')}.`, schema: named }];
  }
  const properties = (schema['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((schema['required'] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({ name, in: 'query', required: required.has(name), schema: property }));
}

function responses(schema: Json, docs: RouteDocs, paid: boolean, limited: boolean): Json {
  const declared = (schema['response'] ?? {}) as Record<string, Json>;
  const out: Json = {};
  for (const [status, entry] of Object.entries(declared).sort(([a], [b]) => a.localeCompare(b))) {
    const headers = status === '429' || status === '409' || status === '503' ? retryAfterHeaders : paid || limited ? paidResponseHeaders : responseHeaders;
    if (status === '204') {
      out[status] = { description: 'No content', headers };
    } else if ('content' in entry) {
      out[status] = { description: String(entry['description'] ?? status), headers, content: entry['content'] };
    } else {
      const description = typeof entry['description'] === 'string' ? entry['description'] : status === '200' ? 'Success' : `Status ${status}`;
      out[status] = { description, headers, content: { 'application/json': { schema: entry } } };
    }
  }
  if (!Object.keys(out).some((status) => status.startsWith('2'))) {
    out['200'] = { description: 'Success', headers: responseHeaders, content: { [docs['x-notary-produces'] ?? 'application/json']: { schema: {} } } };
  }
  if (!paid) {
    // Any route answers a malformed request, an unknown method or a fault of its own with a problem.
    const problem = (description: string) => ({ description, headers: responseHeaders, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
    out['4XX'] ??= problem('Problem: the request (its method, query or headers)');
    out['500'] ??= problem('Problem: internal_error');
    out['default'] = problem('Problem');
  }
  return out;
}

/** Replaces every inline copy of the problem schema by a reference to the one component. */
function referenceProblems(value: unknown, problem: string): unknown {
  if (Array.isArray(value)) return value.map((v) => referenceProblems(v, problem));
  if (value === null || typeof value !== 'object') return value;
  if (JSON.stringify(value) === problem) return { $ref: '#/components/schemas/Problem' };
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, referenceProblems(v, problem)]));
}

/**
 * The OpenAPI 3.1 document of the routes as registered: bodies, query strings, every declared status with its
 * schema (problems as application/problem+json), the paid-call headers and the deployment's payment modes.
 */
export function openApiDocument(routes: readonly RouteRecord[], options: OpenApiOptions, problemSchema: Json): Json {
  const modes = options.securitySchemes;
  const paths: Record<string, Json> = {};
  const sorted = [...routes].sort((a, b) => a.url.localeCompare(b.url));
  for (const route of sorted) {
    const docs = route.schema as RouteDocs & Json;
    const paid = docs['x-notary-paid'] === true;
    const authenticated = paid || docs['x-notary-authenticated'] === true;
    for (const method of route.methods) {
      const operation: Json = {
        operationId: operationId(method, route.url),
        ...(docs.summary ? { summary: docs.summary } : {}),
        ...(docs.description ? { description: docs.description } : {}),
        tags: docs.tags ?? [paid ? 'paid' : 'public'],
      };
      const pathParameters = Object.entries(((route.schema['params'] as Json | undefined)?.['properties'] ?? {}) as Record<string, Json>).map(([name, property]) => ({
        name,
        in: 'path',
        required: true,
        schema: property,
      }));
      const parameters = [...pathParameters, ...queryParameters(route.schema['querystring'] as Json | undefined, docs['x-notary-query-one-of']), ...(paid ? paidHeaders : [])];
      if (parameters.length > 0) operation['parameters'] = parameters;
      if (route.schema['body']) {
        operation['requestBody'] = { required: true, content: { 'application/json': { schema: route.schema['body'] } } };
      }
      operation['responses'] = responses(route.schema, docs, paid, authenticated);
      operation['security'] = authenticated ? modes.map((m) => ({ [m.key]: [] })) : [];
      (paths[openApiPath(route.url)] ??= {})[method.toLowerCase()] = operation;
    }
  }
  const document: Json = {
    openapi: '3.1.0',
    info: {
      title: 'notary',
      version: options.version,
      summary: 'Self-hosted web search and page extraction for AI agents, paid per call.',
      description:
        'Every paid call is charged only when it succeeded, never more than quoted, and once per Idempotency-Key. Errors are ' +
        'RFC 9457 application/problem+json with a stable `code` (docs/errors.md), `request_id` and `retryable`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    paths: referenceProblems(paths, JSON.stringify(problemSchema)),
    components: {
      schemas: { Problem: problemSchema },
      securitySchemes: Object.fromEntries(modes.map((m) => [m.key, m.scheme])),
    },
    'x-error-codes': Object.fromEntries(Object.entries(allErrorCodes()).map(([code, entry]) => [code, { status: entry.status, retryable: entry.retryable }])),
  };
  return document;
}

export interface LlmsTxtOptions {
  prices: ReadonlyArray<{ call: string; credits: number; amount: string }>;
  maxDepth: number;
}

/** llms.txt (llmstxt.org): what an agent needs to call the service, in plain Markdown, from the same routes. */
export function llmsTxt(document: Json, options: LlmsTxtOptions): string {
  const paths = document['paths'] as Record<string, Record<string, Json>>;
  const lines: string[] = [
    '# notary',
    '',
    '> Self-hosted web search and page extraction for AI agents. JSON over HTTP; every paid call reports `credits_used`,',
    '> `rate_limit` and an `X-Request-Id`; errors are application/problem+json with a stable `code` and `retryable`.',
    '',
    'Call `POST /v1/search` with `{"query": "...", "depth": 1}` (depth 1 to ' + String(options.maxDepth) + '; deeper adds reflection passes and may',
    'cost more) and `POST /v1/extract` with `{"url": "https://...", "mode": "excerpt" | "text" | "markdown" | "html"}`.',
    'Search options (optional, free): `max_results`, `include_domains` / `exclude_domains` (host names; `*.example.com`',
    'adds every host under it), `start_date` / `end_date` (YYYY-MM-DD, on the publication date; `undated`: "keep" or',
    '"exclude"), `highlights`: `{"count": 3, "max_chars": 300}` (passages of each result page with their scores),',
    '`include`: `["published_date"]` (each result whose publication date is known gains `published_date`, ISO 8601 UTC).',
    'Extract a batch with `"urls": [...]` (1 to 20 distinct URLs) in place of `url`: `results` answers each in order,',
    '`{"url", "ok": true, ...the page}` or `{"url", "ok": false, "problem": {...}}`; quoted for every URL, charged only',
    'for those that succeeded (none: a 502 `batch_failed`, free). A payment mode that settles exactly the amount it',
    'signed cannot pay a batch of more than one URL: the 422 `batch_payment_unsupported` names the modes that can.',
    'Send `Idempotency-Key` on paid calls and reuse it when retrying: a retry is never charged twice. Retry 429 and 503',
    'after `Retry-After` seconds; do not retry a problem whose `retryable` is false without changing the request.',
    '',
    '## Paying',
    '',
  ];
  const schemes = ((document['components'] as Json)['securitySchemes'] ?? {}) as Record<string, Json>;
  for (const [name, scheme] of Object.entries(schemes)) lines.push(`- ${name}: ${String(scheme['description'] ?? '')}`);
  lines.push('- Add `X-Notary-Sign: required` to any paid call for an Ed25519-signed receipt, verifiable offline against `/.well-known/jwks.json`.');
  lines.push('', '## Prices', '');
  for (const row of options.prices) lines.push(`- ${row.call}: ${row.credits} credit${row.credits === 1 ? '' : 's'} (${row.amount})`);
  lines.push('', '## Endpoints', '');
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const summary = typeof operation['summary'] === 'string' ? `: ${operation['summary']}` : '';
      lines.push(`- ${method.toUpperCase()} ${path}${summary}`);
    }
  }
  lines.push(
    '',
    '## Docs',
    '',
    '- [OpenAPI 3.1 document](/openapi.json): every request and response schema, every status',
    '- Client libraries: TypeScript (sdk/ts), Python (sdk/python), Go (sdk/go); an MCP server: `notary mcp`',
    '',
  );
  return lines.join('\n');
}
