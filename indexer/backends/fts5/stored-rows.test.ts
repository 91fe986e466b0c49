import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Fts5SearchIndex } from './search-index.js';
import { StoredRows } from './stored-rows.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-stored-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('StoredRows', () => {
  it('reads only the rows it does not hold, all of them again once the generation moves on, and keeps the most recently used', () => {
    const reads: number[][] = [];
    const rows = new StoredRows<string>(3, (ids) => {
      reads.push([...ids]);
      return ids.filter((id) => id !== 99).map((id) => ({ id, row: `row ${id}` }));
    });
    expect([...rows.get([1, 2, 99], 'g1')]).toEqual([
      [1, 'row 1'],
      [2, 'row 2'],
    ]);
    // 1 and 2 are held; 99 has no row and is asked for again.
    expect([...rows.get([2, 3, 1, 99], 'g1').keys()]).toEqual([2, 1, 3]);
    expect(reads).toEqual([[1, 2, 99], [3, 99]]);
    // Three held (1, 2, 3); 4 pushes out the least recently used, 2 (1 was used after it).
    rows.get([4], 'g1');
    rows.get([1, 3, 4], 'g1');
    rows.get([2], 'g1');
    expect(reads.slice(2)).toEqual([[4], [2]]);
    // A write (a new generation): everything is read again.
    rows.get([1, 3], 'g2');
    expect(reads.slice(4)).toEqual([[1, 3]]);
  });

  it('with no capacity keeps nothing', () => {
    let read = 0;
    const rows = new StoredRows<number>(0, (ids) => ids.map((id) => (read++, { id, row: id })));
    rows.get([1, 2], 'g');
    rows.get([1, 2], 'g');
    expect(read).toBe(4);
  });
});

describe('Fts5SearchIndex stored rows', () => {
  const passage = (id: number, text: string, publishedAt?: string) => ({
    id,
    pageId: id,
    url: `http://a.test/${id}`,
    title: `P${id}`,
    headingPath: 'H',
    text,
    language: 'en',
    ...(publishedAt ? { publishedAt } : {}),
  });

  it("shows a passage as written last, also when another connection (another process) wrote it, and as it showed before it was kept", async () => {
    const file = path.join(dir, 'two-connections.sqlite');
    const first = new BetterSqlite3(file);
    first.pragma('journal_mode = WAL');
    const second = new BetterSqlite3(file);
    const searching = new Fts5SearchIndex(first);
    const writing = new Fts5SearchIndex(second);
    const without = new Fts5SearchIndex(first, { storedRows: 0 });
    try {
      await writing.upsert([passage(1, 'vacuum freezes old rows', '2024-05-01T00:00:00.000Z'), passage(2, 'vacuum full rewrites the table')]);
      const search = (index: Fts5SearchIndex) => index.search('vacuum', { limit: 10 });
      const before = await search(searching);
      expect(before.map((h) => h.text).sort()).toEqual(['vacuum freezes old rows', 'vacuum full rewrites the table']);
      // Kept rows give the hits (members and their order) that reading them gives.
      const again = await search(searching);
      expect(again).toEqual(await search(without));
      expect(again.map((h) => Object.keys(h))).toEqual((await search(without)).map((h) => Object.keys(h)));
      expect(await searching.get([2, 1])).toEqual(await without.get([2, 1]));
      expect((await searching.get([1]))[0]).toMatchObject({ publishedAt: '2024-05-01T00:00:00.000Z', language: 'en' });
      // Another connection rewrites passage 1: this one shows the new text at once, in hits and in get.
      await writing.upsert([passage(1, 'vacuum now analyzes too')]);
      const after = await search(searching);
      expect(after.find((h) => h.id === 1)?.text).toBe('vacuum now analyzes too');
      expect(after.find((h) => h.id === 1)?.publishedAt).toBeUndefined();
      expect((await searching.get([1]))[0]?.text).toBe('vacuum now analyzes too');
      await writing.delete([2]);
      expect(await searching.get([1, 2])).toEqual(await without.get([1, 2]));
      expect((await searching.get([1, 2])).map((d) => d.id)).toEqual([1]);
    } finally {
      await searching.close();
      await without.close();
      await writing.close();
      first.close();
      second.close();
    }
  });

  it('warm() holds every passage when they all fit, none when they do not; the hits are the same either way', async () => {
    const file = path.join(dir, 'warm.sqlite');
    const db = new BetterSqlite3(file);
    const fits = new Fts5SearchIndex(db, { storedRows: 50 });
    const small = new Fts5SearchIndex(db, { storedRows: 10 });
    const without = new Fts5SearchIndex(db, { storedRows: 0 });
    try {
      await fits.upsert(Array.from({ length: 20 }, (_, i) => passage(i + 1, `vacuum passage number ${i + 1} of twenty`)));
      expect(fits.storedRowsHeld()).toBe(0);
      await fits.warm();
      await small.warm();
      expect(fits.storedRowsHeld()).toBe(20);
      expect(small.storedRowsHeld()).toBe(0);
      const search = (index: Fts5SearchIndex) => index.search('vacuum twenty', { limit: 20 });
      expect(await search(fits)).toEqual(await search(without));
      expect(await search(small)).toEqual(await search(without));
      // A write after warm(): the next search reads the rows again and shows the new text.
      await fits.upsert([passage(3, 'vacuum rewritten twenty')]);
      expect((await search(fits)).find((h) => h.id === 3)?.text).toBe('vacuum rewritten twenty');
    } finally {
      await fits.close();
      await small.close();
      await without.close();
      db.close();
    }
  });
});
