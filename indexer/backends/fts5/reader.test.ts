import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Fts5Reader } from './reader.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-fts5-reader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Fts5Reader', () => {
  it('reads what the writing connection committed, before and after it opened, and refuses writes', async () => {
    const file = path.join(dir, 'reader.sqlite');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    db.prepare('INSERT INTO t (v) VALUES (?)').run('first');
    const reader = new Fts5Reader(file);
    expect(await reader.all('SELECT v FROM t ORDER BY id', [])).toEqual([{ v: 'first' }]);
    db.prepare('INSERT INTO t (v) VALUES (?)').run('second');
    const [a, b] = await Promise.all([reader.all('SELECT v FROM t WHERE id = ?', [2]), reader.all('SELECT count(*) AS n FROM t', [])]);
    expect(a).toEqual([{ v: 'second' }]);
    expect(b).toEqual([{ n: 2 }]);
    await expect(reader.all('DELETE FROM t', [])).rejects.toMatchObject({ code: 'internal_error' });
    expect(reader.usable).toBe(true);
    await reader.close();
    expect(reader.usable).toBe(false);
    await expect(reader.all('SELECT 1', [])).rejects.toThrow(/closed/);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2 });
    db.close();
  });

  it('fails its requests, never hangs, when the file cannot be opened', async () => {
    const reader = new Fts5Reader(path.join(dir, 'missing', 'none.sqlite'));
    await expect(reader.all('SELECT 1', [])).rejects.toThrow();
    expect(reader.usable).toBe(false);
    await reader.close();
  });
});
