import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openSqlite } from '../storage/db.js';

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'notary-rate-processes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQL rate limiter on one SQLite file shared by processes (serve --workers N)', () => {
  it('four processes calling at once are allowed exactly the burst in all, three rounds', async () => {
    const fixture = path.join(import.meta.dirname, 'sql-rate-limit-processes.fixture.ts');
    for (let round = 0; round < 3; round++) {
      const file = path.join(dir, `limit-${round}.sqlite`);
      const storage = openSqlite(file);
      await migrateToLatest(storage);
      await storage.close();
      // Start together: each process waits for the same moment, after all have loaded (a start costs seconds).
      const at = Date.now() + 8_000;
      const runs = await Promise.all(
        Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', fixture, file, String(at), '10'], { timeout: 120_000 })),
      );
      const allowed = runs.map((r) => Number(r.stdout.trim()));
      expect(allowed.every((n) => Number.isInteger(n))).toBe(true);
      expect(allowed.reduce((a, b) => a + b, 0)).toBe(7);
    }
  }, 400_000);
});
