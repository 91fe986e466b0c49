// Run by storage/db.test.ts in several processes at once: opens the SQLite file named by argv[2] and migrates it.
import { migrateToLatest, openSqlite } from './db.js';

const storage = openSqlite(process.argv[2] ?? '');
try {
  await migrateToLatest(storage);
} finally {
  await storage.close();
}
