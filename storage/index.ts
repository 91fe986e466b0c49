export {
  AccountsRepository,
  type ApiKeyRecord,
  type LedgerFilter,
  type MultiDebitOutcome,
  type PartyDebit,
} from './accounts.js';
export { CollectionStore } from './collections.js';
export {
  CrawlRunStore,
  processOwner,
  type CrawlRun,
  type CrawlRunStatus,
  type CrawlSkip,
  type CrawlSkipReason,
  type NewCrawlSkip,
} from './crawl-runs.js';
export {
  CrawlSeedStore,
  DEFAULT_SEED_OPTIONS,
  SEED_SCOPES,
  type CrawlSeed,
  type SeedOptions,
  type SeedScope,
} from './crawl-seeds.js';
export { nowIso, openStorage, type Storage } from './db.js';
export { FrontierStore, type FrontierEntry } from './frontier.js';
export { SharedHostSlots } from './host-slots.js';
export { registerMigrations, type MigrationFactory, type MigrationHelpers } from './migrations.js';
export { PageStore, type InTransaction, type PageAnalysis } from './pages.js';
export type {
  BigIntColumn,
  Database,
  LedgerEntry,
  NewPassage,
  Page,
  SessionRow,
  Tenant,
  Timestamp,
  User,
  UserRole,
} from './schema.js';
export { SettingsRepository, type StoredSetting } from './settings.js';
export { UsageRepository, type UsageBucket, type UsageDimension } from './usage.js';
export { UsersRepository } from './users.js';
export type { Collection } from './schema.js';
export { SiteUrlStore } from './site-urls.js';
export type { UsageEventsTable } from './schema.js';
export { CrawlJobStore, type CrawlJobRow, type CrawlJobStatus, type JobProgress } from './crawl-jobs.js';
export { QueryShape, type ShapeExecutor } from './query-shape.js';
