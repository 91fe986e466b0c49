// Run by test/sql-rate-limit-processes.test.ts in several processes at once: opens the migrated SQLite file named by
// argv[2], waits until the time argv[3] (ms since the epoch) so the processes call together, consumes key "shared"
// argv[4] times with burst 7 at one request a minute (no refill within the test), and prints how many were allowed.
import { migrateToLatest, openSqlite } from '../storage/db.js';
import { SqlRateLimitStore } from '../payments/index.js';

const storage = openSqlite(process.argv[2] ?? '');
try {
  await migrateToLatest(storage);
  const store = new SqlRateLimitStore(storage.db, storage.dialect);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(process.argv[3]) - Date.now())));
  let allowed = 0;
  for (let i = 0; i < Number(process.argv[4]); i++) if ((await store.consume('shared', { requests_per_minute: 1, burst: 7 })).allowed) allowed++;
  process.stdout.write(`${allowed}\n`);
} finally {
  await storage.close();
}
