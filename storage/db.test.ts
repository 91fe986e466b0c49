import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openSqlite } from './db.js';

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
    const bump = (db: typeof first.db) => db.updateTable('passage_vector_generation').set((eb) => ({ generation: eb('generation', '+', 1) })).where('id', '=', 1).execute();
    let secondWrite: unknown = null;
    await first.db.transaction().execute(async (trx) => {
      await trx.selectFrom('passage_vector_generation').select('generation').executeTakeFirstOrThrow();
      // Another process writes between this transaction's read and its write.
      try {
        await bump(second.db);
      } catch (err) {
        secondWrite = err;
      }
      await bump(trx);
    });
    expect(secondWrite).toMatchObject({ code: 'SQLITE_BUSY' });
    const { generation } = await first.db.selectFrom('passage_vector_generation').select('generation').executeTakeFirstOrThrow();
    expect(generation).toBe(1);
    // A transaction marked read only does not take the write lock.
    await first.db
      .transaction()
      .setAccessMode('read only')
      .execute(async (trx) => {
        await trx.selectFrom('passage_vector_generation').select('generation').executeTakeFirstOrThrow();
        await bump(second.db);
      });
    await first.close();
    await second.close();
  });
});
