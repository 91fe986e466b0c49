import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  sql,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type SqliteDatabase,
  type TransactionSettings,
} from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import type { NotaryConfig } from '../core/index.js';
import { NotaryError, endpointOf, waitAtStart } from '../core/index.js';
import { migrationProvider, type Dialect } from './migrations.js';
import type { Database } from './schema.js';

export interface Storage {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The raw SQLite handle when dialect is sqlite; the FTS5 index lives in the same file. */
  sqlite: BetterSqlite3.Database | null;
  /** Path of the SQLite file, or null for PostgreSQL. */
  file: string | null;
  close(): Promise<void>;
}

export function sqliteFile(dataDir: string): string {
  return path.join(dataDir, 'notary.sqlite');
}

/**
 * Read-write transactions begin IMMEDIATE: the write lock is taken (waiting up to busy_timeout) before the first
 * read, so a transaction that reads, then writes never fails with SQLITE_BUSY because another process (a second API
 * worker, a crawler) wrote since its read. Transactions marked read only keep SQLite's deferred begin.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(settings?.accessMode === 'read only' ? 'begin' : 'begin immediate'));
  }
}

/** Distinct SQL texts whose prepared statements are kept (queries with IN lists of varying length each have one). */
const PREPARED_STATEMENTS_KEPT = 500;

/**
 * The handle kysely sees: each SQL text is prepared once and its statement reused (kysely prepares every query
 * anew, which was 0.5 ms of a paid search). Least recently used statements beyond the cap are dropped. Reuse is
 * safe because kysely runs one query at a time on a SQLite connection.
 */
export function preparedStatementCache(sqlite: BetterSqlite3.Database, kept = PREPARED_STATEMENTS_KEPT): SqliteDatabase & { size(): number } {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    size: () => statements.size,
    prepare(sql: string) {
      let stmt = statements.get(sql);
      if (stmt) {
        statements.delete(sql);
      } else {
        stmt = sqlite.prepare(sql);
        if (statements.size >= kept) {
          const oldest = statements.keys().next();
          if (!oldest.done) statements.delete(oldest.value);
        }
      }
      statements.set(sql, stmt);
      return stmt;
    },
  };
}

/**
 * SQLite's DDL is transactional, but Kysely's adapter says otherwise and takes no lock across processes, so two
 * processes starting on a new database at once ran the same migrations side by side (one failed with "duplicate
 * column name", and a migration half done by each could be left half done). Saying so makes the migrator run all
 * pending migrations in one transaction, which begins IMMEDIATE: the second process waits for the write lock, then
 * finds them recorded.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  private readonly database: SqliteDatabase;

  constructor(sqlite: BetterSqlite3.Database) {
    const database = preparedStatementCache(sqlite);
    super({ database });
    this.database = database;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.database });
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

export function openSqlite(file: string): Storage {
  let sqlite: BetterSqlite3.Database;
  try {
    if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
    sqlite = new BetterSqlite3(file);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new NotaryError(
      'data_dir_unusable',
      `The data folder ${path.dirname(file)} cannot hold the database (${reason}). Fix: point --data / NOTARY_DATA_DIR (data_dir) at a folder this user can write`,
    );
  }
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(sqlite) });
  return {
    db,
    dialect: 'sqlite',
    sqlite,
    file,
    close: async () => {
      await db.destroy();
    },
  };
}

export function openPostgres(connectionString: string, connectTimeoutMs = 5_000): Storage {
  // A server that accepts and never answers fails the connection after connectTimeoutMs instead of hanging.
  const pool = new pg.Pool({ connectionString, max: 10, connectionTimeoutMillis: connectTimeoutMs });
  // An idle connection that breaks (a database restart) is dropped by the pool; the next query reports the failure.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    sqlite: null,
    file: null,
    close: async () => {
      await db.destroy();
    },
  };
}

export async function migrateToLatest(storage: Storage): Promise<void> {
  // Migrations are named by the issue that added them, so they may land out of name order.
  const migrator = new Migrator({ db: storage.db, provider: migrationProvider(storage.dialect), allowUnorderedMigrations: true });
  // On SQLite the pending migrations run in one IMMEDIATE transaction (TransactionalDdlSqliteAdapter): a process
  // starting beside another waits busy_timeout for the write lock, and tries again if the other holds it longer.
  const attempts = storage.dialect === 'sqlite' ? 10 : 1;
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === 'Error');
    if (!error && !failed) return;
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName);
    if (attempt < attempts && /already exists|SQLITE_BUSY|database is locked/i.test(reason)) {
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      continue;
    }
    throw new Error(`database migration failed: ${reason}`);
  }
}

/** Opens the configured database and brings its schema up to date. */
export async function openStorage(cfg: NotaryConfig): Promise<Storage> {
  const url = cfg.storage.driver === 'postgres' ? cfg.storage.postgres_url : undefined;
  const storage = url ? openPostgres(url, cfg.storage.connect_timeout_ms) : openSqlite(sqliteFile(cfg.data_dir));
  try {
    if (url) {
      await waitAtStart({ what: `PostgreSQL at ${endpointOf(url)}`, setting: 'storage.postgres_url (NOTARY_DATABASE_URL)', waitMs: cfg.server.start_wait_ms }, () =>
        sql`select 1`.execute(storage.db),
      );
    }
    await migrateToLatest(storage);
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw err;
  }
  return storage;
}

export function nowIso(date: Date = new Date()): string {
  return date.toISOString();
}
