import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../storage/db.js';
import { PageStore } from '../storage/pages.js';
import { SqlVectorIndex } from './sql-vector-index.js';
import { decodeVector, encodeVector } from './vector-encoding.js';
import { vectorHarness } from '../testkit/vector-harness.js';
import { randomUnitVector, vectorIndexContract } from './vector-index.contract.js';
import { dot } from '../reranker/pooling.js';
import { seededRandom } from '../testkit/seeded-random.js';
import { ClusteredCorpus, seedPassageRows } from '../testkit/synthetic-vectors.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-vectors-'));
let pgServer: TestPostgres | undefined;
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => {
  pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

let counter = 0;

/** Every index gets its own Storage (its own connection or pool), as a second process would. */
const harnessFor = (connect: () => Storage) => vectorHarness(connect, async (storage, options) => new SqlVectorIndex(storage, options));

vectorIndexContract('sql-exact on sqlite', async () => {
  const file = path.join(dir, `vectors-${counter++}.sqlite`);
  return harnessFor(() => openSqlite(file));
});

vectorIndexContract('sql-exact on postgres', async () => {
  const url = await createDatabase(pgServer!.url, `vectors_${Date.now()}_${counter++}`);
  return harnessFor(() => openPostgres(url));
});

/**
 * The same contract with the HNSW graph answering every search it can (from one vector on, waiting for builds). The
 * contract asks for exact answers: the graph is asked for as many candidates as the collection holds, which it
 * answers exactly after rescoring or, when it cannot reach them all, hands to the exact scan. Recall at the shipped
 * candidate counts is measured in ann-search.test.ts.
 */
const forcedAnn: SqlVectorIndex[] = [];
const annHarnessFor = (connect: () => Storage) =>
  vectorHarness(connect, async (storage, options) => {
    const index = new SqlVectorIndex(storage, { ...options, ann: { above: 1, waitForBuild: true, minCandidates: 10_000 } });
    forcedAnn.push(index);
    return index;
  });

vectorIndexContract('sql with the HNSW graph forced on, on sqlite', async () => {
  const file = path.join(dir, `vectors-ann-${counter++}.sqlite`);
  return annHarnessFor(() => openSqlite(file));
});

vectorIndexContract('sql with the HNSW graph forced on, on postgres', async () => {
  const url = await createDatabase(pgServer!.url, `vectors_ann_${Date.now()}_${counter++}`);
  return annHarnessFor(() => openPostgres(url));
});

describe('the forced-on HNSW contract runs', () => {
  it('answered searches from the graph, not only from the exact fallback', () => {
    const answered = forcedAnn.reduce((sum, index) => sum + (index.approximate?.answered ?? 0), 0);
    expect(forcedAnn.length).toBeGreaterThan(10);
    expect(answered).toBeGreaterThan(20);
  });
});

describe('vector encoding', () => {
  it('stores little-endian float32 bytes and reads them back exactly', () => {
    const v = new Float32Array([1, -0.5, 0.1, 3.4028234663852886e38]);
    const bytes = encodeVector(v);
    expect(bytes.length).toBe(16);
    expect(bytes.readFloatLE(4)).toBe(-0.5);
    expect(bytes.readFloatLE(8)).toBe(Math.fround(0.1));
    expect(Array.from(decodeVector(bytes, 4))).toEqual(Array.from(v));
    // A Buffer at an odd offset inside a larger allocation still decodes.
    const padded = Buffer.concat([Buffer.from([7]), bytes]).subarray(1);
    expect(Array.from(decodeVector(padded, 4))).toEqual(Array.from(v));
    expect(() => decodeVector(bytes, 5)).toThrow(/bytes/);
  });
});

/** A page on `host` with passages of these texts, in a migrated database. */
async function pageWithPassages(storage: Storage, host: string, texts: readonly string[]) {
  await migrateToLatest(storage);
  const store = new PageStore(storage.db);
  const url = `http://${host}/${counter++}`;
  const { id: pageId } = await store.saveFetched({
    url, final_url: url, host, http_status: 200, content_type: 'text/html', etag: null,
    last_modified: null, content_hash: 'h', title: 'T', html: '<p>x</p>', crawl_depth: 0,
  });
  const passages = await store.replacePassages((await store.getById(pageId))!, texts.map((text, ordinal) => (
    { ordinal, url, title: 'T', heading_path: '', text, word_count: text.split(' ').length })));
  return { pageId, passages };
}

describe.each([
  ['sqlite', async () => openSqlite(path.join(dir, `raw-${counter++}.sqlite`))],
  ['postgres', async () => openPostgres(await createDatabase(pgServer!.url, `vectors_raw_${Date.now()}_${counter++}`))],
] as const)('SqlVectorIndex on %s', (_name, open) => {
  it('keeps the vector column as Buffer bytes in the database', async () => {
    const storage = await open();
    await migrateToLatest(storage);
    await migrateToLatest(storage); // idempotent with the second migration too
    const store = new PageStore(storage.db);
    const url = `http://raw.test/${counter++}`;
    const { id: pageId } = await store.saveFetched({
      url, final_url: url, host: 'raw.test', http_status: 200, content_type: 'text/html', etag: null,
      last_modified: null, content_hash: 'h', title: 'T', html: '<p>x</p>', crawl_depth: 0,
    });
    const [passage] = await store.replacePassages((await store.getById(pageId))!, [
      { ordinal: 0, url, title: 'T', heading_path: '', text: 'x', word_count: 1 },
    ]);
    const index = new SqlVectorIndex(storage, { model: 'm', dimensions: 3 });
    const vector = new Float32Array([0.6, 0, -0.8]);
    await index.upsert([{ id: passage!.id, pageId, vector }]);
    const row = await storage.db.selectFrom('passage_vectors').selectAll().executeTakeFirstOrThrow();
    expect(Buffer.isBuffer(row.vector)).toBe(true);
    expect(row.vector.equals(Buffer.from(vector.buffer))).toBe(true);
    expect(row).toMatchObject({ passage_id: passage!.id, page_id: pageId, model: 'm', dimensions: 3 });
    // Foreign key: a vector for a passage that does not exist is refused.
    await expect(index.upsert([{ id: passage!.id + 1000, pageId, vector }])).rejects.toThrow();
    expect((await index.stats()).vectors).toBe(1);
    await index.close();
    await expect(index.search(vector, { limit: 1 })).rejects.toMatchObject({ code: 'internal_error' });
    await storage.close();
  });

  it('computes similarities bit for bit as the search pipeline computes the dot product of the stored vectors, from the table and from its cache', async () => {
    const storage = await open();
    const { pageId, passages } = await pageWithPassages(storage, 'sim.test', Array.from({ length: 12 }, (_, i) => `x ${i}`));
    const random = seededRandom(7);
    const unit = () => randomUnitVector(random, 384);
    const index = new SqlVectorIndex(storage, { model: 'm', dimensions: 384 });
    await index.upsert(passages.slice(0, 10).map((p) => ({ id: p.id, pageId, vector: unit() })));
    const ids = passages.map((p) => p.id); // the last two have no vector
    const query = unit();
    const expectSame = async () => {
      const got = await index.similarities(query, ids);
      const stored = await index.vectors(ids);
      expect(got.size).toBe(10);
      for (const [id, v] of stored) expect(Object.is(got.get(id), dot(query, v))).toBe(true);
    };
    await expectSame(); // no cache yet: from the table
    await index.search(query, { limit: 3 });
    await expectSame(); // from the cache's rows in place
    await index.close();
    await storage.close();
  });

  it('reloads fully when a row appears that bypassed the write generation', async () => {
    const storage = await open();
    const { pageId, passages: [a, b] } = await pageWithPassages(storage, 'raw.test', ['x', 'y']);
    const index = new SqlVectorIndex(storage, { model: 'm', dimensions: 2 });
    await index.upsert([{ id: a!.id, pageId, vector: new Float32Array([1, 0]) }]);
    expect((await index.search(new Float32Array([0, 1]), { limit: 5 })).map((h) => h.id)).toEqual([a!.id]);
    // E.g. restored from a backup: an old seq, so only the count tells.
    await storage.db
      .insertInto('passage_vectors')
      .values({ passage_id: b!.id, page_id: pageId, model: 'm', dimensions: 2, seq: 0, vector: encodeVector(new Float32Array([0, 1])) })
      .execute();
    const hits = await index.search(new Float32Array([0, 1]), { limit: 5 });
    expect(hits.map((h) => h.id)).toEqual([b!.id, a!.id]);
    expect(hits[0]!.score).toBe(1);
    await index.close();
    await storage.close();
  });

  it('checks that its cache is current without counting rows on SQLite, and still sees every kind of change', async () => {
    const storage = await open();
    await migrateToLatest(storage);
    const statements: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: (args) => {
        statements.push(JSON.stringify(args.node));
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const watched: Storage = { ...storage, db: storage.db.withPlugin(recorder) };
    const store = new PageStore(storage.db);
    const url = `http://raw.test/${counter++}`;
    const { id: pageId } = await store.saveFetched({
      url, final_url: url, host: 'raw.test', http_status: 200, content_type: 'text/html', etag: null,
      last_modified: null, content_hash: 'h', title: 'T', html: '<p>x</p>', crawl_depth: 0,
    });
    const page = (await store.getById(pageId))!;
    const [a, b] = await store.replacePassages(page, [
      { ordinal: 0, url, title: 'T', heading_path: '', text: 'x', word_count: 1 },
      { ordinal: 1, url, title: 'T', heading_path: '', text: 'y', word_count: 1 },
    ]);
    const index = new SqlVectorIndex(watched, { model: 'm', dimensions: 2 });
    const other = new SqlVectorIndex(storage, { model: 'm', dimensions: 2 });
    await index.upsert([{ id: a!.id, pageId, vector: new Float32Array([1, 0]) }]);
    await index.search(new Float32Array([1, 0]), { limit: 5 });
    statements.length = 0;
    await index.search(new Float32Array([1, 0]), { limit: 5 });
    expect(await index.vectors([a!.id])).toEqual(new Map([[a!.id, new Float32Array([1, 0])]]));
    const counted = statements.some((s) => /"count"/i.test(s));
    expect(counted).toBe(_name === 'postgres');
    // Written by another instance, then deleted by a cascade from passages: both seen by the next search.
    await other.upsert([{ id: b!.id, pageId, vector: new Float32Array([0, 1]) }]);
    expect((await index.search(new Float32Array([0, 1]), { limit: 5 })).map((h) => h.id)).toEqual([b!.id, a!.id]);
    await store.replacePassages(page, [{ ordinal: 0, url, title: 'T', heading_path: '', text: 'z', word_count: 1 }]);
    expect(await index.search(new Float32Array([0, 1]), { limit: 5 })).toEqual([]);
    await index.close();
    await other.close();
    await storage.close();
  });

  it('refuses bad construction options and bad search options', async () => {
    const storage = await open();
    await migrateToLatest(storage);
    expect(() => new SqlVectorIndex(storage, { model: '', dimensions: 3 })).toThrow(expect.objectContaining({ code: 'invalid_config' }));
    expect(() => new SqlVectorIndex(storage, { model: 'm', dimensions: 0 })).toThrow(expect.objectContaining({ code: 'invalid_config' }));
    const index = new SqlVectorIndex(storage, { model: 'm', dimensions: 2 });
    await expect(index.search(new Float32Array([1, 0]), { limit: Number.NaN })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(index.upsert([{ id: 1.5, pageId: 1, vector: new Float32Array([1, 0]) }])).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(index.delete([Number.NaN])).rejects.toMatchObject({ code: 'invalid_request' });
    await index.close();
    await storage.close();
  });
});

describe('SqlVectorIndex with a saved HNSW graph', () => {
  it('saves after a build, after enough changes and on close; the next instance loads it and applies what others wrote meanwhile', async () => {
    const file = path.join(dir, `saved-graph-${counter++}.sqlite`);
    const storage = openSqlite(file);
    await migrateToLatest(storage);
    seedPassageRows(storage.sqlite!, 600, 10);
    const d = 16;
    const corpus = new ClusteredCorpus({ dimensions: d, clusters: 20, spread: 1, querySpread: 0.6, seed: 5 });
    const vectorOf = (i: number) => {
      const v = new Float32Array(d);
      corpus.passage(i, v);
      return v;
    };
    /** Passages from..to-1 (ids from+1..), with the vectors of passages from+shift.. */
    const items = (from: number, to: number, shift = 0) =>
      Array.from({ length: to - from }, (_, i) => ({ id: from + i + 1, pageId: Math.floor((from + i) / 10) + 1, vector: vectorOf(from + i + shift) }));
    const ann = { above: 100, waitForBuild: true, directory: `${file}.hnsw` };

    const first = new SqlVectorIndex(storage, { model: 'm', dimensions: d, ann });
    await first.upsert(items(0, 500));
    expect(await first.search(vectorOf(3), { limit: 1 })).toMatchObject([{ id: 4 }]);
    await first.approximate!.settled();
    expect(first.approximate).toMatchObject({ builds: 1, restores: 0, saves: 1, restoreSkipped: 'no saved graph' });
    await first.upsert(items(0, 60, 1000)); // rewritten in place: past 5% of max(size, 1000), which saves again
    await first.approximate!.settled();
    expect(first.approximate!.saves).toBe(2);
    await first.upsert(items(60, 65, 1000)); // too few to save now: saved on close
    await first.close();
    expect(first.approximate!.saves).toBe(3);

    // Another process, while none serves: adds 100 passages and deletes 3.
    const writer = new SqlVectorIndex(storage, { model: 'm', dimensions: d });
    await writer.upsert(items(500, 600));
    await writer.delete([70, 71, 72]);
    await writer.close();

    const second = new SqlVectorIndex(storage, { model: 'm', dimensions: d, ann });
    expect(await second.search(vectorOf(1062), { limit: 1 })).toMatchObject([{ id: 63, score: expect.closeTo(1, 5) }]); // saved on close
    expect(second.approximate).toMatchObject({ builds: 0, restores: 1, answered: 1 });
    for (const id of [501, 550, 600]) expect((await second.search(vectorOf(id - 1), { limit: 1 }))[0]?.id).toBe(id);
    expect((await second.search(vectorOf(70), { limit: 3 })).map((h) => h.id)).not.toContain(71);
    expect(second.approximate!.answered).toBe(5);
    await second.close();
    await storage.close();
  });
});
