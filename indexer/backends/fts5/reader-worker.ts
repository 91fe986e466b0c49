/**
 * The worker thread of indexer/backends/fts5/reader.ts: a read-only connection to the index's SQLite file that runs the
 * SELECTs it is sent. Node runs this file with its built-in type stripping, so it uses erasable TypeScript only and
 * imports nothing of ours.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

export interface Fts5ReaderConfig {
  file: string;
}

export type Fts5ReaderRequest = { id: number; sql: string; params: unknown[] };
export type Fts5ReaderReply = { id: number; ok: true; rows: unknown[] } | { id: number; ok: false; error: string };

const config = workerData as Fts5ReaderConfig;
const db = new BetterSqlite3(config.file, { readonly: true, fileMustExist: true });
// The addon is loaded: core/addon-worker.ts may terminate this thread from now on.
const loaded = new Int32Array((workerData as { addonLoaded: SharedArrayBuffer }).addonLoaded);
Atomics.store(loaded, 0, 1);
Atomics.notify(loaded, 0);
db.pragma('busy_timeout = 5000');
const statements = new Map<string, BetterSqlite3.Statement>();

parentPort?.on('message', (message: Fts5ReaderRequest) => {
  let reply: Fts5ReaderReply;
  try {
    let stmt = statements.get(message.sql);
    if (!stmt) {
      stmt = db.prepare(message.sql);
      if (!stmt.reader) throw new Error('the full-text reader runs SELECTs only');
      statements.set(message.sql, stmt);
    }
    reply = { id: message.id, ok: true, rows: stmt.all(...message.params) };
  } catch (error) {
    reply = { id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(reply);
});
