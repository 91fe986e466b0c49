export { runCrawl, type RunCrawlOptions, type CrawlSummary } from './crawl.js';
export type { CrawlProgress, CrawlerConfig } from './session.js';
export { normaliseUrl, compileScope, type Scope, type ScopeRules } from './url.js';
export { CrawlRunStore, type CrawlRun, type CrawlSkip, type CrawlSkipReason } from '../storage/crawl-runs.js';
