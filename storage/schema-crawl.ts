import type { Generated } from 'kysely';
import type { Timestamp } from './schema.js';

/** The crawler's tables: its runs, shared frontier and skips, operators' seeds, API crawl jobs, per-host politeness. */

export type CrawlRunStatus = 'running' | 'finished' | 'stopped' | 'interrupted';

export interface CrawlRunsTable {
  id: string;
  seeds: string;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  /** JSON: the run's summary counts. */
  stats: string | null;
  /** running; finished (queue done or max_pages reached); stopped (signal, resumable); interrupted (process died, resumable). */
  status: CrawlRunStatus | null;
  /** The stopped or interrupted run whose frontier this run took over. */
  resumed_from: string | null;
  /** `<hostname>:<pid>` of the process running it. */
  owner: string | null;
  /** Refreshed while the run is alive; an old one on a run still "running" means its process died. */
  heartbeat_at: Timestamp | null;
  /** JSON: the options a resume needs (max_pages, skip_fresh). */
  options: string | null;
}

export type FrontierState = 'queued' | 'leased' | 'done';

export interface CrawlFrontierTable {
  id: Generated<number>;
  run_id: string;
  url: string;
  depth: number;
  state: FrontierState;
  /** For done rows: stored, unchanged, fresh, alias (a redirect or canonical target), or the skip/failure reason. */
  outcome: string | null;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  added_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface CrawlSkipsTable {
  id: Generated<number>;
  run_id: string;
  url: string;
  /** robots_txt, non_html, out_of_scope, too_large, duplicate, http_error, fetch_error. */
  reason: string;
  detail: string | null;
  created_at: Timestamp;
}

export interface CrawlSeedsTable {
  id: string;
  url: string;
  /** config (imported from crawler.seeds) or operator. */
  source: string;
  /** 1 while an operator holds it: not crawled. */
  paused: number;
  /** JSON scope rules: include, exclude, scope, max_depth, max_pages. */
  options: string;
  recrawl_minutes: number;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Removed by an operator: kept so a config seed does not come back at the next start. */
  removed_at: Timestamp | null;
  /** An operator asked for a crawl now. */
  crawl_requested_at: Timestamp | null;
  last_run_id: string | null;
  last_crawled_at: Timestamp | null;
}

/** A crawl job ordered over the API (storage/crawl-jobs.ts); JSON columns: seeds, include, exclude, hold. */
export interface CrawlJobsTable {
  id: string;
  /** 1: its seeds and pages may be at private addresses (its tenant was allowed when it was ordered). */
  allow_private: Generated<number>;
  /** The payer's stable identity (AuthenticatedPayer.payerId): whose job it is. */
  payer: string;
  tenant_id: string | null;
  /** The tier whose crawl limits applied when it was ordered. */
  tier: string;
  /** queued, running, completed, cancelled, failed. */
  status: string;
  collection_id: string;
  collection_name: string;
  seeds: string;
  scope: string;
  max_pages: number;
  max_depth: number;
  include: string;
  exclude: string;
  webhook: string | null;
  credits_quoted: number;
  /** Null until settled. */
  credits_used: number | null;
  /** The payment hold (payments/mode.ts HeldPayment). */
  hold: string;
  run_id: string | null;
  stored: number;
  queued: number;
  failed: number;
  pages_per_minute: number | null;
  eta_seconds: number | null;
  error_code: string | null;
  error_detail: string | null;
  /** The worker running it (host:pid) and until when its lease holds. */
  owner: string | null;
  lease_until: Timestamp | null;
  request_id: string;
  created_at: Timestamp;
  started_at: Timestamp | null;
  ended_at: Timestamp | null;
  /** When its hold was settled: it is over for good. */
  settled_at: Timestamp | null;
}

export interface CrawlHostSlotsTable {
  host: string;
  /** Earliest start of the next request to the host across crawler processes, epoch milliseconds (database clock). */
  next_start_at: number;
}

export interface CrawlHostActiveTable {
  host: string;
  /** 0 .. per_host_concurrency - 1. */
  slot: number;
  /** The crawler process holding the slot (host:pid). */
  owner: string;
  /** When the slot is free again unless renewed, epoch milliseconds (database clock). */
  expires_at: number;
}
