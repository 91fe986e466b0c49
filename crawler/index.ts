export { runCrawl, type RunCrawlOptions, type CrawlSummary } from './crawl.js';
export type { CrawlProgress, CrawlerConfig } from './session.js';
export { FrontierStore } from '../storage/index.js';
export { normaliseUrl, compileScope, CRAWL_SCOPES, type CrawlScope, type Scope, type ScopeRules } from './url.js';
export { CrawlRunStore, type CrawlRunStatus, type CrawlRun, type CrawlSkip, type CrawlSkipReason } from '../storage/index.js';
export { HostGate } from './host-gate.js';
export { collectSitemapUrls } from './sitemaps.js';
export { seedFolder } from './url.js';
export { compileUrlPattern, urlPatternProblem, URL_PATTERN_SYNTAX, type UrlPattern } from './url-pattern.js';
