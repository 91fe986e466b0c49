import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

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

export interface CrawlRunsTable {
  id: string;
  seeds: string;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  /** JSON: fetched, unchanged, skipped, failed, duplicates. */
  stats: string | null;
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

export interface TenantsTable {
  id: string;
  name: string;
  tier: string;
  credits: number;
  created_at: Timestamp;
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

export interface PassageVectorsTable {
  /** passages.id; the row goes when the passage does (ON DELETE CASCADE). */
  passage_id: number;
  page_id: number;
  /** Embedding model that produced the vector. */
  model: string;
  dimensions: number;
  /** passage_vector_generation.generation of the write that stored this row. */
  seq: number;
  /** Little-endian float32 bytes, `dimensions` * 4 long. */
  vector: Buffer;
}

/** One row (id 1): incremented by every write to passage_vectors. */
export interface PassageVectorGenerationTable {
  id: number;
  generation: number;
}

/** PostgreSQL returns bigint columns as strings; SQLite as numbers. Read them through Number(). */
export type BigIntColumn = ColumnType<number | string, number, number>;

/** One row (id 1): the receipt log's tree size. */
export interface ReceiptLogStateTable {
  id: number;
  tree_size: BigIntColumn;
}

/** One row per receipt appended to the log (append-only). */
export interface ReceiptLogEntriesTable {
  leaf_index: BigIntColumn;
  /** RFC 6962 leaf hash: SHA-256(0x00 || receipt). */
  leaf_hash: Uint8Array;
  request_id: string;
  kid: string;
  issued_at: string;
  /** The leaf: the JCS of the signed receipt. */
  receipt: string;
}

/** Complete subtree hashes of the receipt log. */
export interface ReceiptLogNodesTable {
  level: number;
  node_index: BigIntColumn;
  hash: Uint8Array;
}

/** Signed checkpoints (C2SP tlog-checkpoint notes) the log has published. */
export interface ReceiptLogCheckpointsTable {
  tree_size: BigIntColumn;
  root_hash: Uint8Array;
  note: string;
  created_at: Timestamp;
}

export interface Database {
  pages: PagesTable;
  passages: PassagesTable;
  crawl_runs: CrawlRunsTable;
  crawl_skips: CrawlSkipsTable;
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  credit_ledger: CreditLedgerTable;
  passage_vectors: PassageVectorsTable;
  passage_vector_generation: PassageVectorGenerationTable;
  receipt_log_state: ReceiptLogStateTable;
  receipt_log_entries: ReceiptLogEntriesTable;
  receipt_log_nodes: ReceiptLogNodesTable;
  receipt_log_checkpoints: ReceiptLogCheckpointsTable;
  idempotency_keys: IdempotencyKeysTable;
}

export type Page = Selectable<PagesTable>;
export type NewPage = Insertable<PagesTable>;
export type PageUpdate = Updateable<PagesTable>;
export type Passage = Selectable<PassagesTable>;
export type NewPassage = Insertable<PassagesTable>;
export type Tenant = Selectable<TenantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type LedgerEntry = Selectable<CreditLedgerTable>;
