import Fastify, { type FastifyInstance } from 'fastify';
import { newId } from '../core/ids.js';
import type { NotaryFacilitator } from '../payments/modes/x402/facilitator.js';
import { registerProblemHandlers } from './problem.js';
import { requestIdFrom } from './app.js';

export interface FacilitatorAppDeps {
  facilitator: NotaryFacilitator;
  network: string;
  address: string;
  logger?: boolean | object;
  /** Largest request body (a verify or settle request is about 2 KB). */
  bodyLimitBytes?: number;
}

/**
 * The HTTP face of `notary facilitator`: the standard x402 facilitator API (POST /verify, POST /settle,
 * GET /supported; results are 200 with `isValid` / `success`, malformed requests a 400 problem) plus the JWKS of its
 * receipt-signing keys at /.well-known/jwks.json and /healthz.
 */
export async function buildFacilitatorApp(deps: FacilitatorAppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.bodyLimitBytes ?? 64 * 1024,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']) || newId('req'),
  });
  registerProblemHandlers(app, { maxDepth: 0, bodyLimitBytes: deps.bodyLimitBytes ?? 64 * 1024 });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  app.post('/verify', async (request) => deps.facilitator.verify(request.body));
  app.post('/settle', async (request) => deps.facilitator.settle(request.body));
  app.get('/supported', async () => deps.facilitator.supported());
  app.get('/.well-known/jwks.json', async (_request, reply) => {
    reply.header('Cache-Control', 'public, max-age=300');
    return deps.facilitator.jwks();
  });
  app.get('/healthz', async () => ({ status: 'ok', network: deps.network, address: deps.address }));
  return app;
}
