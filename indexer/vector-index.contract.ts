import { afterEach, describe, expect, it } from 'vitest';
import type { Page } from '../storage/schema.js';
import type { PassageVector, VectorHit, VectorIndex } from './vector-index.js';
import { seededRandom } from '../testkit/seeded-random.js';
import { dot } from '../reranker/pooling.js';
import { vectorCollectionContract, vectorFilterContract } from './vector-index-filters.contract.js';

/** One database for one test: pages and passages written through PageStore, and any number of index instances. */
export interface VectorIndexHarness {
  /**
   * A new index instance on the harness's database, on its own connection where the backend has connections (as
   * another process would open it). The harness closes it.
   */
  openIndex(options: { model: string; dimensions: number }): Promise<VectorIndex>;
  /** Stores a new page with `passages` passages (PageStore.saveFetched + replacePassages); ids in ordinal order. */
  addPage(passages: number): Promise<{ page: Page; passageIds: number[] }>;
  /** PageStore.replacePassages with `passages` new passages; the old ones are deleted. Returns the new ids. */
  replacePassages(page: Page, passages: number): Promise<number[]>;
  /** PageStore.removePassages; returns the ids removed. */
  removePassages(page: Page): Promise<number[]>;
  close(): Promise<void>;
}

const MODEL = 'test-embedder-v1';
const DIMENSIONS = 24;


/** A random unit vector (normal components, normalised). */
export function randomUnitVector(random: () => number, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    const g = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    v[i] = g;
    norm += g * g;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) v[i] = v[i]! / norm;
  return v;
}

/** The unit vector along axis `axis`, optionally tilted towards axis `towards` by `amount`. */
function axisVector(axis: number, towards = 0, amount = 0): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  v[axis] = 1;
  v[towards] = (v[towards] ?? 0) + amount;
  const norm = Math.hypot(...v);
  for (let i = 0; i < DIMENSIONS; i++) v[i] = v[i]! / norm;
  return v;
}

/** Straightforward reference: score every vector, sort everything, take greedily with the per-page cap. */
export function referenceSearch(items: readonly PassageVector[], query: Float32Array, limit: number, perPage = Infinity): VectorHit[] {
  const scored = items.map((item) => {
    let score = 0;
    for (let i = 0; i < query.length; i++) score += item.vector[i]! * query[i]!;
    return { id: item.id, pageId: item.pageId, score };
  });
  scored.sort((a, b) => b.score - a.score || a.id - b.id);
  const used = new Map<number, number>();
  const out: VectorHit[] = [];
  for (const hit of scored) {
    if (out.length >= limit) break;
    const n = used.get(hit.pageId) ?? 0;
    if (n >= perPage) continue;
    used.set(hit.pageId, n + 1);
    out.push(hit);
  }
  return out;
}

function expectSameHits(actual: VectorHit[], expected: VectorHit[]): void {
  expect(actual.map((h) => [h.id, h.pageId])).toEqual(expected.map((h) => [h.id, h.pageId]));
  actual.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!.score, 5));
}

/**
 * The behaviour every VectorIndex backend must show. `createHarness` returns a harness over a fresh, empty, migrated
 * database for each test; the suite closes it afterwards.
 */
export function vectorIndexContract(name: string, createHarness: () => Promise<VectorIndexHarness>): void {
  describe(`VectorIndex contract: ${name}`, () => {
    let harnesses: VectorIndexHarness[] = [];
    const fresh = async (): Promise<{ harness: VectorIndexHarness; index: VectorIndex }> => {
      const harness = await createHarness();
      harnesses.push(harness);
      return { harness, index: await harness.openIndex({ model: MODEL, dimensions: DIMENSIONS }) };
    };
    afterEach(async () => {
      for (const harness of harnesses) await harness.close();
      harnesses = [];
    });

    /** `pages` pages of `perPage` passages each, with a seeded random unit vector per passage. */
    const randomCorpus = async (harness: VectorIndexHarness, seed: number, pages: number, perPage: number) => {
      const random = seededRandom(seed);
      const items: PassageVector[] = [];
      for (let p = 0; p < pages; p++) {
        const { page, passageIds } = await harness.addPage(perPage);
        for (const id of passageIds) items.push({ id, pageId: page.id, vector: randomUnitVector(random, DIMENSIONS) });
      }
      return { items, random };
    };

    it('returns nothing from an empty index', async () => {
      const { index } = await fresh();
      expect(index.model).toBe(MODEL);
      expect(index.dimensions).toBe(DIMENSIONS);
      expect(await index.search(axisVector(0), { limit: 10 })).toEqual([]);
      expect(await index.vectors([1, 2, 3])).toEqual(new Map());
      expect(await index.missing(10)).toEqual([]);
      expect(await index.stats()).toMatchObject({ model: MODEL, dimensions: DIMENSIONS, vectors: 0, stale: 0 });
    });

    it('finds the exact nearest vectors with exact scores (500 random vectors, 20 queries)', async () => {
      const { harness, index } = await fresh();
      const { items, random } = await randomCorpus(harness, 20240611, 50, 10);
      // Upsert in a shuffled order, so the storage order says nothing about ids.
      const shuffled = [...items].sort(() => random() - 0.5);
      await index.upsert(shuffled.slice(0, 300));
      await index.upsert(shuffled.slice(300));
      for (let q = 0; q < 20; q++) {
        const query = randomUnitVector(random, DIMENSIONS);
        expectSameHits(await index.search(query, { limit: 10 }), referenceSearch(items, query, 10));
      }
      // A stored vector is its own nearest neighbour with score 1.
      const probe = items[123]!;
      const [top] = await index.search(probe.vector, { limit: 1 });
      expect(top).toMatchObject({ id: probe.id, pageId: probe.pageId });
      expect(top!.score).toBeCloseTo(1, 5);
      const stored = await index.vectors(items.slice(0, 40).map((i) => i.id));
      expect(stored.size).toBe(40);
      for (const item of items.slice(0, 40)) expect(Array.from(stored.get(item.id)!)).toEqual(Array.from(item.vector));
      expect(await index.stats()).toMatchObject({ vectors: 500, stale: 0 });
    });

    it('gives the dot products of its stored vectors where it computes similarities itself, before and after its first search', async () => {
      const { harness, index } = await fresh();
      if (!index.similarities) return;
      const { items, random } = await randomCorpus(harness, 20261128, 8, 5);
      await index.upsert(items);
      const query = randomUnitVector(random, DIMENSIONS);
      const ids = [...items.slice(0, 30).map((i) => i.id), 987_654_321];
      const expected = (stored: Map<number, Float32Array>) => new Map([...stored].map(([id, v]) => [id, dot(query, v)]));
      const check = async () => {
        const got = await index.similarities!(query, ids);
        const want = expected(await index.vectors(ids));
        expect([...got.keys()].sort((a, b) => a - b)).toEqual([...want.keys()].sort((a, b) => a - b));
        expect(got.size).toBe(30);
        for (const [id, s] of want) expect(got.get(id)).toBeCloseTo(s, 6);
      };
      await check();
      await index.search(query, { limit: 5 });
      await check();
    });

    it('replaces a vector that is upserted again', async () => {
      const { harness, index } = await fresh();
      const { page, passageIds } = await harness.addPage(3);
      const [a, b, c] = passageIds as [number, number, number];
      await index.upsert([
        { id: a, pageId: page.id, vector: axisVector(0) },
        { id: b, pageId: page.id, vector: axisVector(1) },
        { id: c, pageId: page.id, vector: axisVector(2) },
      ]);
      expect((await index.search(axisVector(0), { limit: 1 }))[0]?.id).toBe(a);
      await index.upsert([{ id: a, pageId: page.id, vector: axisVector(5) }]);
      const hits = await index.search(axisVector(5), { limit: 3 });
      expect(hits[0]).toMatchObject({ id: a });
      expect(hits[0]!.score).toBeCloseTo(1, 6);
      expect((await index.search(axisVector(0), { limit: 3 })).every((h) => h.score < 0.5)).toBe(true);
      expect(Array.from((await index.vectors([a])).get(a)!)).toEqual(Array.from(axisVector(5)));
      expect((await index.stats()).vectors).toBe(3);
    });

    it('deletes vectors', async () => {
      const { harness, index } = await fresh();
      const { items } = await randomCorpus(harness, 7, 4, 5);
      await index.upsert(items);
      expect((await index.search(items[0]!.vector, { limit: 1 }))[0]?.id).toBe(items[0]!.id);
      const gone = [items[0]!.id, items[7]!.id, items[19]!.id];
      await index.delete([...gone, 999_999]);
      const left = items.filter((i) => !gone.includes(i.id));
      const hits = await index.search(items[0]!.vector, { limit: 100 });
      expectSameHits(hits, referenceSearch(left, items[0]!.vector, 100));
      expect(hits).toHaveLength(17);
      expect([...(await index.vectors(gone)).keys()]).toEqual([]);
      expect((await index.stats()).vectors).toBe(17);
      expect(await index.missing(10)).toEqual([...gone].sort((x, y) => x - y));
      await index.delete([]);
      expect((await index.stats()).vectors).toBe(17);
    });

    it('caps passages per page and respects the limit', async () => {
      const { harness, index } = await fresh();
      const { items, random } = await randomCorpus(harness, 99, 30, 8);
      await index.upsert(items);
      for (let q = 0; q < 10; q++) {
        const query = randomUnitVector(random, DIMENSIONS);
        expectSameHits(await index.search(query, { limit: 10, perPageLimit: 2 }), referenceSearch(items, query, 10, 2));
        expectSameHits(await index.search(query, { limit: 7, perPageLimit: 1 }), referenceSearch(items, query, 7, 1));
      }
      const query = randomUnitVector(random, DIMENSIONS);
      expect(await index.search(query, { limit: 3 })).toHaveLength(3);
      expect(await index.search(query, { limit: 0 })).toEqual([]);
      expect(await index.search(query, { limit: -5 })).toEqual([]);
      expect(await index.search(query, { limit: 10_000 })).toHaveLength(items.length);
      // Restricted to some pages: every passage of those pages, best first, and nothing else.
      const some = [3, 7, 11];
      expectSameHits(
        await index.search(query, { limit: 1000, pageIds: some }),
        referenceSearch(items.filter((i) => some.includes(i.pageId)), query, 1000),
      );
      expectSameHits(
        await index.search(query, { limit: 2, perPageLimit: 1, pageIds: some }),
        referenceSearch(items.filter((i) => some.includes(i.pageId)), query, 2, 1),
      );
      // More slots than pages can fill under the cap: every page gives its quota and no more.
      const capped = await index.search(query, { limit: 1000, perPageLimit: 1 });
      expect(capped).toHaveLength(30);
      expect(new Set(capped.map((h) => h.pageId)).size).toBe(30);
    });

    it('finds other pages when one page holds all the best matches', async () => {
      const { harness, index } = await fresh();
      const big = await harness.addPage(120);
      const small = await Promise.all([harness.addPage(1), harness.addPage(1), harness.addPage(1)]);
      const items: PassageVector[] = big.passageIds.map((id, i) => ({ id, pageId: big.page.id, vector: axisVector(0, 1, i / 1000) }));
      small.forEach(({ page, passageIds }, i) => items.push({ id: passageIds[0]!, pageId: page.id, vector: axisVector(0, 1, 0.5 + i) }));
      await index.upsert(items);
      const hits = await index.search(axisVector(0), { limit: 4, perPageLimit: 1 });
      expectSameHits(hits, referenceSearch(items, axisVector(0), 4, 1));
      expect(hits.map((h) => h.pageId)).toEqual([big.page.id, ...small.map((s) => s.page.id)]);
    });

    it('breaks score ties by lower id', async () => {
      const { harness, index } = await fresh();
      const { page, passageIds } = await harness.addPage(6);
      const same = axisVector(3);
      await index.upsert([...passageIds].reverse().map((id) => ({ id, pageId: page.id, vector: same })));
      const sorted = [...passageIds].sort((a, b) => a - b);
      expect((await index.search(same, { limit: 6 })).map((h) => h.id)).toEqual(sorted);
      expect((await index.search(same, { limit: 2 })).map((h) => h.id)).toEqual(sorted.slice(0, 2));
      expect((await index.search(same, { limit: 2, perPageLimit: 1 })).map((h) => h.id)).toEqual(sorted.slice(0, 1));
    });

    it('rejects a wrong-length or non-finite vector and writes nothing', async () => {
      const { harness, index } = await fresh();
      const { page, passageIds } = await harness.addPage(3);
      const good = passageIds.map((id, i) => ({ id, pageId: page.id, vector: axisVector(i) }));
      const nan = axisVector(4);
      nan[2] = Number.NaN;
      const inf = axisVector(4);
      inf[0] = Number.POSITIVE_INFINITY;
      for (const bad of [new Float32Array(DIMENSIONS - 1), new Float32Array(DIMENSIONS + 1), nan, inf]) {
        await expect(index.upsert([...good, { id: passageIds[0]!, pageId: page.id, vector: bad }])).rejects.toMatchObject({
          code: 'invalid_request',
        });
      }
      expect((await index.stats()).vectors).toBe(0);
      expect(await index.search(axisVector(0), { limit: 5 })).toEqual([]);
      expect(await index.vectors(passageIds)).toEqual(new Map());
      await expect(index.search(new Float32Array(DIMENSIONS - 1), { limit: 5 })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(index.search(nan, { limit: 5 })).rejects.toMatchObject({ code: 'invalid_request' });
      // The index still works after the rejections.
      await index.upsert(good);
      expect((await index.search(axisVector(1), { limit: 1 }))[0]?.id).toBe(passageIds[1]);
    });

    it("ignores another model's vectors and counts them stale until replaced", async () => {
      const { harness, index } = await fresh();
      const other = await harness.openIndex({ model: 'other-embedder', dimensions: DIMENSIONS });
      const { page, passageIds } = await harness.addPage(4);
      const [a, b, c, d] = passageIds as [number, number, number, number];
      await index.upsert([{ id: a, pageId: page.id, vector: axisVector(0) }]);
      await other.upsert([
        { id: b, pageId: page.id, vector: axisVector(0) },
        { id: c, pageId: page.id, vector: axisVector(0) },
      ]);
      expect((await index.search(axisVector(0), { limit: 10 })).map((h) => h.id)).toEqual([a]);
      expect([...(await index.vectors([a, b, c])).keys()]).toEqual([a]);
      expect(await index.stats()).toMatchObject({ backend: index.name, vectors: 1, stale: 2 });
      expect(await index.missing(10)).toEqual([b, c, d]);
      expect((await other.search(axisVector(0), { limit: 10 })).map((h) => h.id)).toEqual([b, c]);
      await index.upsert([{ id: b, pageId: page.id, vector: axisVector(1) }]);
      expect(await index.stats()).toMatchObject({ vectors: 2, stale: 1 });
      expect((await other.search(axisVector(0), { limit: 10 })).map((h) => h.id)).toEqual([c]);
      // Same name, other dimensions: a different index too.
      const wider = await harness.openIndex({ model: MODEL, dimensions: DIMENSIONS * 2 });
      expect(await wider.stats()).toMatchObject({ vectors: 0, stale: 3 });
      expect(await wider.search(new Float32Array(DIMENSIONS * 2).fill(0.1), { limit: 5 })).toEqual([]);
    });

    it('lists passages without a vector, lowest first, shrinking as they are embedded', async () => {
      const { harness, index } = await fresh();
      const first = await harness.addPage(3);
      const second = await harness.addPage(4);
      const all = [...first.passageIds, ...second.passageIds].sort((x, y) => x - y);
      expect(await index.missing(100)).toEqual(all);
      expect(await index.missing(2)).toEqual(all.slice(0, 2));
      expect(await index.missing(0)).toEqual([]);
      const pageOf = (id: number) => (first.passageIds.includes(id) ? first.page.id : second.page.id);
      await index.upsert(all.slice(0, 3).map((id, i) => ({ id, pageId: pageOf(id), vector: axisVector(i) })));
      expect(await index.missing(100)).toEqual(all.slice(3));
      await index.upsert(all.slice(3).map((id, i) => ({ id, pageId: pageOf(id), vector: axisVector(i) })));
      expect(await index.missing(100)).toEqual([]);
    });

    it('drops vectors of passages deleted through PageStore from a loaded index', async () => {
      const { harness, index } = await fresh();
      const one = await harness.addPage(3);
      const two = await harness.addPage(3);
      const three = await harness.addPage(2);
      const items = [one, two, three].flatMap(({ page, passageIds }, p) =>
        passageIds.map((id, i) => ({ id, pageId: page.id, vector: axisVector(0, 1 + p, 0.1 * (i + 1)) })),
      );
      await index.upsert(items);
      expect(await index.search(axisVector(0), { limit: 100 })).toHaveLength(8); // cache loaded

      const replacement = await harness.replacePassages(one.page, 2); // cascade deletes one's three vectors
      let ids = (await index.search(axisVector(0), { limit: 100 })).map((h) => h.id);
      expect(ids).toHaveLength(5);
      for (const id of one.passageIds) expect(ids).not.toContain(id);
      expect(await index.missing(100)).toEqual(replacement);

      // A write by this instance after a cascade it has not seen yet must not hide the cascade.
      await index.upsert(replacement.map((id) => ({ id, pageId: one.page.id, vector: axisVector(0) })));
      const removed = await harness.removePassages(two.page);
      expect(removed.sort()).toEqual([...two.passageIds].sort());
      ids = (await index.search(axisVector(0), { limit: 100 })).map((h) => h.id);
      expect(ids.sort((x, y) => x - y)).toEqual([...replacement, ...three.passageIds].sort((x, y) => x - y));
      expect((await index.stats()).vectors).toBe(4);
    });

    it("sees another instance's writes on its next search", async () => {
      const { harness, index } = await fresh();
      const second = await harness.openIndex({ model: MODEL, dimensions: DIMENSIONS });
      const { items, random } = await randomCorpus(harness, 4242, 6, 5);
      await index.upsert(items.slice(0, 20));
      const query = randomUnitVector(random, DIMENSIONS);
      expectSameHits(await index.search(query, { limit: 5 }), referenceSearch(items.slice(0, 20), query, 5));

      // New rows.
      await second.upsert(items.slice(20));
      expectSameHits(await index.search(query, { limit: 30 }), referenceSearch(items, query, 30));

      // A replacement only (the count does not change).
      const moved = { ...items[25]!, vector: query };
      await second.upsert([moved]);
      let current = items.map((i) => (i.id === moved.id ? moved : i));
      const hits = await index.search(query, { limit: 30 });
      expectSameHits(hits, referenceSearch(current, query, 30));
      expect(hits[0]).toMatchObject({ id: moved.id });

      // A delete, then this instance writes before searching again.
      await second.delete([items[3]!.id, moved.id]);
      current = current.filter((i) => i.id !== items[3]!.id && i.id !== moved.id);
      const again = { ...items[4]!, vector: randomUnitVector(random, DIMENSIONS) };
      await index.upsert([again]);
      current = current.map((i) => (i.id === again.id ? again : i));
      expectSameHits(await index.search(query, { limit: 30 }), referenceSearch(current, query, 30));
      expectSameHits(await second.search(query, { limit: 30 }), referenceSearch(current, query, 30));
      expect((await index.stats()).vectors).toBe(28);

      // A replacement by the other instance, then a write here: the count matches again, the content must not.
      const near = { ...items[10]!, vector: query };
      await second.upsert([near]);
      const later = { ...items[11]!, vector: randomUnitVector(random, DIMENSIONS) };
      await index.upsert([later]);
      current = current.map((i) => (i.id === near.id ? near : i.id === later.id ? later : i));
      const latest = await index.search(query, { limit: 30 });
      expectSameHits(latest, referenceSearch(current, query, 30));
      expect(latest[0]).toMatchObject({ id: near.id });
    });

    vectorFilterContract(fresh, (random) => randomUnitVector(random, DIMENSIONS));
    vectorCollectionContract(fresh, (random) => randomUnitVector(random, DIMENSIONS));
  });
}
