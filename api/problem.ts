import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorEntry, isNotaryError, NotaryError, upstreamOutcomeCodes, type ErrorCode } from '../core/index.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';
/** Problem type URIs point at the error reference, one anchor per code. */
export const PROBLEM_TYPE_BASE = 'https://github.com/notary-search/notary/blob/main/docs/errors.md#';

/** RFC 9457 problem details with notary's extension members. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  retryable: boolean;
  [extension: string]: unknown;
}

export interface ProblemContext {
  /** Maximum search depth, for the depth_out_of_range detail. */
  maxDepth: number;
  bodyLimitBytes: number;
}

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
}

function isFastifyError(error: unknown): error is FastifyError {
  return typeof error === 'object' && error !== null && ('code' in error || 'statusCode' in error || 'validation' in error);
}

function validationProblem(error: FastifyError, context: ProblemContext): NotaryError {
  const issues = (error.validation ?? []) as AjvIssue[];
  const where = error.validationContext ?? 'body';
  const first = issues[0];
  if (first?.instancePath === '/depth' && (first.keyword === 'maximum' || first.keyword === 'minimum')) {
    return new NotaryError('depth_out_of_range', `depth must be an integer from 1 to ${context.maxDepth}`, { max_depth: context.maxDepth });
  }
  if (where === 'body' && first?.instancePath === '/url' && (first.keyword === 'pattern' || first.keyword === 'minLength')) {
    return new NotaryError('invalid_url', 'url must be an absolute http or https URL without credentials, e.g. https://example.org/page');
  }
  const batchItem = where === 'body' ? /^\/urls\/(\d+)$/.exec(first?.instancePath ?? '') : null;
  if (batchItem && (first?.keyword === 'pattern' || first?.keyword === 'minLength')) {
    return new NotaryError('invalid_url', `urls[${batchItem[1]}] must be an absolute http or https URL without credentials, e.g. https://example.org/page`, { index: Number(batchItem[1]) });
  }
  if (where === 'body' && first?.instancePath === '/urls' && ['minItems', 'maxItems', 'uniqueItems'].includes(first.keyword ?? '')) {
    return new NotaryError('invalid_batch', `urls ${first.message ?? 'is invalid'}: send 1 to 20 distinct URLs (or one URL in url)`);
  }
  if (where === 'body' && issues.some((issue) => issue.keyword === 'oneOf' && (issue.instancePath ?? '') === '')) {
    return new NotaryError('invalid_batch', 'Send either url (one URL) or urls (1 to 20 URLs), not both and not neither');
  }
  if (first?.instancePath === '/query' && (first.keyword === 'pattern' || first.keyword === 'minLength')) {
    return new NotaryError('invalid_request', 'query must contain at least one letter or digit and no control characters');
  }
  const field = first?.instancePath ? `${where}${first.instancePath.replaceAll('/', '.')}` : where;
  const detail = first?.message ? `${field} ${first.message}` : error.message;
  return new NotaryError('invalid_request', detail);
}

/**
 * Maps anything thrown while serving a request onto a registered error code. Fastify's own client errors (body
 * parsing, validation, content type) become their codes; anything unknown is an internal error.
 */
export function toNotaryError(error: unknown, context: ProblemContext): NotaryError {
  if (isNotaryError(error)) return error;
  if (!isFastifyError(error)) return new NotaryError('internal_error');
  if (error.validation) return validationProblem(error, context);
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new NotaryError('unsupported_media_type', 'Send the request body as application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new NotaryError('payload_too_large', `The request body exceeds ${context.bodyLimitBytes} bytes`, {
        limit_bytes: context.bodyLimitBytes,
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new NotaryError('invalid_json', 'The body is empty but the content type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new NotaryError('invalid_json');
    default:
      break;
  }
  const status = error.statusCode ?? 500;
  if (status === 400 && error instanceof SyntaxError) return new NotaryError('invalid_json', `The body is not valid JSON: ${error.message}`);
  if (status === 413) return new NotaryError('payload_too_large');
  if (status === 415) return new NotaryError('unsupported_media_type');
  if (status >= 400 && status < 500) return new NotaryError('invalid_request', error.message);
  return new NotaryError('internal_error');
}

export function problemBody(error: NotaryError, requestId: string): ProblemBody {
  const entry = errorEntry(error.code);
  return {
    ...error.extra,
    type: `${PROBLEM_TYPE_BASE}${error.code}`,
    title: entry.title,
    status: error.status,
    detail: error.message,
    code: error.code,
    request_id: requestId,
    retryable: error.retryable,
  };
}

/**
 * Headers a problem carries besides its body; headers already set by the code that threw are kept. A 401's
 * WWW-Authenticate challenges come with the error: the payment modes attach them (the paid-call gate asks each).
 */
function problemHeaders(error: NotaryError, reply: FastifyReply): void {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  if (error.code === 'request_timeout') reply.header('Connection', 'close');
  if (error.code === 'rate_limited' && !reply.hasHeader('retry-after')) {
    const seconds = Number(error.extra['retry_after_s']);
    reply.header('Retry-After', String(Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : 1));
  }
  const allowed = error.extra['allowed_methods'];
  if (error.code === 'method_not_allowed' && Array.isArray(allowed)) reply.header('Allow', allowed.join(', '));
}

/** Status lines for the problems answered straight on the socket, before any request object exists. */
const REASON_PHRASES: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/**
 * The problem for an error Node's HTTP parser raises before Fastify sees a request (oversized headers, a NUL or a
 * stray CR in a header, a header or request timeout), as raw HTTP/1.1 bytes to write on the socket.
 */
export function clientErrorResponse(error: Error & { code?: string }, requestId: string): string {
  const code = error.code ?? '';
  const problem =
    code === 'HPE_HEADER_OVERFLOW'
      ? new NotaryError('header_too_large', 'The request headers exceed the server limit; send fewer or shorter headers')
      : code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADER_TIMEOUT'
        ? new NotaryError('request_timeout', 'The request was not received in time')
        : /^HPE_(INVALID_HEADER|LF_EXPECTED|CR_EXPECTED|UNEXPECTED_CONTENT_LENGTH|INVALID_CONTENT_LENGTH|INVALID_TRANSFER_ENCODING)/.test(code)
          ? new NotaryError('invalid_header', 'A request header is malformed (control characters such as NUL or CR are not allowed in header values)')
          : new NotaryError('invalid_request', 'The HTTP request is malformed');
  const body = JSON.stringify(problemBody(problem, requestId));
  return [
    `HTTP/1.1 ${problem.status} ${REASON_PHRASES[problem.status] ?? 'Bad Request'}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: NotaryError): FastifyReply {
  problemHeaders(error, reply);
  return reply
    .code(error.status)
    .header('X-Request-Id', request.id)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problemBody(error, request.id)));
}

/**
 * Installs the problem+json error handler, the not-found handler (405 with Allow when the path exists under another
 * method) and the handler for errors Fastify raises before routing. Call before registering routes: it watches
 * route registration to know which methods each path has.
 */
export function registerProblemHandlers(app: FastifyInstance, context: ProblemContext): void {
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const known = methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of methods) known.add(method.toUpperCase());
    methodsByPath.set(route.url, known);
  });

  app.setErrorHandler((error: unknown, request, reply) => {
    const problem = toNotaryError(error, context);
    if (upstreamOutcomeCodes.has(problem.code)) {
      // What a site did is an outcome of the request, not a fault here: no stack trace.
      request.log.info({ code: problem.code, detail: problem.message }, 'upstream outcome');
    } else if (problem.status >= 500) {
      request.log.error({ err: error, code: problem.code }, 'request failed');
    }
    return sendProblem(request, reply, problem);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = (request.url.split('?')[0] ?? request.url).slice(0, 200);
    const allowed = methodsByPath.get(path);
    if (allowed && !allowed.has(request.method)) {
      const methods = [...allowed].sort();
      return sendProblem(request, reply, new NotaryError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${methods.join(' or ')}`, { allowed_methods: methods }));
    }
    return sendProblem(request, reply, new NotaryError('not_found', `No route for ${request.method} ${path}`));
  });
}
