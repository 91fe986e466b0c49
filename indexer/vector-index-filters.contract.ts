import { expect, it } from 'vitest';
import type { PassageVector, VectorHit, VectorIndex, VectorSearchOptions } from './vector-index.js';
import type { VectorIndexHarness } from './vector-index.contract.js';
import { seededRandom } from '../testkit/seeded-random.js';

const ms = (date: string): number => Date.parse(`${date}T00:00:00Z`);

/** Exact reference: every vector that `keep` lets through scored, best first (ties: lower id), the first `limit`. */
function reference(items: readonly PassageVector[], keep: (item: PassageVector) => boolean, query: Float32Array, limit: number): Array<[number, number]> {
  return items
    .filter(keep)
    .map((item) => ({ id: item.id, score: item.vector.reduce((sum, x, i) => sum + x * query[i]!, 0) }))
    .sort((a, b) => b.score - a.score || a.id - b.id)
    .slice(0, limit)
    .map((h) => [h.id, h.score]);
}

function expectHits(actual: VectorHit[], expected: Array<[number, number]>): void {
  expect(actual.map((h) => h.id)).toEqual(expected.map(([id]) => id));
  actual.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]![1], 5));
}

/**
 * The domain and date filters every VectorIndex backend applies inside its search (called from vectorIndexContract's
 * describe block). `fresh` returns a harness and an index over an empty database; `unit` a random unit vector.
 */
export function vectorFilterContract(
  fresh: () => Promise<{ harness: VectorIndexHarness; index: VectorIndex }>,
  unit: (random: () => number) => Float32Array,
): void {
  /** 40 pages of one passage: hosts a.test (10), b.a.test (10), c.test (10) and none; dates 2024-01..03 or none. */
  const corpus = async (harness: VectorIndexHarness, towards: Float32Array | null) => {
    const random = seededRandom(4242);
    const items: PassageVector[] = [];
    for (let p = 0; p < 40; p++) {
      const { page, passageIds } = await harness.addPage(1);
      const host = ['a.test', 'b.a.test', 'c.test', null][Math.floor(p / 10)];
      const month = p % 4;
      let vector = unit(random);
      // The a.test passages lean towards `towards`: they fill the unfiltered top.
      if (towards && host === 'a.test') {
        vector = vector.map((x, i) => 0.3 * x + towards[i]!);
        const norm = Math.hypot(...vector);
        vector = vector.map((x) => x / norm);
      }
      items.push({
        id: passageIds[0]!,
        pageId: page.id,
        vector,
        ...(host ? { url: `https://${host}/p${p}` } : {}),
        ...(month > 0 ? { publishedAt: `2024-0${month}-15` } : {}),
      });
    }
    return { items, random };
  };
  const hostOf = (item: PassageVector) => (item.url ? new URL(item.url).hostname : '');

  it('filters: domains and dates inside the vector search, with exact scores', async () => {
    const { harness, index } = await fresh();
    const { items, random } = await corpus(harness, null);
    await index.upsert(items);
    const cases: Array<[VectorSearchOptions['filter'], (item: PassageVector) => boolean]> = [
      [{ includeHosts: [{ host: 'a.test', subdomains: false }] }, (i) => hostOf(i) === 'a.test'],
      [{ includeHosts: [{ host: 'a.test', subdomains: true }] }, (i) => hostOf(i) === 'a.test' || hostOf(i) === 'b.a.test'],
      [{ excludeHosts: [{ host: 'a.test', subdomains: true }] }, (i) => hostOf(i) !== 'a.test' && hostOf(i) !== 'b.a.test'],
      [{ published: { from: ms('2024-02-01'), undated: 'keep' } }, (i) => !i.publishedAt || i.publishedAt >= '2024-02'],
      [{ published: { from: ms('2024-02-01'), to: ms('2024-03-01'), undated: 'exclude' } }, (i) => i.publishedAt?.startsWith('2024-02') === true],
      [
        { includeHosts: [{ host: 'c.test', subdomains: false }], published: { to: ms('2024-03-01'), undated: 'exclude' } },
        (i) => hostOf(i) === 'c.test' && i.publishedAt !== undefined && i.publishedAt < '2024-03',
      ],
    ];
    for (const [filter, keep] of cases) {
      const query = unit(random);
      expectHits(await index.search(query, { limit: 5, filter }), reference(items, keep, query, 5));
    }
    const query = unit(random);
    const first = items.slice(0, 20).map((i) => i.pageId);
    expectHits(
      await index.search(query, { limit: 40, pageIds: first, filter: { includeHosts: [{ host: 'b.a.test', subdomains: false }] } }),
      reference(items, (i) => hostOf(i) === 'b.a.test', query, 40),
    );
  });

  it('filters inside retrieval: the full count from the allowed domain when other hosts fill the unfiltered top', async () => {
    const { harness, index } = await fresh();
    const towards = new Float32Array(items0Dimensions(unit));
    towards[0] = 1;
    const { items } = await corpus(harness, towards);
    await index.upsert(items);
    const top = await index.search(towards, { limit: 10 });
    expect(top.every((h) => hostOf(items.find((i) => i.id === h.id)!) === 'a.test')).toBe(true);
    const filter = { includeHosts: [{ host: 'c.test', subdomains: false }] };
    const hits = await index.search(towards, { limit: 10, filter });
    expect(hits).toHaveLength(10);
    expectHits(hits, reference(items, (i) => hostOf(i) === 'c.test', towards, 10));
  });
}

/**
 * The collection filter every VectorIndex backend applies inside its search (called from vectorIndexContract's describe
 * block beside vectorFilterContract).
 */
export function vectorCollectionContract(
  fresh: () => Promise<{ harness: VectorIndexHarness; index: VectorIndex }>,
  unit: (random: () => number) => Float32Array,
): void {
  it('filters: collections inside the vector search (a vector stored without any is in the default one), with exact scores', async () => {
    const { harness, index } = await fresh();
    const random = seededRandom(3333);
    const towards = new Float32Array(items0Dimensions(unit));
    towards[0] = 1;
    const items: PassageVector[] = [];
    // 30 pages: 0-9 in col_hr (leaning towards the query: they fill the unfiltered top), 10-19 in col_eng, 20-24 in
    // both, 25-29 stored without collections (the default collection).
    for (let p = 0; p < 30; p++) {
      const { page, passageIds } = await harness.addPage(1);
      const collections = p < 10 ? ['col_hr'] : p < 20 ? ['col_eng'] : p < 25 ? ['col_hr', 'col_eng'] : undefined;
      let vector = unit(random);
      if (p < 10) {
        vector = vector.map((x, i) => 0.3 * x + towards[i]!);
        const norm = Math.hypot(...vector);
        vector = vector.map((x) => x / norm);
      }
      items.push({ id: passageIds[0]!, pageId: page.id, vector, url: `https://c${p % 3}.test/p${p}`, ...(collections ? { collections } : {}) });
    }
    await index.upsert(items);
    const of = (item: PassageVector) => item.collections ?? ['col_default'];
    const cases: Array<[VectorSearchOptions['filter'], (item: PassageVector) => boolean]> = [
      [{ collections: ['col_eng'] }, (i) => of(i).includes('col_eng')],
      [{ collections: ['col_default'] }, (i) => of(i).includes('col_default')],
      [{ collections: ['col_hr', 'col_default'] }, (i) => of(i).includes('col_hr') || of(i).includes('col_default')],
      [{ collections: ['col_eng'], includeHosts: [{ host: 'c1.test', subdomains: false }] }, (i) => of(i).includes('col_eng') && i.url!.includes('c1.test')],
      [{ collections: ['col_nowhere'] }, () => false],
    ];
    for (const [filter, keep] of cases) {
      expectHits(await index.search(towards, { limit: 8, filter }), reference(items, keep, towards, 8));
    }
    expect((await index.search(towards, { limit: 8 })).every((h) => items.find((i) => i.id === h.id)!.collections?.includes('col_hr'))).toBe(true);
    // A vector stored again with other collections is filtered by its new ones.
    const moved = { ...items[0]!, collections: ['col_eng'] };
    await index.upsert([moved]);
    const after = items.map((i) => (i.id === moved.id ? moved : i));
    expectHits(await index.search(towards, { limit: 8, filter: { collections: ['col_eng'] } }), reference(after, (i) => (i.collections ?? []).includes('col_eng'), towards, 8));
  });
}

function items0Dimensions(unit: (random: () => number) => Float32Array): number {
  return unit(seededRandom(1)).length;
}
