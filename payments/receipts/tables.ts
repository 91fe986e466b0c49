import type { BigIntColumn, Timestamp } from '../../storage/index.js';

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

declare module '../../storage/schema.js' {
  interface Database {
    receipt_log_state: ReceiptLogStateTable;
    receipt_log_entries: ReceiptLogEntriesTable;
    receipt_log_nodes: ReceiptLogNodesTable;
    receipt_log_checkpoints: ReceiptLogCheckpointsTable;
  }
}
