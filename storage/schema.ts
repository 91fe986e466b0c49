import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { CrawlFrontierTable, CrawlHostActiveTable, CrawlHostSlotsTable, CrawlJobsTable, CrawlRunsTable, CrawlSeedsTable, CrawlSkipsTable } from './schema-crawl.js';

export * from './schema-crawl.js';

/** Timestamps are ISO 8601 UTC strings in both SQLite and PostgreSQL, so they compare and sort as text. */
export type Timestamp = string;

export type PageState = 'fetched' | 'indexed' | 'gone';

export interface PagesTable {
  id: Generated<number>;
  /** Normalised URL the page is known by (canonical when the page names one on its own host). */
  url: string;
  /** URL after redirects. */
  final_url: string;
  host: string;
  http_status: number;
  content_type: string | null;
  etag: string | null;
  last_modified: string | null;
  /** SHA-256 hex of the raw body; two URLs with the same hash are one document. */
  content_hash: string | null;
  title: string | null;
  html: string | null;
  crawl_depth: number;
  state: PageState;
  /** content_hash that the indexer last indexed; differs from content_hash when the page needs (re)indexing. */
  indexed_hash: string | null;
  fetched_at: Timestamp;
  /** When the page was last confirmed (200 or 304). */
  checked_at: Timestamp;
  indexed_at: Timestamp | null;
  /** The response's Content-Language header, as sent (a page's own declaration outranks it). */
  content_language: string | null;
  /** BCP 47 tag of the page's language (lower case, "en", "pt-br"), decided at index time; null before. */
  language: string | null;
  /** Pages that are translations of one another share this key (hreflang alternates, same path under a language prefix). */
  translation_key: string | null;
  /** 1 when the page is a generated navigation page (index, listing, HTML sitemap), 0 when not, null before indexing. */
  navigation: number | null;
}

export interface PassagesTable {
  id: Generated<number>;
  page_id: number;
  ordinal: number;
  url: string;
  title: string;
  /** Headings above the passage, outermost first, joined with " > ". */
  heading_path: string;
  text: string;
  word_count: number;
}

export interface TenantsTable {
  id: string;
  name: string;
  tier: string;
  credits: number;
  created_at: Timestamp;
  /** Set by an operator: the tenant's keys are refused (403) until it is cleared. */
  suspended_at: Generated<Timestamp | null>;
  /** JSON array of features when an operator overrides the tier's; null: the tier's. */
  features: Generated<string | null>;
  /** The last calendar month (YYYY-MM, UTC) whose monthly credit grant the tenant received. */
  grant_period: Generated<string | null>;
  /** JSON array of the collection ids the tenant's keys may read at most; null: every collection. */
  collections: Generated<string | null>;
  /** 1: the operator lets this tenant's crawl jobs reach private addresses (not metadata ones). */
  allow_private_networks: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  /** SHA-256 hex of the full key. */
  key_hash: string;
  /** Display prefix, e.g. "sk_live_AbCd". */
  prefix: string;
  last4: string;
  name: string | null;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  /** After this the key is refused (expired_api_key); null: never. */
  expires_at: Generated<Timestamp | null>;
  /** Comma-separated operations the key may call: search, extract. */
  scopes: Generated<string>;
  /** live (sk_live_, charged) or test (sk_test_, never charged). */
  environment: Generated<string>;
  /** JSON array of the collection ids the key may read; null: every collection. */
  collections: Generated<string | null>;
}

export interface CollectionsTable {
  /** col_... (the default collection: col_default). */
  id: string;
  name: string;
  created_at: Timestamp;
  /** 1: payers without an account (pay-per-call) may read it; the default collection is public, new ones are not. */
  public: Generated<number>;
  /** JSON array of credits by search depth (pricing.search.credits_by_depth's shape); null: the price list's. */
  credits_by_depth: Generated<string | null>;
  /** The deepest search of this collection; null: search.max_depth. */
  max_depth: Generated<number | null>;
}

/** Which pages are in which collections (a page in one or more). */
export interface PageCollectionsTable {
  page_id: number;
  collection_id: string;
}

export interface CreditLedgerTable {
  id: Generated<number>;
  tenant_id: string;
  /** Negative for a debit, positive for a grant. */
  delta: number;
  balance_after: number;
  reason: string;
  request_id: string | null;
  key_id: string | null;
  /** The call's Idempotency-Key: unique per tenant, so a keyed call is debited once. */
  idempotency_key: string | null;
  created_at: Timestamp;
}

export interface IdempotencyKeysTable {
  /** The payer the key belongs to. */
  scope: string;
  key: string;
  fingerprint: string;
  /** Request id of the call holding the key. */
  lease: string;
  /** Stored response, null while the call runs. */
  status: number | null;
  /** JSON object of the replayed headers. */
  headers: string | null;
  body: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export type UserRole = 'member' | 'operator';

export interface UsersTable {
  id: string;
  /** Lower-cased. */
  email: string;
  /** `$scrypt$ln=..,r=..,p=..$<salt>$<hash>` (base64, no padding). */
  password_hash: string;
  role: UserRole;
  /** The tenant a member belongs to; null for operators. */
  tenant_id: string | null;
  created_at: Timestamp;
  password_changed_at: Timestamp;
  last_signin_at: Timestamp | null;
}

export interface SessionsTable {
  /** SHA-256 hex of the session token in the cookie. */
  id: string;
  /** Null for a signed-out visitor's session (it carries the CSRF token of the sign-in form). */
  user_id: string | null;
  csrf_token: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  last_seen_at: Timestamp;
  client_address: string | null;
  user_agent: string | null;
}

export interface SigninFailuresTable {
  /** `email:<address>` or `ip:<address>`. */
  key: string;
  failures: number;
  first_failure_at: Timestamp;
  last_failure_at: Timestamp;
  locked_until: Timestamp | null;
}

export interface SettingsTable {
  /** `pricing` or `tiers`. */
  name: string;
  /** JSON. */
  value: string;
  /** Incremented by every write, so nodes can tell a change. */
  revision: number;
  updated_at: Timestamp;
  /** Email of the operator who wrote it. */
  updated_by: string | null;
}

export interface UsageEventsTable {
  id: Generated<number>;
  created_at: Timestamp;
  tenant_id: string | null;
  key_id: string | null;
  /** The payment mode's payer identity (tenant:..., a wallet, ...). */
  payer: string;
  mode: string;
  /** live or test. */
  environment: string;
  operation: string;
  depth: number | null;
  render: string | null;
  credits: number;
  /** Money amount of the call in the asset's smallest units, a decimal string. */
  amount: string;
  asset: string;
  request_id: string;
}

/** PostgreSQL returns bigint columns as strings; SQLite as numbers. Read them through Number(). */
export type BigIntColumn = ColumnType<number | string, number, number>;

export interface RateLimitBucketsTable {
  key: string;
  /** Theoretical arrival time (GCRA), epoch milliseconds. */
  tat: number;
}

/**
 * The tables of the shared code. A plug-in adds its own from its folder (a `tables.ts` that augments this interface),
 * beside its migrations and repository.
 */
export interface Database {
  rate_limit_buckets: RateLimitBucketsTable;
  crawl_host_slots: CrawlHostSlotsTable;
  crawl_host_active: CrawlHostActiveTable;
  pages: PagesTable;
  passages: PassagesTable;
  crawl_runs: CrawlRunsTable;
  crawl_skips: CrawlSkipsTable;
  crawl_frontier: CrawlFrontierTable;
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  credit_ledger: CreditLedgerTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  sessions: SessionsTable;
  signin_failures: SigninFailuresTable;
  settings: SettingsTable;
  usage_events: UsageEventsTable;
  crawl_seeds: CrawlSeedsTable;
  collections: CollectionsTable;
  page_collections: PageCollectionsTable;
  crawl_jobs: CrawlJobsTable;
}

export type Page = Selectable<PagesTable>;
export type NewPage = Insertable<PagesTable>;
export type PageUpdate = Updateable<PagesTable>;
export type Passage = Selectable<PassagesTable>;
export type NewPassage = Insertable<PassagesTable>;
export type Tenant = Selectable<TenantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type LedgerEntry = Selectable<CreditLedgerTable>;
export type User = Selectable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;
export type UsageEvent = Selectable<UsageEventsTable>;
export type CrawlSeedRow = Selectable<CrawlSeedsTable>;
export type Collection = Selectable<CollectionsTable>;
