import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { dot } from '../reranker/pooling.js';
import type { Embedder } from '../reranker/embedder.js';
import { tinyModelDir } from '../testkit/models.js';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { htmlPageFetched, PageStore } from '../storage/pages.js';
import { CollectionStore } from '../storage/collections.js';
import { DEFAULT_COLLECTION_ID } from '../core/collections.js';
import { Fts5SearchIndex } from './backends/fts5/search-index.js';
import { Indexer } from './indexer.js';
import { passageModelText } from './search-index.js';
import { SqlVectorIndex } from './sql-vector-index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-indexer-vectors-'));
let storage: Storage;
let pages: PageStore;
let index: Fts5SearchIndex;
let model: OnnxReranker;
let embedder: Embedder;

beforeAll(async () => {
  storage = openSqlite(path.join(dir, 'storage.sqlite'));
  await migrateToLatest(storage);
  pages = new PageStore(storage.db);
  index = new Fts5SearchIndex(storage.sqlite!);
  model = await OnnxReranker.load(tinyModelDir('bi-encoder', dir), { threads: 1, batchSize: 8, maxSeqLength: 128, source: 'test' });
  embedder = await model.embedder();
});
afterAll(async () => {
  await model.close();
  await index.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

const html = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${body}</p></body></html>`;
const text = (topic: string) => Array.from({ length: 60 }, (_, i) => (i % 5 === 0 ? topic : `word${i % 11}`)).join(' ') + '.';

const fetched = htmlPageFetched;

describe('Indexer with a vector index (real SQLite, real ONNX bi-encoder)', () => {
  it('embeds new passages, re-embeds changed pages, drops gone ones, and backfills after a model change', async () => {
    const vectors = new SqlVectorIndex(storage, { model: embedder.model, dimensions: embedder.dimensions });
    const indexer = new Indexer({ pages, index, config: { backend: 'sqlite-fts5', passage_min_words: 20, passage_max_words: 80 }, vectors: { index: vectors, embedder, batchSize: 2 } });
    await pages.saveFetched(fetched('http://v.test/a', html('Alpha', text('autovacuum'))));
    await pages.saveFetched(fetched('http://v.test/b', html('Beta', text('checkpoint'))));
    await pages.saveFetched(fetched('http://v.test/c', html('Gamma', text('replication'))));

    const progress: number[] = [];
    const first = await indexer.runOnce({ onProgress: (p) => progress.push(p.embedded) });
    expect(first.passages).toBeGreaterThanOrEqual(3);
    expect(first.embedded).toBe(first.passages);
    expect(progress.at(-1)).toBe(first.passages);
    expect(await vectors.missing(100)).toEqual([]);
    expect((await vectors.stats()).vectors).toBe(first.passages);

    // The stored vector is exactly the embedding of the text the search pipeline scores.
    const [hit] = await index.search('autovacuum', { limit: 1 });
    const stored = (await vectors.vectors([hit!.id])).get(hit!.id);
    const [fresh] = await embedder.embed([passageModelText(hit!)]);
    expect(dot(stored!, fresh!)).toBeCloseTo(1, 5);
    const [nearest] = await vectors.search(fresh!, { limit: 1 });
    expect(nearest?.id).toBe(hit!.id);

    // A changed page: its old passages' vectors go, its new passages get vectors.
    const beforeIds = new Set((await index.search('checkpoint', { limit: 10 })).map((h) => h.id));
    await pages.saveFetched(fetched('http://v.test/b', html('Beta', text('walsender'))));
    const second = await indexer.runOnce();
    expect(second.embedded).toBe(second.passages);
    expect([...(await vectors.vectors([...beforeIds])).keys()]).toEqual([]);
    const walIds = (await index.search('walsender', { limit: 10 })).map((h) => h.id);
    expect([...(await vectors.vectors(walIds)).keys()].sort()).toEqual([...walIds].sort());

    // A gone page: its vectors go too.
    const gammaIds = (await index.search('replication', { limit: 10 })).map((h) => h.id);
    await pages.markGone('http://v.test/c', 404);
    await indexer.runOnce();
    expect((await vectors.vectors(gammaIds)).size).toBe(0);
    const total = (await pages.counts()).passages;
    expect((await vectors.stats()).vectors).toBe(total);

    // Another model: every passage is missing for it and gets embedded on the next run; the old vectors are stale.
    const otherModel = { ...embedder, model: `${embedder.model}-other` };
    const other = new SqlVectorIndex(storage, { model: otherModel.model, dimensions: embedder.dimensions });
    expect((await other.missing(100)).length).toBe(total);
    const backfill = await new Indexer({ pages, index, config: { backend: 'sqlite-fts5', passage_min_words: 20, passage_max_words: 80 }, vectors: { index: other, embedder: otherModel } }).runOnce();
    expect(backfill).toMatchObject({ indexedPages: 0, embedded: total });
    expect(await other.stats()).toMatchObject({ vectors: total });
    await other.close();
    await vectors.close();
  });
});

describe('Indexer: collections reach the full-text index and the vectors', () => {
  it("a page's collections filter its passages and its vectors; joining another collection re-indexes it with both", async () => {
    const vectors = new SqlVectorIndex(storage, { model: embedder.model, dimensions: embedder.dimensions });
    const indexer = new Indexer({ pages, index, config: { backend: 'sqlite-fts5', passage_min_words: 20, passage_max_words: 80 }, vectors: { index: vectors, embedder, batchSize: 4 } });
    const collections = new CollectionStore(storage.db);
    const hr = await collections.ensure('hr-vectors');
    await pages.saveFetched(fetched('http://col.test/pay', html('Payroll', text('payroll'))));
    await pages.joinCollection('http://col.test/pay', hr.id);
    await indexer.runOnce();
    const [query] = await embedder.embed(['payroll']);
    const ids = (filter: { collections: string[] }) => index.search('payroll', { limit: 10, filter }).then((hits) => hits.map((h) => h.id).sort());
    const vectorIds = (filter: { collections: string[] }) => vectors.search(query!, { limit: 50, filter }).then((hits) => hits.filter((h) => h.score > -2).map((h) => h.id));
    const inHr = await ids({ collections: [hr.id] });
    expect(inHr.length).toBeGreaterThan(0);
    expect(await ids({ collections: [DEFAULT_COLLECTION_ID] })).toEqual([]);
    expect((await vectorIds({ collections: [hr.id] })).sort()).toEqual(inHr);
    expect((await vectorIds({ collections: [DEFAULT_COLLECTION_ID] })).filter((id) => inHr.includes(id))).toEqual([]);
    // Indexed; now crawled into the default collection too: due again, and found from both.
    await pages.joinCollection('http://col.test/pay', DEFAULT_COLLECTION_ID);
    await indexer.runOnce();
    const both = await ids({ collections: [DEFAULT_COLLECTION_ID] });
    expect(both.length).toBeGreaterThan(0);
    expect(await ids({ collections: [hr.id] })).toEqual(both);
    expect((await vectorIds({ collections: [DEFAULT_COLLECTION_ID] })).filter((id) => both.includes(id)).sort()).toEqual(both);
    await vectors.close();
  });
});
