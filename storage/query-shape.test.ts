import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openSqlite } from './db.js';
import { QueryShape } from './query-shape.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-query-shape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('QueryShape', () => {
  it('runs the SQL text and parameters Kysely compiles for the same values, on the database and in a transaction', async () => {
    const storage = openSqlite(path.join(dir, 'shape.sqlite'));
    try {
      await migrateToLatest(storage);
      const { db } = storage;
      const insertTenant = (id: string, name: string, credits: number) => db.insertInto('tenants').values({ id, name, tier: 'free', credits, created_at: '2026-01-01T00:00:00.000Z' });
      // A value used twice (credits), one used once (id).
      const debit = (id: string, credits: number) =>
        db
          .updateTable('tenants')
          .set((eb) => ({ credits: eb('credits', '-', credits) }))
          .where('id', '=', id)
          .where('credits', '>=', credits)
          .returning('credits');
      const shapes = { insertTenant: new QueryShape(3, insertTenant), debit: new QueryShape(2, debit) };
      for (const [id, name, credits] of [['ten_a', 'a', 10], ['ten_b', 'b', 3]] as const) {
        const own = insertTenant(id, name, credits).compile();
        const shaped = shapes.insertTenant.compile(id, name, credits);
        expect({ sql: shaped.sql, parameters: shaped.parameters }).toEqual({ sql: own.sql, parameters: own.parameters });
        await shapes.insertTenant.run(db, id, name, credits);
      }
      const own = debit('ten_a', 4).compile();
      const shaped = shapes.debit.compile('ten_a', 4);
      expect({ sql: shaped.sql, parameters: shaped.parameters }).toEqual({ sql: own.sql, parameters: own.parameters });
      expect(await shapes.debit.first(db, 'ten_a', 4)).toEqual({ credits: 6 });
      // Refused by the condition: no row, as Kysely's executeTakeFirst.
      expect(await shapes.debit.first(db, 'ten_b', 4)).toBeUndefined();
      // In a transaction that rolls back: nothing stays.
      await expect(
        db.transaction().execute(async (trx) => {
          expect(await shapes.debit.first(trx, 'ten_b', 2)).toEqual({ credits: 1 });
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      const rows = await db.selectFrom('tenants').select(['id', 'credits']).orderBy('id').execute();
      expect(rows).toEqual([
        { id: 'ten_a', credits: 6 },
        { id: 'ten_b', credits: 3 },
      ]);
    } finally {
      await storage.close();
    }
  });

  it('refuses a shape that does not use each argument as a value', async () => {
    const storage = openSqlite(path.join(dir, 'arity.sqlite'));
    try {
      await migrateToLatest(storage);
      const shape = new QueryShape(2, (id: string, _unused: number) => storage.db.selectFrom('tenants').select('credits').where('id', '=', id));
      expect(() => shape.compile('ten_a', 1)).toThrow(/uses 1 of its 2 arguments/);
    } finally {
      await storage.close();
    }
  });
});
