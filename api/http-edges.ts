import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotaryError, newId } from '../core/index.js';
import { problemBody, PROBLEM_CONTENT_TYPE } from './problem.js';

/** Headers that carry one value: a second copy (which Node would drop or join silently) is refused. */
const SINGLE_HEADERS = ['host', 'content-type', 'content-length', 'content-encoding'];

/** Occurrences of each header of interest in the raw header list (Node's `headers` object has merged them). */
function headerCounts(raw: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    if (SINGLE_HEADERS.includes(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

const DISPLAY: Record<string, string> = { host: 'Host', 'content-type': 'Content-Type', 'content-length': 'Content-Length', 'content-encoding': 'Content-Encoding' };

/** Checks of the request line and headers that Node leaves to the application; each fault is a 4xx problem. */
export function checkHttpEdges(request: FastifyRequest): void {
  const raw = request.raw;
  for (const [name, count] of headerCounts(raw.rawHeaders)) {
    if (count > 1) {
      const display = DISPLAY[name] ?? name;
      throw new NotaryError('duplicate_header', `The ${display} header was sent ${count} times; send it once`, { header: display });
    }
  }
  // HTTP/2 carries :authority instead; HTTP/1.0 may omit Host (RFC 9112 section 3.2).
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && raw.headers.host === undefined) {
    throw new NotaryError('invalid_header', 'An HTTP/1.1 request must carry a Host header (RFC 9112 section 3.2)', { header: 'Host' });
  }
  const encoding = raw.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new NotaryError('unsupported_media_type', `Content-Encoding: ${encoding.slice(0, 40)} is not supported: send the body uncompressed (identity)`, {
      header: 'Content-Encoding',
    });
  }
}

/** An `Expect` other than 100-continue: Node would answer 417 with an empty body; this answers with a problem. */
function answerExpectation(req: IncomingMessage, res: ServerResponse): void {
  const requestId = newId('req');
  const expect = String(req.headers.expect ?? '').slice(0, 40);
  const error = new NotaryError('expectation_failed', `Expect: ${expect} is not supported; send the request without it (or with Expect: 100-continue)`);
  const body = JSON.stringify(problemBody(error, requestId));
  res.writeHead(error.status, { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': requestId, Connection: 'close' });
  res.end(body);
}

/** Registers the checks: the header checks first among the app's hooks, the Expect answer on the server. */
export function guardHttpEdges(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    checkHttpEdges(request);
  });
  app.server.on('checkExpectation', answerExpectation);
}
