import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { DEFAULT_COLLECTION_ID } from '../core/index.js';
import { migrateToLatest, openSqlite, preparedStatementCache } from './db.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-db-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openSqlite', () => {
  it('a read-then-write transaction holds the write lock from its start: another connection waits, it never fails', async () => {
    const file = path.join(dir, 'two.sqlite');
    const first = openSqlite(file);
    const second = openSqlite(file);
    await migrateToLatest(first);
    // The second connection gives up at once instead of waiting (better-sqlite3 is synchronous: waiting here would
    // only stall this one thread).
    second.sqlite!.pragma('busy_timeout = 0');
    // A one-row counter of the shared schema: the default collection's `public` flag, 1 after the migrations.
    const bump = (db: typeof first.db) => db.updateTable('collections').set((eb) => ({ public: eb('public', '+', 1) })).where('id', '=', DEFAULT_COLLECTION_ID).execute();
    const read = (db: typeof first.db) => db.selectFrom('collections').select('public').where('id', '=', DEFAULT_COLLECTION_ID).executeTakeFirstOrThrow();
    let secondWrite: unknown = null;
    await first.db.transaction().execute(async (trx) => {
      await read(trx);
      // Another process writes between this transaction's read and its write.
      try {
        await bump(second.db);
      } catch (err) {
        secondWrite = err;
      }
      await bump(trx);
    });
    expect(secondWrite).toMatchObject({ code: 'SQLITE_BUSY' });
    expect((await read(first.db)).public).toBe(2);
    // A transaction marked read only does not take the write lock.
    await first.db
      .transaction()
      .setAccessMode('read only')
      .execute(async (trx) => {
        await read(trx);
        await bump(second.db);
      });
    await first.close();
    await second.close();
  });
});

describe('migrateToLatest', () => {
  it('four processes starting on one new SQLite file at once: each migrates or finds the migrations done, none fails', async () => {
    const run = promisify(execFile);
    const fixture = path.join(import.meta.dirname, 'migrate-concurrently.fixture.ts');
    for (let round = 0; round < 3; round++) {
      const file = path.join(dir, `race-${round}.sqlite`);
      const runs = await Promise.allSettled(
        Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', fixture, file], { timeout: 120_000 })),
      );
      const failed = runs.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as { stderr?: string }).stderr ?? r.reason)] : []));
      expect(failed).toEqual([]);
      const storage = openSqlite(file);
      const executed = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(storage.db);
      const names = await sql<{ name: string }>`select name from kysely_migration`.execute(storage.db);
      expect(new Set(names.rows.map((r) => r.name)).size).toBe(executed.rows[0]?.n);
      await storage.close();
    }
  }, 300_000);
});

describe('preparedStatementCache', () => {
  it('prepares each SQL text once, reuses it with other parameters, and drops the least recently used beyond its cap', () => {
    const sqlite = new BetterSqlite3(':memory:');
    const cache = preparedStatementCache(sqlite, 2);
    const a = cache.prepare('SELECT ? + 1 AS n');
    expect(cache.prepare('SELECT ? + 1 AS n')).toBe(a);
    expect(a.all([1])).toEqual([{ n: 2 }]);
    expect(a.all([41])).toEqual([{ n: 42 }]);
    const b = cache.prepare('SELECT ? * 2 AS n');
    cache.prepare('SELECT ? + 1 AS n'); // a is now the most recently used
    cache.prepare('SELECT ? - 1 AS n'); // over the cap: b goes
    expect(cache.size()).toBe(2);
    expect(cache.prepare('SELECT ? + 1 AS n')).toBe(a);
    expect(cache.prepare('SELECT ? * 2 AS n')).not.toBe(b);
    cache.close();
    expect(sqlite.open).toBe(false);
  });

  it('kysely on the cached handle: the same query with new values, writes, a rolled-back transaction', async () => {
    const storage = openSqlite(path.join(dir, 'cached.sqlite'));
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(storage.db);
    for (const v of ['x', 'y']) await sql`INSERT INTO t (v) VALUES (${v})`.execute(storage.db);
    await expect(
      storage.db.transaction().execute(async (trx) => {
        await sql`INSERT INTO t (v) VALUES (${'z'})`.execute(trx);
        throw new Error('work failed');
      }),
    ).rejects.toThrow('work failed');
    const rows = await sql<{ v: string }>`SELECT v FROM t WHERE id >= ${1} ORDER BY id`.execute(storage.db);
    expect(rows.rows.map((r) => r.v)).toEqual(['x', 'y']);
    const one = await sql<{ v: string }>`SELECT v FROM t WHERE id >= ${2} ORDER BY id`.execute(storage.db);
    expect(one.rows.map((r) => r.v)).toEqual(['y']);
    await storage.close();
  });
});
