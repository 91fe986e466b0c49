import { it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrateToLatest, openSqlite } from '../storage/db.js';
it('sqlite', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'zz-'));
  process.stderr.write('open\n');
  const s = openSqlite(path.join(dir, 'n.sqlite'));
  process.stderr.write('opened\n');
  await migrateToLatest(s);
  process.stderr.write('migrated\n');
});
