export { buildApp, requestIdFrom, REQUEST_ID_PATTERN, type AppDeps } from './app.js';
export {
  PROBLEM_CONTENT_TYPE,
  PROBLEM_TYPE_BASE,
  problemBody,
  registerProblemHandlers,
  sendProblem,
  toNotaryError,
  type ProblemBody,
  type ProblemContext,
} from './problem.js';
export { apiKeyAuthPlugin, apiKeyResolver, type ApiKeyAuthOptions } from './plugins/api-key-auth.js';
export {
  payerPlugin,
  requirePayer,
  type ApiKeyPrincipal,
  type ChargeContext,
  type Payer,
  type PayerResolver,
  type Principal,
  type RequestHook,
} from './plugins/payer.js';
export { rateLimitHeaders, rateLimitPlugin, type RateLimitPluginOptions } from './plugins/rate-limit.js';
export { healthzRoute, type HealthzRouteOptions } from './routes/healthz.js';
export { searchBodySchema, searchResponseSchema, searchRoute, type SearchBody, type SearchReplyBody, type SearchRouteOptions } from './routes/search.js';
export { extractBodySchema, extractResponseSchema, extractRoute, type ExtractRouteOptions } from './routes/extract.js';
export { MAX_LOG_ENTRIES, receiptRoutes, type ReceiptRoutesOptions } from './routes/receipts.js';
