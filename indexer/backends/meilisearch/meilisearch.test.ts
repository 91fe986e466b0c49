import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../../storage/db.js';
import { meilisearchAvailable, startMeilisearch, type TestMeilisearch } from '../../../testkit/meilisearch.js';
import { vectorHarness } from '../../../testkit/vector-harness.js';
import { searchIndexContract } from '../../search-index.contract.js';
import { vectorIndexContract } from '../../vector-index.contract.js';
import { startEngineProbe, stopEngineProbe } from '../engine-probe.js';
import { Fts5SearchIndex } from '../fts5/search-index.js';
import { MeilisearchConnection } from './connection.js';
import { MeilisearchSearchIndex } from './search-index.js';
import { WordFrequencies } from './query-words.js';
import { passageIndexSettings } from './settings.js';
import { MeilisearchVectorIndex } from './vector-index.js';

const run = meilisearchAvailable();
let server: TestMeilisearch | undefined;
const dir = mkdtempSync(path.join(tmpdir(), 'notary-meili-test-'));
beforeAll(async () => {
  if (run) server = await startMeilisearch();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let counter = 0;
const connect = (index = `passages_${process.pid}_${counter++}`, apiKey?: string) =>
  new MeilisearchConnection({ url: server!.url, apiKey: apiKey ?? server!.masterKey, index, taskTimeoutMs: 30_000, requestTimeoutMs: 10_000, batchSize: 500 });

describe.runIf(run)('Meilisearch backend', () => {
  searchIndexContract('meilisearch', async () => MeilisearchSearchIndex.open(connect()));

  vectorIndexContract('meilisearch', async () => {
    const uid = `vectors_${process.pid}_${counter++}`;
    const file = path.join(dir, `${uid}.sqlite`);
    return vectorHarness(() => openSqlite(file), async (storage, options) => MeilisearchVectorIndex.open(connect(uid), storage, options));
  });

  it('applies its settings once: a second start queues no task', async () => {
    const connection = connect();
    await connection.ensureIndex();
    const before = await connection.client.tasks.getTasks({ limit: 1 });
    await connection.ensureIndex();
    const after = await connection.client.tasks.getTasks({ limit: 1 });
    expect(after.results[0]?.uid).toBe(before.results[0]?.uid);
    const settings = await connection.client.index(connection.options.index).getSettings();
    expect(settings.searchableAttributes).toEqual(passageIndexSettings().searchableAttributes);
    expect(settings.stopWords).toContain('the');
  });

  it('matches a stem whole, as FTS5 does: a typo of a word finds nothing (no typo tolerance)', async () => {
    const index = await MeilisearchSearchIndex.open(connect());
    await index.upsert([{ id: 1, pageId: 1, url: 'http://a.test/1', title: 'Routine vacuuming', headingPath: '', text: 'vacuum reclaims storage occupied by dead tuples' }]);
    expect((await index.search('vacuum storage', { limit: 5 })).map((h) => h.id)).toEqual([1]);
    expect(await index.search('vacuun storagr', { limit: 5 })).toEqual([]);
  });

  it('opens on processes starting together: both may create the index, neither fails', async () => {
    const uid = `together_${process.pid}_${counter++}`;
    const opened = await Promise.all([0, 1, 2].map(() => MeilisearchSearchIndex.open(connect(uid))));
    expect(opened).toHaveLength(3);
    await opened[0]!.upsertPages([{ pageId: 1, url: 'http://a.test/1', title: 'Vacuum', headings: '', text: 'reclaims storage' }]);
    expect((await opened[1]!.searchPages('vacuum', { limit: 5 })).map((h) => h.pageId)).toEqual([1]);
  });

  it('gives API nodes a search-only key: searches work, writes are refused', async () => {
    const admin = connect();
    const index = await MeilisearchSearchIndex.open(admin);
    await index.upsert([{ id: 1, pageId: 1, url: 'http://a.test/1', title: 'Vacuum', headingPath: '', text: 'vacuum reclaims storage' }]);
    const { key } = await admin.searchKey();
    expect((await admin.searchKey()).key).toBe(key);
    const reader = connect(admin.options.index, key);
    expect(await reader.ensureIndex()).toBe(false);
    const readOnly = new MeilisearchSearchIndex(reader);
    expect((await readOnly.search('vacuum', { limit: 5 })).map((h) => h.id)).toEqual([1]);
    await index.upsertPages([{ pageId: 1, url: 'http://a.test/1', title: 'Vacuum', headings: '', text: 'vacuum reclaims storage' }]);
    expect((await readOnly.searchPages('vacuum', { limit: 5 })).map((h) => h.pageId)).toEqual([1]);
    expect(await readOnly.get([1])).toHaveLength(1);
    await expect(readOnly.upsert([{ id: 2, pageId: 1, url: 'http://a.test/2', title: 'x', headingPath: '', text: 'y' }])).rejects.toMatchObject({ code: 'index_unavailable' });
    await expect(readOnly.delete([1])).rejects.toMatchObject({ code: 'index_unavailable' });
  });

  it('rebuilds into a staging index and swaps it in whole; searches meanwhile see the old index', async () => {
    const connection = connect();
    const index = await MeilisearchSearchIndex.open(connection);
    await index.upsert([{ id: 1, pageId: 1, url: 'http://a.test/1', title: 'Old', headingPath: '', text: 'checkpoint tuning' }]);
    let seenDuringRebuild: number[] = [];
    async function* batches() {
      yield [{ id: 10, pageId: 2, url: 'http://a.test/10', title: 'New', headingPath: '', text: 'checkpoint spreading' }];
      seenDuringRebuild = (await index.search('checkpoint', { limit: 5 })).map((h) => h.id);
      yield [{ id: 11, pageId: 3, url: 'http://a.test/11', title: 'New', headingPath: '', text: 'checkpoint segments' }];
    }
    expect(await index.rebuild(batches())).toBe(2);
    expect(seenDuringRebuild).toEqual([1]);
    expect((await index.search('checkpoint', { limit: 5 })).map((h) => h.id).sort()).toEqual([10, 11]);
    expect((await index.stats()).documents).toBe(2);
  });

  it('rebuilds the page-level index beside the passages and swaps both in one task', async () => {
    const connection = connect(`rebuild_pages_${Date.now()}`);
    const index = await MeilisearchSearchIndex.open(connection);
    const page = (pageId: number, title: string, text: string) => ({ pageId, url: `http://a.test/p${pageId}`, title, headings: 'Tuning', text, language: 'en' });
    await index.upsert([{ id: 1, pageId: 1, url: 'http://a.test/p1', title: 'Old', headingPath: '', text: 'checkpoint tuning' }]);
    await index.upsertPages([page(1, 'Old', 'checkpoint tuning')]);
    let pagesDuringRebuild: number[] = [];
    async function* passages() {
      yield [{ id: 10, pageId: 2, url: 'http://a.test/p2', title: 'New', headingPath: '', text: 'checkpoint spreading' }];
    }
    async function* pages() {
      yield [page(2, 'New', 'checkpoint spreading')];
      pagesDuringRebuild = (await index.searchPages('checkpoint', { limit: 5 })).map((h) => h.pageId);
      yield [page(3, 'Newer', 'checkpoint segments'), { ...page(4, 'Nouveau', 'checkpoint réglage'), language: 'fr' }];
    }
    await index.rebuild(passages(), undefined, pages());
    expect(pagesDuringRebuild).toEqual([1]);
    expect((await index.searchPages('checkpoint', { limit: 5 })).map((h) => h.pageId).sort()).toEqual([2, 3, 4]);
    expect((await index.searchPages('checkpoint', { limit: 5, filter: { languages: ['fr'] } })).map((h) => h.pageId)).toEqual([4]);
    const uids = (await connection.client.getIndexes({ limit: 1000 })).results.map((i) => i.uid);
    expect(uids.filter((uid) => uid.endsWith('__rebuild'))).toEqual([]);
  });

  it('records each request of a search and the engine own time when the engine probe is on (bench rows)', async () => {
    const index = await MeilisearchSearchIndex.open(connect());
    await index.upsert([{ id: 1, pageId: 1, url: 'http://a.test/1', title: 'Vacuum', headingPath: '', text: 'vacuum reclaims storage' }]);
    const probe = startEngineProbe();
    try {
      await index.search('vacuum storage', { limit: 5 });
    } finally {
      stopEngineProbe();
    }
    const searches = probe.calls.filter((c) => c.engineMs !== null);
    expect(searches.length).toBeGreaterThan(0);
    for (const c of probe.calls) expect(c.roundTripMs).toBeGreaterThanOrEqual(c.engineMs ?? 0);
    expect(probe.since(0)).toMatchObject({ calls: probe.calls.length });
    const recorded = probe.calls.length;
    await index.search('vacuum', { limit: 5 });
    expect(probe.calls.length).toBe(recorded); // off again: nothing more recorded
  });

  it('one request under the frequency strategy once the words are counted; counted again when the all-words query finds nothing (a word that has left the index)', async () => {
    const uid = `words_${process.pid}_${counter++}`;
    const reader = await MeilisearchSearchIndex.open(connect(uid));
    const writer = await MeilisearchSearchIndex.open(connect(uid));
    await writer.upsert([
      { id: 1, pageId: 1, url: 'http://a.test/1', title: 'Vacuum', headingPath: '', text: 'vacuum reclaims space' },
      { id: 2, pageId: 2, url: 'http://a.test/2', title: 'Disks', headingPath: '', text: 'storage on disks' },
    ]);
    expect((await reader.search('vacuum storage', { limit: 5 })).map((h) => h.id).sort()).toEqual([1, 2]);
    // Another process deletes the only passage with "vacuum": the reader's count of it is stale.
    await writer.delete([1]);
    const probe = startEngineProbe();
    try {
      expect((await reader.search('vacuum storage', { limit: 5 })).map((h) => h.id)).toEqual([2]);
    } finally {
      stopEngineProbe();
    }
    // Counted again, then searched again: the second search holds "storage" alone.
    expect(probe.calls.map((c) => c.what)).toEqual(['search', 'counting query words', 'search']);
    const probe2 = startEngineProbe();
    try {
      expect((await reader.search('storage disks', { limit: 5 })).map((h) => h.id)).toEqual([2]);
    } finally {
      stopEngineProbe();
    }
    // A word not counted yet ("disks") is counted beside the search (both requests in flight at once), then remembered.
    expect(probe2.calls.map((c) => c.what).sort()).toEqual(['counting query words', 'search']);
    const [first, second] = [...probe2.calls].sort((a, b) => a.startedAt - b.startedAt);
    expect(second!.startedAt).toBeLessThan(first!.startedAt + first!.roundTripMs);
    const probe3 = startEngineProbe();
    try {
      expect((await reader.search('disks storage', { limit: 5 })).map((h) => h.id)).toEqual([2]);
    } finally {
      stopEngineProbe();
    }
    expect(probe3.calls.map((c) => c.what)).toEqual(['search']);
    expect((await reader.search('storage nosuchword', { limit: 5 })).map((h) => h.id)).toEqual([2]);
    expect((await reader.search('vacuum', { limit: 5 })).map((h) => h.id)).toEqual([]);
  });

  it('keeps the rarest stems for the all-words query (Meilisearch reads 10 words), in their query order', async () => {
    const connection = connect();
    const index = await MeilisearchSearchIndex.open(connection);
    // "tupl" in 4 passages, "vacuum" in 3, "heap" in 2, "freez" in 1.
    await index.upsert(
      ['tuple vacuum heap freeze', 'tuple vacuum heap', 'tuple vacuum', 'tuple'].map((text, i) => ({ id: i + 1, pageId: i + 1, url: `http://a.test/${i}`, title: 'T', headingPath: '', text })),
    );
    const words = new WordFrequencies();
    const uid = connection.options.index;
    await words.count(connection.client, uid, ['tupl', 'vacuum', 'heap', 'freez'], (fn) => fn());
    expect(words.rarest(uid, ['tupl', 'vacuum', 'heap', 'freez', 'uncount'], 3)).toEqual(['heap', 'freez', 'uncount']);
    expect(words.rarest(uid, ['tupl', 'vacuum'], 3)).toEqual(['tupl', 'vacuum']);
  });

  it('ranks a passage holding only the rarer of two words above one holding only the frequent word (OR weighted by rarity)', async () => {
    const index = await MeilisearchSearchIndex.open(connect());
    // "tuple" is in five passages, "freeze" in one; neither passage 1 nor 2 holds both. Query order puts the frequent word first.
    await index.upsert([
      { id: 1, pageId: 1, url: 'http://a.test/1', title: 'Notes', headingPath: '', text: 'tuple headers and tuple visibility' },
      { id: 2, pageId: 2, url: 'http://a.test/2', title: 'Notes', headingPath: '', text: 'freeze old transaction ids' },
      ...[3, 4, 5, 6].map((id) => ({ id, pageId: id, url: `http://a.test/${id}`, title: 'Other', headingPath: '', text: `tuple number ${id}` })),
      { id: 7, pageId: 7, url: 'http://a.test/7', title: 'Tuple freeze', headingPath: '', text: 'both words' },
    ]);
    const hits = await index.search('tuple freeze', { limit: 10 });
    expect(hits[0]?.id).toBe(7);
    expect(hits[1]?.id).toBe(2);
    expect(hits.map((h) => h.id).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('scores its candidates with FTS5\'s BM25: the same order and score ratios as the SQLite backend on the same passages', async () => {
    const docs = [
      { id: 1, pageId: 1, url: 'http://a.test/1', title: 'Routine vacuuming', headingPath: 'Maintenance > Vacuum', text: 'vacuum reclaims storage occupied by dead tuples; run vacuum often' },
      { id: 2, pageId: 2, url: 'http://a.test/2', title: 'Notes', headingPath: '', text: 'a long passage about storage of tuples in heap pages, page layout, fill factor and toast storage of wide tuples' },
      { id: 3, pageId: 3, url: 'http://a.test/3', title: 'Storage', headingPath: 'Storage > Heap', text: 'heap storage' },
      { id: 4, pageId: 4, url: 'http://a.test/4', title: 'Freezing', headingPath: 'Vacuum', text: 'freeze old transaction ids to prevent wraparound, vacuum freezes tuples', navigation: true },
      { id: 5, pageId: 5, url: 'http://a.test/5', title: 'Indexes', headingPath: '', text: 'btree indexes store tuples in sorted order' },
      ...[6, 7, 8, 9].map((id) => ({ id, pageId: id, url: `http://a.test/${id}`, title: 'Other', headingPath: '', text: `unrelated text number ${id} about replication` })),
      { id: 10, pageId: 10, url: 'http://a.test/10', title: 'Locale', headingPath: '', text: 'set lc_numeric for the formatting of numbers' },
      { id: 11, pageId: 11, url: 'http://a.test/11', title: 'Locale', headingPath: '', text: 'lc collation, and numeric types with numeric precision' },
    ];
    const meili = await MeilisearchSearchIndex.open(connect());
    await meili.upsert(docs);
    const fts = new Fts5SearchIndex(new BetterSqlite3(path.join(dir, `fts-${counter++}.sqlite`)), { ownsHandle: true });
    await fts.upsert(docs);
    try {
      const queries = [
        'vacuum storage tuples',
        'heap storage',
        'freeze vacuum replication',
        'lc_numeric formatting',
        // More than Meilisearch's 10 query words: FTS5 scores every word (up to 32), the last ones too.
        'vacuum storage heap freeze replication numbers formatting collation precision transaction btree sorted order',
        // Two words of one stem are two terms of FTS5's OR query: the stem weighs twice.
        'indexes index tuples',
      ];
      for (const query of queries) {
        // Every match (the candidates are then the same): this compares the scores, not the candidates.
        const expected = await fts.search(query, { limit: 20 });
        const got = await meili.search(query, { limit: 20 });
        expect(got.map((h) => h.id), query).toEqual(expected.map((h) => h.id));
        const ratios = (hits: readonly { score: number }[]) => hits.map((h) => h.score / hits[0]!.score);
        ratios(got).forEach((r, i) => expect(r, `${query} #${i}`).toBeCloseTo(ratios(expected)[i]!, 6));
      }
    } finally {
      await fts.close();
    }
  });

  it('computes the dot products with stored vectors in the engine (one small request) and equals reading the vectors', async () => {
    const uid = `similar_${process.pid}_${counter++}`;
    const file = path.join(dir, `${uid}.sqlite`);
    const harness = await vectorHarness(() => openSqlite(file), async (storage, options) => MeilisearchVectorIndex.open(connect(uid), storage, options));
    try {
      const index = await harness.openIndex({ model: 'm', dimensions: 4 });
      const { page, passageIds } = await harness.addPage(4);
      const [a, b, c, noVector] = passageIds as [number, number, number, number];
      const vectors = new Map([
        [a, Float32Array.from([2, 0, 0, 0])],
        [b, Float32Array.from([0.6, 0.8, 0, 0])],
        [c, Float32Array.from([-1, 1, 1, 0.5])],
      ]);
      await index.upsert([...vectors].map(([id, vector]) => ({ id, pageId: page.id, vector })));
      const query = Float32Array.from([1.5, -0.5, 0.25, 1]);
      const probe = startEngineProbe();
      let similarities: Map<number, number>;
      try {
        similarities = await (index as MeilisearchVectorIndex).similarities(query, [a, b, c, noVector]);
      } finally {
        stopEngineProbe();
      }
      expect(probe.calls.map((x) => x.what)).toEqual(['vector similarities', 'reading vectors']); // the passage without a vector is looked for
      expect([...similarities.keys()].sort((x, y) => x - y)).toEqual([a, b, c].sort((x, y) => x - y));
      const read = await index.vectors([a, b, c]);
      for (const id of [a, b, c]) {
        const expected = read.get(id)!.reduce((sum, x, i) => sum + x * query[i]!, 0);
        expect(similarities.get(id)).toBeCloseTo(expected, 5);
      }
    } finally {
      await harness.close();
    }
  });

  it('takes the dot products a vector search of the same query vector has just computed: only the others go to the engine', async () => {
    const uid = `similar_recent_${process.pid}_${counter++}`;
    const file = path.join(dir, `${uid}.sqlite`);
    const harness = await vectorHarness(() => openSqlite(file), async (storage, options) => MeilisearchVectorIndex.open(connect(uid), storage, options));
    try {
      const index = (await harness.openIndex({ model: 'm', dimensions: 4 })) as MeilisearchVectorIndex;
      const { page, passageIds } = await harness.addPage(3);
      const [a, b, c] = passageIds as [number, number, number];
      await index.upsert([
        { id: a, pageId: page.id, vector: Float32Array.from([2, 0, 0, 0]) },
        { id: b, pageId: page.id, vector: Float32Array.from([0.6, 0.8, 0, 0]) },
        { id: c, pageId: page.id, vector: Float32Array.from([-1, 1, 1, 0.5]) },
      ]);
      const query = Float32Array.from([1.5, -0.5, 0.25, 1]);
      const fromEngine = await index.similarities(query, [a, b, c]);
      const hits = await index.search(query, { limit: 2 });
      expect(hits.map((h) => h.id)).toEqual([a, b]);
      const probe = startEngineProbe();
      try {
        // The search asked for more than 2 (firstK): c's dot product is known too.
        const known = await index.similarities(query, [a, b, c]);
        expect(probe.calls).toEqual([]);
        for (const id of [a, b, c]) expect(known.get(id)).toBe(fromEngine.get(id));
        // Another vector (equal values in another array are the same vector): asked.
        expect((await index.similarities(Float32Array.from(query), [c])).get(c)).toBe(fromEngine.get(c));
        expect(probe.calls).toEqual([]);
        const other = Float32Array.from([0, 1, 0, 0]);
        expect((await index.similarities(other, [b])).get(b)).toBeCloseTo(0.8, 5);
        expect(probe.calls.map((x) => x.what)).toEqual(['vector similarities']);
        // A vector written since: asked again.
        await index.upsert([{ id: a, pageId: page.id, vector: Float32Array.from([0, 0, 0, 1]) }]);
        const from = probe.calls.length;
        expect((await index.similarities(query, [a])).get(a)).toBeCloseTo(1, 5);
        expect(fromEngine.get(a)).toBeCloseTo(3, 5);
        expect(probe.calls.slice(from).map((x) => x.what)).toEqual(['vector similarities']);
      } finally {
        stopEngineProbe();
      }
    } finally {
      await harness.close();
    }
  });

  it('keeps each vector norm beside it and scores vector hits from the engine similarity, exactly for any length', async () => {
    const uid = `norms_${process.pid}_${counter++}`;
    const file = path.join(dir, `${uid}.sqlite`);
    const harness = await vectorHarness(() => openSqlite(file), async (storage, options) => MeilisearchVectorIndex.open(connect(uid), storage, options));
    try {
      const index = await harness.openIndex({ model: 'm', dimensions: 4 });
      const { page, passageIds } = await harness.addPage(2);
      const [a, b] = passageIds as [number, number];
      await index.upsert([
        { id: a, pageId: page.id, vector: Float32Array.from([2, 0, 0, 0]) },
        { id: b, pageId: page.id, vector: Float32Array.from([0.6, 0.8, 0, 0]) },
      ]);
      const connection = connect(uid);
      const stored = await connection.client.index(uid).getDocument(a, { fields: ['vector_norm'] });
      expect(stored['vector_norm']).toBeCloseTo(2, 6);
      const query = Float32Array.from([1.5, 0, 0, 0]);
      const expectScores = async () => {
        const hits = await index.search(query, { limit: 2 });
        expect(hits.map((h) => h.id)).toEqual([a, b]);
        expect(hits[0]!.score).toBeCloseTo(3, 5);
        expect(hits[1]!.score).toBeCloseTo(0.9, 5);
      };
      await expectScores();
      // A vector written before norms were kept is read back and scored from itself.
      await connection.wait(connection.client.index(uid).updateDocuments([{ id: a, vector_norm: null }]), 'clearing a norm');
      await expectScores();
    } finally {
      await harness.close();
    }
  });

  it('takes the passages a vector search has just returned whole: get() of them sends no request; a write forgets them', async () => {
    const uid = `recent_${process.pid}_${counter++}`;
    const file = path.join(dir, `${uid}.sqlite`);
    let connection: MeilisearchConnection | undefined;
    const harness = await vectorHarness(() => openSqlite(file), async (storage, options) => MeilisearchVectorIndex.open((connection = connect(uid)), storage, options));
    try {
      const vectors = await harness.openIndex({ model: 'm', dimensions: 4 });
      const text = await MeilisearchSearchIndex.open(connection!);
      const { page, passageIds } = await harness.addPage(1);
      const id = passageIds[0]!;
      await text.upsert([{ id, pageId: page.id, url: 'http://a.test/1', title: 'Vacuum', headingPath: '', text: 'vacuum reclaims storage' }]);
      await vectors.upsert([{ id, pageId: page.id, vector: Float32Array.from([1, 0, 0, 0]) }]);
      expect((await vectors.search(Float32Array.from([1, 0, 0, 0]), { limit: 1 })).map((h) => h.id)).toEqual([id]);
      const probe = startEngineProbe();
      try {
        expect((await text.get([id])).map((d) => d.text)).toEqual(['vacuum reclaims storage']);
        expect(probe.calls).toEqual([]);
        await text.upsert([{ id, pageId: page.id, url: 'http://a.test/1', title: 'Vacuum', headingPath: '', text: 'vacuum rewritten' }]);
        const writes = probe.calls.length;
        expect((await text.get([id])).map((d) => d.text)).toEqual(['vacuum rewritten']);
        expect(probe.calls.length).toBe(writes + 1);
      } finally {
        stopEngineProbe();
      }
    } finally {
      await harness.close();
    }
  });

  it('fails with index_unavailable when the server is unreachable', async () => {
    const gone = new MeilisearchConnection({ url: 'http://127.0.0.1:9', index: 'x', taskTimeoutMs: 1000, requestTimeoutMs: 1000, batchSize: 10 });
    await expect(new MeilisearchSearchIndex(gone).search('vacuum', { limit: 5 })).rejects.toMatchObject({ code: 'index_unavailable' });
    expect(await gone.healthy()).toBe(false);
  });
});
