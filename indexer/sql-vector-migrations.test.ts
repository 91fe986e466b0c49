import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openSqlite } from '../storage/db.js';
import { SQL_VECTOR_MIGRATIONS } from './sql-vector-migrations.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-vector-migrations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const columnsOf = async (storage: ReturnType<typeof openSqlite>, table: string) =>
  ((await storage.db.introspection.getTables()).find((t) => t.name === table)?.columns ?? []).map((c) => c.name).sort();

describe('the SQL vector store brings its own migrations', () => {
  it('makes its tables in a new database, under the names databases recorded when they were shared', async () => {
    const storage = openSqlite(path.join(dir, 'new.sqlite'));
    try {
      await migrateToLatest(storage);
      expect(await columnsOf(storage, 'passage_vectors')).toEqual(['collections', 'dimensions', 'host', 'model', 'page_id', 'passage_id', 'published', 'seq', 'vector']);
      expect(await columnsOf(storage, 'passage_vector_changes')).toEqual(['changes', 'id']);
      const recorded = (await storage.db.selectFrom('kysely_migration' as never).select('name' as never).execute()) as Array<{ name: string }>;
      expect(recorded.map((r) => r.name)).toEqual(expect.arrayContaining(Object.keys(SQL_VECTOR_MIGRATIONS)));
    } finally {
      await storage.close();
    }
  });

  it('leaves the collections column of a database whose shared 0033_collections added it', async () => {
    const storage = openSqlite(path.join(dir, 'upgrade.sqlite'));
    try {
      await migrateToLatest(storage);
      // As a database made before the split: the column is there, and the store's own migration was never recorded.
      await storage.db.deleteFrom('kysely_migration' as never).where('name' as never, '=', '0033_passage_vector_collections' as never).execute();
      await migrateToLatest(storage);
      expect(await columnsOf(storage, 'passage_vectors')).toContain('collections');
    } finally {
      await storage.close();
    }
  });
});
