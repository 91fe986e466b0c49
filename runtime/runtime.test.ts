import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_COLLECTION_ID } from '../core/collections.js';
import { configSchema } from '../core/config.js';
import { openSqlite } from '../storage/db.js';
import { sqlVectorAnn } from '../indexer/sql-vector-store.js';
import { Runtime } from './runtime.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-runtime-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Runtime.open', () => {
  it('indexes the stored passages again when the full-text tables had an older layout', async () => {
    const config = configSchema.parse({ data_dir: dir });
    const messages: string[] = [];
    const log = (_level: string, message: string) => void messages.push(message);
    const first = await Runtime.open(config, { log });
    const raw = first.storage.sqlite!;
    raw.prepare(
      `insert into pages (id, url, final_url, host, http_status, crawl_depth, state, fetched_at, checked_at)
       values (1, 'http://a.test/', 'http://a.test/', 'a.test', 200, 0, 'indexed', '2026-01-01', '2026-01-01')`,
    ).run();
    raw.prepare(`insert into passages (id, page_id, ordinal, url, title, heading_path, text, word_count) values (7, 1, 0, 'http://a.test/', 'WAL', '', 'checkpoints flush the write-ahead log', 6)`).run();
    await first.rebuildIndex();
    expect((await first.index.search('checkpoints', { limit: 5 })).map((h) => h.id)).toEqual([7]);
    raw.prepare(`UPDATE notary_fts_meta SET value = '2' WHERE key = 'schema'`).run();
    await first.close();
    expect(messages.some((m) => m.includes('new layout'))).toBe(false);

    const second = await Runtime.open(config, { log });
    expect(messages.some((m) => m.includes('new layout'))).toBe(true);
    expect((await second.index.search('checkpoints', { limit: 5 })).map((h) => h.id)).toEqual([7]);
    await second.close();
  });
});

describe('Runtime.rebuildIndex', () => {
  it("keeps each page's collections: a rebuilt index filters by them as the indexer's did", async () => {
    const config = configSchema.parse({ data_dir: path.join(dir, 'collections') });
    const runtime = await Runtime.open(config, { log: () => {} });
    try {
      const raw = runtime.storage.sqlite!;
      const hr = await runtime.collections.ensure('hr');
      for (const [id, url] of [[1, 'http://hr.test/'], [2, 'http://www.test/']] as const) {
        raw.prepare(
          `insert into pages (id, url, final_url, host, http_status, crawl_depth, state, fetched_at, checked_at)
           values (?, ?, ?, 'x.test', 200, 0, 'indexed', '2026-01-01', '2026-01-01')`,
        ).run(id, url, url);
        raw.prepare(`insert into passages (id, page_id, ordinal, url, title, heading_path, text, word_count) values (?, ?, 0, ?, 'T', '', 'payroll dates and holidays', 4)`).run(10 + id, id, url);
      }
      raw.prepare(`insert into page_collections (page_id, collection_id) values (1, ?)`).run(hr.id);
      await runtime.rebuildIndex();
      const ids = async (collections: string[]) => (await runtime.index.search('payroll', { limit: 5, filter: { collections } })).map((h) => h.id).sort();
      expect(await ids([hr.id])).toEqual([11]);
      expect(await ids([DEFAULT_COLLECTION_ID])).toEqual([12]);
      const pages = async (collections: string[]) => (await runtime.index.searchPages('payroll', { limit: 5, filter: { collections } })).map((h) => h.pageId);
      expect(await pages([hr.id])).toEqual([1]);
    } finally {
      await runtime.close();
    }
  });
});

describe('sqlVectorAnn', () => {
  it('saves the HNSW graph beside the SQLite file, never for an in-memory database, and not when turned off', async () => {
    const config = configSchema.parse({ data_dir: dir, embeddings: { ann_above: 1000 } });
    const file = path.join(dir, 'ann.sqlite');
    const storage = openSqlite(file);
    const memory = openSqlite(':memory:');
    expect(sqlVectorAnn(config, storage)).toEqual({ above: 1000, directory: `${file}.hnsw` });
    expect(sqlVectorAnn(config, memory)).toEqual({ above: 1000 });
    expect(sqlVectorAnn({ ...config, embeddings: { ...config.embeddings, ann_persist: false } }, storage)).toEqual({ above: 1000 });
    await storage.close();
    await memory.close();
  });
});
