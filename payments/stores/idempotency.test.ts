import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../../testkit/postgres.js';
import { describeIdempotencyStoreContract, type IdempotencyHarness } from './idempotency.contract.js';
import { MemoryIdempotencyStore } from './idempotency.js';
import { SqlIdempotencyStore } from './sql-idempotency.js';

describeIdempotencyStoreContract('memory', async () => {
  const store = new MemoryIdempotencyStore();
  return { store, reopen: async () => store };
});

/** A store on a database, and `reopen` as a second connection to the same one (another process, a restart). */
async function sqlHarness(open: () => Storage, cleanup: () => void = () => {}): Promise<IdempotencyHarness> {
  const opened: Storage[] = [open()];
  await migrateToLatest(opened[0]!);
  return {
    store: new SqlIdempotencyStore(opened[0]!.db),
    reopen: async () => {
      const again = open();
      opened.push(again);
      return new SqlIdempotencyStore(again.db);
    },
    close: async () => {
      for (const s of opened) await s.close();
      cleanup();
    },
  };
}

describeIdempotencyStoreContract('SQLite', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-idem-'));
  return sqlHarness(() => openSqlite(path.join(dir, 'notary.sqlite')), () => rmSync(dir, { recursive: true, force: true }));
});

let pgServer: TestPostgres;
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => pgServer?.stop());

let pgDatabases = 0;
describeIdempotencyStoreContract('PostgreSQL', async () => {
  const url = await createDatabase(pgServer.url, `notary_idem_${process.pid}_${pgDatabases++}`);
  return sqlHarness(() => openPostgres(url));
});
