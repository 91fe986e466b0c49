/** Shapes of the dashboard endpoints' answers (the server's JSON). */

export interface User {
  id: string;
  email: string;
  role: 'member' | 'operator';
  tenant_id: string | null;
  created_at: string;
  last_signin_at: string | null;
}

export interface SessionInfo {
  user: User | null;
  csrf_token: string | null;
  signup: 'open' | 'closed';
  password_min_length: number;
}

export interface PriceRow {
  call: string;
  credits: number;
  amount: string;
}

export interface TenantInfo {
  tenant: { id: string; name: string; credits: number; tier: string; suspended: boolean; created_at: string };
  tier: { name: string; requests_per_minute: number; burst: number; monthly_credits: number; rate_limit_policy: string };
  features: string[];
  prices: PriceRow[];
}

export interface ApiKey {
  id: string;
  tenant_id: string;
  prefix: string;
  last4: string;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  expires_at: string | null;
  scopes: string;
  environment: 'live' | 'test' | string;
}

export interface LedgerEntry {
  id: number;
  delta: number;
  balance_after: number;
  reason: string;
  request_id: string | null;
  key_id: string | null;
  created_at: string;
}

export interface UsageAnswer {
  by: string;
  environment: string;
  days: string[];
  series: Array<{ key: string; calls: number[]; credits: number[] }>;
  totals: { calls: number; credits: number };
}

export interface PartyKey {
  /** RFC 7638 thumbprint: what envelopes name. */
  kid: string;
  tenant: string;
  public_key: string;
  name: string | null;
  /** The only collections envelopes signed with it may search (names); null: every collection the tenant may read. */
  collections: string[] | null;
  created_at: string;
  revoked_at: string | null;
}

export type SeedScope = 'path' | 'host' | 'domain' | 'any';

export interface SeedOptions {
  include: string[];
  exclude: string[];
  /** null: the server's crawler.scope. */
  scope: SeedScope | null;
  max_depth: number | null;
  max_pages: number | null;
  /** The collection its pages join; null: the default collection. */
  collection: string | null;
}

export interface Seed {
  id: string;
  url: string;
  source: 'config' | 'operator';
  paused: boolean;
  options: SeedOptions;
  recrawl_hours: number;
  created_at: string;
  last_run_id: string | null;
  last_crawled_at: string | null;
  crawl_requested_at: string | null;
}

export interface CrawlRunView {
  id: string;
  seeds: string[];
  started_at: string;
  finished_at: string | null;
  state: 'running' | 'stale' | 'finished' | 'stopped' | 'interrupted';
  /** The stopped or interrupted run this one took over. */
  resumed_from: string | null;
  stats: {
    stored?: number;
    maxPages?: number;
    duplicates?: number;
    etaMs?: number | null;
    fetched?: number;
    unchanged?: number;
    fresh?: number;
    gone?: number;
    queued?: number;
    failed?: number;
    pagesPerSecond?: number;
    elapsedMs?: number;
    skipped?: { total: number };
    phase?: string;
    indexed_pages?: number;
    passages?: number;
  } | null;
}

export interface PricingSettings {
  search: { credits_by_depth: number[]; cross_encoder_credits: number };
  extract: { credits: number; credits_rendered: number };
  credit_price: { amount: string; asset: string; decimals: number };
}

export interface Origin {
  source: 'config' | 'operator';
  revision: number;
  updated_at: string | null;
  updated_by: string | null;
}

export interface PricingAnswer {
  pricing: PricingSettings;
  table: PriceRow[];
  max_depth: number;
  /** From which depth the cross-encoder judges searches, as the service runs now (null: none loaded). */
  cross_encoder_from: number | null;
  origin: Origin;
}

export interface TierSettings {
  requests_per_minute: number;
  burst: number;
  monthly_credits: number;
  features: string[];
  rate_limit_policy?: string;
}

export interface TiersAnswer {
  tiers: Record<string, TierSettings>;
  default_tier: string;
  anonymous_tier: string;
  tenants_per_tier: Record<string, number>;
  features: string[];
  origin: Origin;
}

export interface TenantRow {
  id: string;
  name: string;
  tier: string;
  credits: number;
  suspended: boolean;
  features: string[];
  features_overridden: boolean;
  members: string[];
  active_keys: number;
  created_at: string;
  /** The collections its keys read at most; null: every collection. */
  collections: string[] | null;
  /** Its crawl jobs may reach private addresses. */
  allow_private_networks: boolean;
}

export const FEATURE_LABELS: Record<string, string> = {
  search: 'Search (depth 1)',
  search_reflection: 'Search with reflection (depth 2 and up)',
  extract: 'Extraction',
  extract_render: 'Extraction rendered in a browser',
  test_keys: 'Test keys (sk_test_)',
  map: 'Site maps (POST /v1/map)',
};

export interface CollectionView {
  id: string;
  name: string;
  /** Pay-per-call payers (no account) may read it. */
  public: boolean;
  pages: number;
  /** Its own credits per search depth; null: the price list's. */
  credits_by_depth: number[] | null;
  /** Its own deepest search; null: the server's search.max_depth. */
  max_depth: number | null;
  /** The seeds that crawl into it. */
  seeds: string[];
  created_at: string;
}

export interface CrawlJobView {
  id: string;
  status: 'queued' | 'running' | 'completed' | 'cancelled' | 'failed';
  collection: string;
  seeds: string[];
  max_pages: number;
  progress: { stored: number; queued: number; failed: number; pages_per_minute: number | null; eta_seconds: number | null };
  credits_quoted: number;
  credits_used: number | null;
  created_at: string;
  ended_at: string | null;
  error: { code: string; detail: string } | null;
  /** Operators' view only: who submitted it. */
  payer?: string;
}
