import type { FastifyRequest } from 'fastify';
import type { PaymentRequest } from '../../payments/index.js';

/**
 * The framework-free view of a request for the payments core. Headers come from the raw header list, so a header sent
 * twice keeps both values (Node keeps only the first Authorization and would hide the duplicate).
 */
export function paymentRequestFrom(request: FastifyRequest): PaymentRequest {
  // No prototype: a header named "__proto__" (or "constructor") is a header like any other, not Object.prototype.
  const headers = Object.create(null) as Record<string, string[]>;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    (headers[name] ??= []).push(raw[i + 1] ?? '');
  }
  const path = request.url.split('?')[0] ?? request.url;
  return {
    method: request.method,
    path,
    url: `${request.protocol}://${request.host}${request.url}`,
    headers,
    clientAddress: request.ip,
    requestId: request.id,
  };
}
