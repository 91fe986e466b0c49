export { buildApp, requestIdFrom, REQUEST_ID_PATTERN, type AppDeps } from './app.js';
export {
  PROBLEM_CONTENT_TYPE,
  PROBLEM_TYPE_BASE,
  clientErrorResponse,
  problemBody,
  registerProblemHandlers,
  sendProblem,
  toNotaryError,
  type ProblemBody,
  type ProblemContext,
} from './problem.js';
export { definePaidRoute, paidRoutes, type PaidContext, type PaidRoute, type PaidRouteDefinition, type WorkContext } from './paid/context.js';
export { buildRoutesApp, type RoutesAppOptions } from './routes-app.js';
export { healthzRoute, type HealthzRouteOptions } from './routes/healthz.js';
export { searchBodySchema, searchResultItemSchema, searchRoute, type SearchBody } from './routes/search.js';
export { extractBodySchema, extractRoute } from './routes/extract.js';
export { pluginPublicRoutes } from './plugin-routes.js';
export { ApiMetrics } from './metrics.js';
export { presentJob } from './routes/crawl-job.js';
