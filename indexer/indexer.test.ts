import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_HTML_CHARS } from '../extract/extract.js';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { htmlPageFetched, PageStore } from '../storage/pages.js';
import { Fts5SearchIndex } from './backends/fts5/search-index.js';
import { Indexer, type IndexerLogger } from './indexer.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-indexer-'));
let storage: Storage;
let pages: PageStore;
let index: Fts5SearchIndex;
const warnings: string[] = [];
const logger: IndexerLogger = { warn: (_details, message) => warnings.push(message) };

beforeAll(async () => {
  storage = openSqlite(path.join(dir, 'storage.sqlite'));
  await migrateToLatest(storage);
  pages = new PageStore(storage.db);
  index = new Fts5SearchIndex(storage.sqlite!);
});
afterAll(async () => {
  await index.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

const config = { backend: 'sqlite-fts5' as const, passage_min_words: 20, passage_max_words: 40 };

function page(url: string, html: string, title: string | null = null) {
  return { ...htmlPageFetched(url, html), title };
}

const article = (title: string, sections: Array<[string, string]>) => `<!doctype html><html><head><title>${title}</title></head>
<body><nav class="navheader"><a href="/">Home</a> <a href="/next">Next</a> menuword</nav>
<div class="sect1"><h1>${title}</h1>${sections.map(([h, p]) => `<h2>${h}</h2><p>${p}</p>`).join('')}</div>
<div class="navfooter"><a href="/prev">Prev</a> footerword</div></body></html>`;

const words = (topic: string, n: number) =>
  Array.from({ length: n }, (_, i) => (i % 7 === 0 ? topic : `filler${i % 13}`)).join(' ') + '.';

describe('Indexer on a real SQLite file', () => {
  it('indexes, re-indexes changed pages, removes gone pages, survives failures', async () => {
    const indexer = new Indexer({ pages, index, config, logger });
    await pages.saveFetched(page('http://docs.test/vacuum', article('Routine Vacuuming', [['Autovacuum', words('autovacuum', 50)], ['Freezing', words('wraparound', 30)]])));
    await pages.saveFetched(page('http://docs.test/wal', article('Write-Ahead Log', [['Checkpoints', words('checkpoint', 45)]])));
    await pages.saveFetched(page('http://docs.test/empty', '<html><body></body></html>', 'Stored Title'));
    await pages.saveFetched(page('http://docs.test/huge', `<html><body><p>${'x'.repeat(MAX_HTML_CHARS)}</p></body></html>`));

    const progress: number[] = [];
    const first = await indexer.runOnce({ batchSize: 2, onProgress: (p) => progress.push(p.indexedPages + p.failed) });
    expect(first).toMatchObject({ indexedPages: 3, removedPages: 0, failed: 1 });
    expect(first.passages).toBeGreaterThanOrEqual(4);
    expect(progress).toEqual([2, 4]);
    expect(warnings).toHaveLength(1);
    expect(await pages.pendingForIndex(10)).toEqual([]);
    expect((await pages.counts()).passages).toBe(first.passages);
    expect((await index.stats()).documents).toBe(first.passages);

    const hits = await index.search('autovacuum', { limit: 10 });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]).toMatchObject({ url: 'http://docs.test/vacuum', title: 'Routine Vacuuming', headingPath: 'Autovacuum' });
    for (const boilerplate of ['menuword', 'footerword', 'Prev']) expect(await index.search(boilerplate, { limit: 5 })).toEqual([]);
    expect((await index.search('wraparound', { limit: 5 }))[0]?.headingPath).toBe('Freezing');

    // Nothing pending: a second run does nothing.
    expect(await indexer.runOnce()).toMatchObject({ indexedPages: 0, removedPages: 0, passages: 0, failed: 0 });

    // Changed page: old text gone from index and passages, new text found.
    await pages.saveFetched(page('http://docs.test/wal', article('Write-Ahead Log', [['Replication', words('walsender', 45)]])));
    const second = await indexer.runOnce();
    expect(second).toMatchObject({ indexedPages: 1, removedPages: 0, failed: 0 });
    expect(await index.search('checkpoint', { limit: 5 })).toEqual([]);
    expect((await index.search('walsender', { limit: 5 }))[0]?.url).toBe('http://docs.test/wal');
    const walPage = await pages.getByUrl('http://docs.test/wal');
    const walRows = await storage.db.selectFrom('passages').selectAll().where('page_id', '=', walPage!.id).execute();
    expect(walRows.every((r) => !r.text.includes('checkpoint'))).toBe(true);
    expect((await index.stats()).documents).toBe((await pages.counts()).passages);

    // Gone page: passages removed from both the table and the index.
    await pages.markGone('http://docs.test/vacuum', 404);
    const third = await indexer.runOnce();
    expect(third).toMatchObject({ indexedPages: 0, removedPages: 1, passages: 0 });
    expect(await index.search('autovacuum', { limit: 5 })).toEqual([]);
    const vacuumPage = await pages.getByUrl('http://docs.test/vacuum');
    expect(await pages.passageIdsForPage(vacuumPage!.id)).toEqual([]);
    expect((await index.stats()).documents).toBe((await pages.counts()).passages);
  });

  it('titles passages with the extracted title, else the stored title, else the URL', async () => {
    const indexer = new Indexer({ pages, index, config, logger });
    const body = `<p>${words('pgbench', 30)}</p>`;
    await pages.saveFetched(page('http://t.test/a', `<html><head><title>Extracted</title></head><body>${body}</body></html>`, 'Stored'));
    await pages.saveFetched(page('http://t.test/b', `<html><body>${body} b</body></html>`, 'Stored'));
    await pages.saveFetched(page('http://t.test/c', `<html><body>${body} c</body></html>`));
    await indexer.runOnce();
    const titles = new Map((await index.search('pgbench', { limit: 10 })).map((h) => [h.url, h.title]));
    expect(Object.fromEntries(titles)).toEqual({ 'http://t.test/a': 'Extracted', 'http://t.test/b': 'Stored', 'http://t.test/c': 'http://t.test/c' });
  });
});

describe('publication dates', () => {
  it('gives each passage its page’s publication date, so the date filters find dated pages and keep undated ones apart', async () => {
    const indexer = new Indexer({ pages, index, config, logger });
    const dated = article('Logical Decoding', [['Slots', words('decodingword', 45)]]).replace(
      '</head>',
      '<script type="application/ld+json">{"@type":"TechArticle","headline":"Logical Decoding","datePublished":"2024-05-17T08:00:00+02:00"}</script></head>',
    );
    await pages.saveFetched(page('http://dates.test/decoding', dated));
    await pages.saveFetched(page('http://dates.test/2019/03/02/undated-body', article('Replication Origins', [['Origins', words('decodingword', 45)]])));
    await pages.saveFetched(page('http://dates.test/plain', article('Output Plugins', [['Plugins', words('decodingword', 45)]])));
    await indexer.runOnce();
    const hits = await index.search('decodingword', { limit: 20 });
    const byUrl = new Map(hits.map((h) => [h.url, h.publishedAt]));
    // JSON-LD, as an instant in UTC; a dated URL, as its day; nothing on the third page.
    expect(byUrl.get('http://dates.test/decoding')).toBe('2024-05-17T06:00:00.000Z');
    expect(byUrl.get('http://dates.test/2019/03/02/undated-body')).toBe('2019-03-02T00:00:00.000Z');
    expect(byUrl.get('http://dates.test/plain')).toBeUndefined();
    const since2020 = await index.search('decodingword', { limit: 20, filter: { published: { from: Date.UTC(2020, 0, 1), undated: 'exclude' } } });
    expect([...new Set(since2020.map((h) => h.url))]).toEqual(['http://dates.test/decoding']);
  });
});
