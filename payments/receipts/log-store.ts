import { PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../storage/index.js';

type Executor = Kysely<Database> | Transaction<Database>;

export interface LogNodeRef {
  level: number;
  index: number;
}

export interface LogNodeRow extends LogNodeRef {
  hash: Uint8Array;
}

export interface LogEntryRow {
  leafIndex: number;
  leafHash: Uint8Array;
  requestId: string;
  kid: string;
  issuedAt: string;
  /** The leaf bytes as text: the JCS of the signed receipt. */
  receipt: string;
}

export interface LogCheckpointRow {
  treeSize: number;
  rootHash: Uint8Array;
  note: string;
  createdAt: string;
}

/** What an append may do inside its transaction. */
export interface LogAppendTransaction {
  /** Claims the next leaf index (the tree size before this append) and locks the log until commit. */
  claimNextIndex(): Promise<number>;
  nodes(refs: LogNodeRef[]): Promise<Map<string, Uint8Array>>;
  insert(entry: LogEntryRow, nodes: LogNodeRow[]): Promise<void>;
}

const nodeKey = (level: number, index: number) => `${level}:${index}`;

function bytes(value: Uint8Array | Buffer): Uint8Array {
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

/**
 * Rows of the append-only receipt log (migration 0014_receipt_log), the same SQL on SQLite and PostgreSQL. Appends
 * start by incrementing the one-row tree size, which takes the write lock (SQLite) or the row lock (PostgreSQL)
 * first, so appenders in several processes get consecutive indexes and never interleave their node writes.
 */
export class ReceiptLogStore {
  /** PostgreSQL can claim the index and write the rows in one statement (data-modifying CTEs); SQLite cannot. */
  readonly singleStatementAppend: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.singleStatementAppend = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  /**
   * One round trip, one atomic statement: appends at `index` only if the tree still has `index` leaves (the caller's
   * cached right edge is current); returns false, having written nothing, when another appender got there first. A
   * concurrent statement for the same index waits for the row lock and then finds the size changed.
   */
  async appendAt(index: number, entry: LogEntryRow, nodes: LogNodeRow[]): Promise<boolean> {
    const values = sql.join(nodes.map((n) => sql`(${n.level}::integer, ${n.index}::bigint, ${Buffer.from(n.hash)}::bytea)`));
    const result = await sql<{ tree_size: string | number }>`
      with claim as (
        update receipt_log_state set tree_size = tree_size + 1 where id = 1 and tree_size = ${index} returning tree_size
      ), entry as (
        insert into receipt_log_entries (leaf_index, leaf_hash, request_id, kid, issued_at, receipt)
        select ${index}, ${Buffer.from(entry.leafHash)}::bytea, ${entry.requestId}, ${entry.kid}, ${entry.issuedAt}, ${entry.receipt} from claim
      ), nodes as (
        insert into receipt_log_nodes (level, node_index, hash)
        select v.level, v.node_index, v.hash from (values ${values}) as v(level, node_index, hash), claim
      )
      select tree_size from claim`.execute(this.db);
    return result.rows.length === 1;
  }

  async treeSize(executor: Executor = this.db): Promise<number> {
    const row = await executor.selectFrom('receipt_log_state').select('tree_size').where('id', '=', 1).executeTakeFirst();
    if (!row) throw new Error('receipt_log_state has no row: the 0014_receipt_log migration did not run');
    return Number(row.tree_size);
  }

  async nodes(refs: LogNodeRef[], executor: Executor = this.db): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    if (refs.length === 0) return out;
    const byLevel = new Map<number, number[]>();
    for (const ref of refs) byLevel.set(ref.level, [...(byLevel.get(ref.level) ?? []), ref.index]);
    const rows = await executor
      .selectFrom('receipt_log_nodes')
      .select(['level', 'node_index', 'hash'])
      .where((eb) => eb.or([...byLevel].map(([level, indexes]) => eb.and([eb('level', '=', level), eb('node_index', 'in', indexes)]))))
      .execute();
    for (const row of rows) out.set(nodeKey(row.level, Number(row.node_index)), bytes(row.hash));
    return out;
  }

  async append<T>(work: (tx: LogAppendTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) =>
      work({
        claimNextIndex: async () => {
          const row = await trx
            .updateTable('receipt_log_state')
            .set({ tree_size: sql<number>`tree_size + 1` })
            .where('id', '=', 1)
            .returning('tree_size')
            .executeTakeFirst();
          if (!row) throw new Error('receipt_log_state has no row: the 0014_receipt_log migration did not run');
          return Number(row.tree_size) - 1;
        },
        nodes: (refs) => this.nodes(refs, trx),
        insert: async (entry, nodes) => {
          await trx
            .insertInto('receipt_log_entries')
            .values({
              leaf_index: entry.leafIndex,
              leaf_hash: entry.leafHash,
              request_id: entry.requestId,
              kid: entry.kid,
              issued_at: entry.issuedAt,
              receipt: entry.receipt,
            })
            .execute();
          await trx
            .insertInto('receipt_log_nodes')
            .values(nodes.map((n) => ({ level: n.level, node_index: n.index, hash: n.hash })))
            .execute();
        },
      }),
    );
  }

  private toEntry(row: { leaf_index: number | string; leaf_hash: Uint8Array; request_id: string; kid: string; issued_at: string; receipt: string }): LogEntryRow {
    return {
      leafIndex: Number(row.leaf_index),
      leafHash: bytes(row.leaf_hash),
      requestId: row.request_id,
      kid: row.kid,
      issuedAt: row.issued_at,
      receipt: row.receipt,
    };
  }

  /** The first entry with this leaf hash (two byte-identical receipts share it). */
  async entryByLeafHash(leafHash: Uint8Array): Promise<LogEntryRow | undefined> {
    const row = await this.db.selectFrom('receipt_log_entries').selectAll().where('leaf_hash', '=', leafHash).orderBy('leaf_index').limit(1).executeTakeFirst();
    return row ? this.toEntry(row) : undefined;
  }

  async entriesByRequestId(requestId: string): Promise<LogEntryRow[]> {
    const rows = await this.db.selectFrom('receipt_log_entries').selectAll().where('request_id', '=', requestId).orderBy('leaf_index').execute();
    return rows.map((r) => this.toEntry(r));
  }

  /** Entries with start ≤ leaf_index < end, in order. */
  async entries(start: number, end: number): Promise<LogEntryRow[]> {
    const rows = await this.db
      .selectFrom('receipt_log_entries')
      .selectAll()
      .where('leaf_index', '>=', start)
      .where('leaf_index', '<', end)
      .orderBy('leaf_index')
      .execute();
    return rows.map((r) => this.toEntry(r));
  }

  /** Stored nodes with first ≤ node_index < end at one level (for full-tree audits). */
  async nodesAtLevel(level: number, first: number, end: number): Promise<Map<number, Uint8Array>> {
    const rows = await this.db
      .selectFrom('receipt_log_nodes')
      .select(['node_index', 'hash'])
      .where('level', '=', level)
      .where('node_index', '>=', first)
      .where('node_index', '<', end)
      .execute();
    return new Map(rows.map((r) => [Number(r.node_index), bytes(r.hash)]));
  }

  async allCheckpoints(): Promise<LogCheckpointRow[]> {
    const rows = await this.db.selectFrom('receipt_log_checkpoints').selectAll().orderBy('tree_size').execute();
    return rows.map((r) => this.toCheckpoint(r));
  }

  private toCheckpoint(row: { tree_size: number | string; root_hash: Uint8Array; note: string; created_at: string }): LogCheckpointRow {
    return { treeSize: Number(row.tree_size), rootHash: bytes(row.root_hash), note: row.note, createdAt: row.created_at };
  }

  async latestCheckpoint(): Promise<LogCheckpointRow | undefined> {
    const row = await this.db.selectFrom('receipt_log_checkpoints').selectAll().orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
    return row ? this.toCheckpoint(row) : undefined;
  }

  async checkpoint(treeSize: number): Promise<LogCheckpointRow | undefined> {
    const row = await this.db.selectFrom('receipt_log_checkpoints').selectAll().where('tree_size', '=', treeSize).executeTakeFirst();
    return row ? this.toCheckpoint(row) : undefined;
  }

  /** Stores a checkpoint unless one of that size exists; returns the stored one either way. */
  async saveCheckpoint(checkpoint: LogCheckpointRow): Promise<LogCheckpointRow> {
    await this.db
      .insertInto('receipt_log_checkpoints')
      .values({ tree_size: checkpoint.treeSize, root_hash: checkpoint.rootHash, note: checkpoint.note, created_at: checkpoint.createdAt })
      .onConflict((oc) => oc.column('tree_size').doNothing())
      .execute();
    const stored = await this.checkpoint(checkpoint.treeSize);
    if (!stored) throw new Error(`checkpoint of size ${checkpoint.treeSize} was not stored`);
    return stored;
  }
}
