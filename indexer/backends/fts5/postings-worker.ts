/**
 * The worker thread of indexer/backends/fts5/memory-ranking.ts: reads one FTS5 table's index (every token instance, through
 * fts5vocab), its row sizes and its averages record on a read-only connection, in one read transaction, and posts them
 * back as typed arrays. One build per worker. Node runs this file with its built-in type stripping, so it uses
 * erasable TypeScript only and imports nothing of ours.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

export interface PostingsBuildConfig {
  file: string;
  table: string;
  /** The column holding filter tokens; every other indexed column holds text. */
  facetsColumn: string;
  /** An UNINDEXED column holding each row's page id; null when the rowid is the page id. */
  pageIdColumn: string | null;
  /** The meta table and key of the write generation every write transaction bumps. */
  generationSql: string;
}

/**
 * One table's index as FTS5 holds it. Text postings: term t's entries are termEntries[t]..termEntries[t+1]; entry e is
 * row entryRows[e] with instances entryInstances[e]..entryInstances[e+1] (column, offset), in column then offset
 * order. Facet postings: token f is on rows facetRows[facetEntries[f]..facetEntries[f+1]].
 */
export interface PostingsSnapshot {
  generation: string;
  /** Rows and tokens of every column as FTS5's averages record counts them (bm25's N and average length). */
  rowCount: number;
  tokenTotal: number;
  /** By row, in rowid order: rowid, page id and size in tokens over every column. */
  rowids: Float64Array;
  pageIds: Float64Array;
  sizes: Float64Array;
  terms: string[];
  termEntries: Int32Array;
  entryRows: Int32Array;
  entryInstances: Int32Array;
  instanceColumns: Uint8Array;
  instanceOffsets: Int32Array;
  facetTokens: string[];
  facetEntries: Int32Array;
  facetRows: Int32Array;
}

export type PostingsReply = { ok: true; snapshot: PostingsSnapshot } | { ok: false; error: string };

/** An Int32Array that grows as values are pushed. */
class Int32Buffer {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
  done(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

/** SQLite varints (FTS5's record format): big-endian groups of 7 bits, the ninth byte whole. */
function varints(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let i = 0;
  while (i < bytes.length) {
    let value = 0;
    for (let n = 0; ; n++) {
      const byte = bytes[i++];
      if (byte === undefined) return out;
      if (n === 8) {
        value = value * 256 + byte;
        break;
      }
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    out.push(value);
  }
  return out;
}

function build(config: PostingsBuildConfig): PostingsSnapshot {
  const db = new BetterSqlite3(config.file, { readonly: true, fileMustExist: true });
  // The addon is loaded: core/addon-worker.ts may terminate this thread from now on.
  const loaded = new Int32Array((workerData as { addonLoaded: SharedArrayBuffer }).addonLoaded);
  Atomics.store(loaded, 0, 1);
  Atomics.notify(loaded, 0);
  try {
    db.pragma('busy_timeout = 5000');
    const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;
    const columns = (db.prepare(`PRAGMA table_info(${quoted(config.table)})`).all() as Array<{ name: string }>).map((c) => c.name);
    const columnIndex = new Map(columns.map((name, i) => [name, i]));
    const facets = columnIndex.get(config.facetsColumn);
    if (facets === undefined) throw new Error(`${config.table} has no column ${config.facetsColumn}`);
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.notary_postings_vocab USING fts5vocab(main, ${quoted(config.table)}, 'instance')`);
    db.exec('BEGIN');
    try {
      const generation = String((db.prepare(config.generationSql).pluck().get() as string | number | undefined) ?? '0');
      const averages = db.prepare(`SELECT block FROM ${quoted(`${config.table}_data`)} WHERE id = 1`).pluck().get() as Uint8Array | undefined;
      const [rowCount = 0, ...columnTotals] = averages ? varints(averages) : [];
      const tokenTotal = columnTotals.reduce((a, b) => a + b, 0);

      const sizeRows = db.prepare(`SELECT id, sz FROM ${quoted(`${config.table}_docsize`)} ORDER BY id`).raw(true).all() as Array<[number, Uint8Array]>;
      const rowids = new Float64Array(sizeRows.length);
      const sizes = new Float64Array(sizeRows.length);
      const rowOf = new Map<number, number>();
      sizeRows.forEach(([id, sz], row) => {
        rowids[row] = id;
        sizes[row] = varints(sz).reduce((a, b) => a + b, 0);
        rowOf.set(id, row);
      });
      const pageIds = new Float64Array(sizeRows.length);
      if (config.pageIdColumn) {
        const pages = db.prepare(`SELECT rowid, ${quoted(config.pageIdColumn)} FROM ${quoted(config.table)}`).raw(true).iterate() as Iterable<[number, number]>;
        for (const [id, pageId] of pages) {
          const row = rowOf.get(id);
          if (row !== undefined) pageIds[row] = pageId;
        }
      } else {
        pageIds.set(rowids);
      }

      const terms: string[] = [];
      const termEntries = new Int32Buffer();
      const entryRows = new Int32Buffer();
      const entryInstances = new Int32Buffer();
      const instanceColumns = new Int32Buffer();
      const instanceOffsets = new Int32Buffer();
      const facetRowsByToken = new Map<string, number[]>();
      let term: string | null = null;
      let row = -1;
      let lastColumn = -1;
      let lastOffset = -1;
      const seen = new Set<string>();
      const instances = db.prepare('SELECT term, doc, col, "offset" FROM temp.notary_postings_vocab').raw(true).iterate() as Iterable<[string, number, string, number]>;
      for (const [t, doc, col, offset] of instances) {
        const r = rowOf.get(doc);
        const c = columnIndex.get(col);
        if (r === undefined || c === undefined) throw new Error(`instance of row ${doc}, column ${col} not in the table`);
        if (c === facets) {
          let rows = facetRowsByToken.get(t);
          if (!rows) facetRowsByToken.set(t, (rows = []));
          if (rows[rows.length - 1] !== r) rows.push(r);
          continue;
        }
        if (t !== term) {
          if (seen.has(t)) throw new Error(`term ${t} comes back after other terms`);
          seen.add(t);
          term = t;
          terms.push(t);
          termEntries.push(entryRows.length);
          row = -1;
        }
        if (r !== row) {
          if (r < row) throw new Error(`rows of term ${t} are out of order`);
          row = r;
          entryRows.push(r);
          entryInstances.push(instanceColumns.length);
          lastColumn = -1;
          lastOffset = -1;
        } else if (c < lastColumn || (c === lastColumn && offset <= lastOffset)) {
          throw new Error(`instances of term ${t} in row ${doc} are out of order`);
        }
        lastColumn = c;
        lastOffset = offset;
        instanceColumns.push(c);
        instanceOffsets.push(offset);
      }
      termEntries.push(entryRows.length);
      entryInstances.push(instanceColumns.length);

      const facetTokens = [...facetRowsByToken.keys()];
      const facetEntries = new Int32Buffer();
      const facetRows = new Int32Buffer();
      for (const token of facetTokens) {
        facetEntries.push(facetRows.length);
        for (const r of facetRowsByToken.get(token) ?? []) facetRows.push(r);
      }
      facetEntries.push(facetRows.length);
      return {
        generation,
        rowCount,
        tokenTotal,
        rowids,
        pageIds,
        sizes,
        terms,
        termEntries: termEntries.done(),
        entryRows: entryRows.done(),
        entryInstances: entryInstances.done(),
        instanceColumns: Uint8Array.from(instanceColumns.done()),
        instanceOffsets: instanceOffsets.done(),
        facetTokens,
        facetEntries: facetEntries.done(),
        facetRows: facetRows.done(),
      };
    } finally {
      db.exec('COMMIT');
    }
  } finally {
    db.close();
  }
}

if (parentPort) {
  let reply: PostingsReply;
  try {
    reply = { ok: true, snapshot: build(workerData as PostingsBuildConfig) };
  } catch (error) {
    reply = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const transfer = reply.ok
    ? [reply.snapshot.rowids, reply.snapshot.pageIds, reply.snapshot.sizes, reply.snapshot.termEntries, reply.snapshot.entryRows, reply.snapshot.entryInstances,
       reply.snapshot.instanceColumns, reply.snapshot.instanceOffsets, reply.snapshot.facetEntries, reply.snapshot.facetRows].map((a) => a.buffer as ArrayBuffer)
    : [];
  parentPort.postMessage(reply, transfer);
}
