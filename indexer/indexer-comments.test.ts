import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { htmlPageFetched, PageStore } from '../storage/pages.js';
import { Fts5SearchIndex } from './backends/fts5/search-index.js';
import { Indexer } from './indexer.js';

/** The indexer's own extraction leaves reader comments out unless its config says include_comments. */
const thread = readFileSync(path.resolve(import.meta.dirname, '../test/fixtures/extract-shapes/article-responses.html'), 'utf8');
const dir = mkdtempSync(path.join(tmpdir(), 'notary-indexer-comments-'));
let storage: Storage;

beforeAll(async () => {
  storage = openSqlite(path.join(dir, 'storage.sqlite'));
  await migrateToLatest(storage);
});
afterAll(async () => {
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Indexer include_comments', () => {
  it('indexes the article alone by default, and its comments with include_comments', async () => {
    const pages = new PageStore(storage.db);
    const index = new Fts5SearchIndex(storage.sqlite!);
    const config = { backend: 'sqlite-fts5' as const, passage_min_words: 10, passage_max_words: 60 };
    await pages.saveFetched(htmlPageFetched('http://lane.test/bench', thread));
    await new Indexer({ pages, index, config, logger: { warn: () => {} } }).runOnce();
    expect((await index.search('plaque', { limit: 5 })).length).toBeGreaterThan(0);
    expect(await index.search('trolley', { limit: 5 })).toEqual([]);

    await pages.saveFetched(htmlPageFetched('http://lane.test/bench', thread.replace('ninety residents', 'ninety-one residents')));
    await new Indexer({ pages, index, config: { ...config, include_comments: true }, logger: { warn: () => {} } }).runOnce();
    expect((await index.search('trolley', { limit: 5 })).length).toBeGreaterThan(0);
    await index.close();
  });
});
