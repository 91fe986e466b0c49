import { expect, it } from 'vitest';
import type { IndexDoc, IndexFilter, PageDoc, SearchIndex } from './search-index.js';

const doc = (id: number, url: string, text: string, publishedAt?: string): IndexDoc => ({
  id,
  pageId: id,
  url,
  title: `Page ${id}`,
  headingPath: '',
  text,
  ...(publishedAt ? { publishedAt } : {}),
});

const ms = (date: string): number => Date.parse(`${date}T00:00:00Z`);

/**
 * The domain and date filters every SearchIndex backend applies inside retrieval (called from searchIndexContract's
 * describe block; `fresh` returns an empty index the suite closes).
 */
export function searchFilterContract(fresh: () => Promise<SearchIndex>): void {
  const hosts = [
    doc(1, 'https://example.com/a', 'replication slots', '2024-01-10'),
    doc(2, 'https://docs.example.com/b', 'replication lag', '2024-06-01T12:00:00Z'),
    doc(3, 'https://deep.docs.example.com/c', 'replication setup', '2025-02-03'),
    doc(4, 'https://other.test:8080/d', 'replication elsewhere'),
    doc(5, 'https://notexample.com/e', 'replication lookalike', '2023-12-31T23:30:00-02:00'),
  ];

  it('filters: include and exclude domains, a leading *. taking the domain and every host under it', async () => {
    const index = await fresh();
    await index.upsert(hosts);
    const ids = async (filter: IndexFilter) => (await index.search('replication', { limit: 10, filter })).map((h) => h.id).sort((a, b) => a - b);
    expect(await ids({ includeHosts: [{ host: 'example.com', subdomains: false }] })).toEqual([1]);
    expect(await ids({ includeHosts: [{ host: 'example.com', subdomains: true }] })).toEqual([1, 2, 3]);
    expect(await ids({ includeHosts: [{ host: 'docs.example.com', subdomains: true }, { host: 'other.test', subdomains: false }] })).toEqual([2, 3, 4]);
    expect(await ids({ excludeHosts: [{ host: 'example.com', subdomains: true }] })).toEqual([4, 5]);
    expect(await ids({ excludeHosts: [{ host: 'docs.example.com', subdomains: false }] })).toEqual([1, 3, 4, 5]);
    expect(await ids({ includeHosts: [{ host: 'example.com', subdomains: true }], excludeHosts: [{ host: 'docs.example.com', subdomains: false }] })).toEqual([1, 3]);
    expect(await ids({ includeHosts: [{ host: 'nowhere.test', subdomains: true }] })).toEqual([]);
  });

  it('returns the publication date of stored passages and hits (ISO 8601, UTC)', async () => {
    const index = await fresh();
    await index.upsert(hosts);
    const got = await index.get([1, 2, 4, 5]);
    expect(got.map((d) => d.publishedAt)).toEqual(['2024-01-10T00:00:00.000Z', '2024-06-01T12:00:00.000Z', undefined, '2024-01-01T01:30:00.000Z']);
    const [hit] = await index.search('lag', { limit: 1 });
    expect(hit).toMatchObject({ id: 2, publishedAt: '2024-06-01T12:00:00.000Z' });
  });

  it('filters: publication dates, undated pages kept unless excluded', async () => {
    const index = await fresh();
    await index.upsert(hosts);
    const ids = async (filter: IndexFilter) => (await index.search('replication', { limit: 10, filter })).map((h) => h.id).sort((a, b) => a - b);
    // 5 is 2024-01-01T01:30Z (its offset counts); the range ends are whole days, `to` exclusive.
    expect(await ids({ published: { from: ms('2024-01-01'), to: ms('2024-06-02'), undated: 'keep' } })).toEqual([1, 2, 4, 5]);
    expect(await ids({ published: { from: ms('2024-01-01'), to: ms('2024-06-02'), undated: 'exclude' } })).toEqual([1, 2, 5]);
    expect(await ids({ published: { from: ms('2024-06-02'), undated: 'exclude' } })).toEqual([3]);
    expect(await ids({ published: { to: ms('2024-01-10'), undated: 'exclude' } })).toEqual([5]);
    expect(await ids({ published: { undated: 'exclude' } })).toEqual([1, 2, 3, 5]);
    expect(await ids({ published: { from: ms('2024-01-01'), undated: 'keep' }, excludeHosts: [{ host: 'other.test', subdomains: false }] })).toEqual([1, 2, 3, 5]);
    // Replacing a passage replaces its facts; deleting it removes them.
    await index.upsert([doc(1, 'https://other.test/a', 'replication slots', '2020-01-01')]);
    expect(await ids({ includeHosts: [{ host: 'other.test', subdomains: false }], published: { to: ms('2021-01-01'), undated: 'exclude' } })).toEqual([1]);
    await index.delete([1]);
    expect(await ids({ includeHosts: [{ host: 'other.test', subdomains: false }] })).toEqual([4]);
  });

  it('filters inside retrieval: a filtered search returns its full count though better matches fill the unfiltered top', async () => {
    const index = await fresh();
    const strong = Array.from({ length: 30 }, (_, i) => ({ ...doc(100 + i, `https://big.test/${i}`, 'checkpoint checkpoint checkpoint tuning', '2020-05-05'), title: 'Checkpoint' }));
    const weak = Array.from({ length: 6 }, (_, i) => doc(200 + i, `https://small.test/${i}`, `checkpoint mentioned once among many other words here ${i}`, '2025-05-05'));
    await index.upsert([...strong, ...weak]);
    const top = await index.search('checkpoint', { limit: 5 });
    expect(top.every((h) => h.url.startsWith('https://big.test/'))).toBe(true);
    const small = await index.search('checkpoint', { limit: 5, filter: { includeHosts: [{ host: 'small.test', subdomains: false }] } });
    expect(small.length).toBe(5);
    expect(small.every((h) => h.url.startsWith('https://small.test/'))).toBe(true);
    const recent = await index.search('checkpoint', { limit: 4, perPageLimit: 1, filter: { published: { from: ms('2025-01-01'), undated: 'exclude' } } });
    expect(recent.map((h) => h.id).every((id) => id >= 200)).toBe(true);
    expect(recent.length).toBe(4);
    const notBig = await index.search('checkpoint', { limit: 6, filter: { excludeHosts: [{ host: 'big.test', subdomains: true }] } });
    expect(notBig.map((h) => h.id).sort((a, b) => a - b)).toEqual([200, 201, 202, 203, 204, 205]);
    const inPages = await index.search('checkpoint', { limit: 10, filter: { pageIds: [100, 101, 200], includeHosts: [{ host: 'small.test', subdomains: false }] } });
    expect(inPages.map((h) => h.id)).toEqual([200]);
  });

  it('filters: the page-level index takes the same domain and date filters', async () => {
    const index = await fresh();
    const page = (pageId: number, url: string, publishedAt?: string): PageDoc => ({
      pageId,
      url,
      title: `Vacuum ${pageId}`,
      headings: '',
      text: 'vacuum and analyze',
      ...(publishedAt ? { publishedAt } : {}),
    });
    await index.upsertPages([page(1, 'https://a.test/1', '2024-03-01'), page(2, 'https://b.a.test/2'), page(3, 'https://c.test/3', '2019-03-01')]);
    const pages = async (filter: IndexFilter) => (await index.searchPages('vacuum', { limit: 10, filter })).map((h) => h.pageId).sort((a, b) => a - b);
    expect(await pages({ includeHosts: [{ host: 'a.test', subdomains: true }] })).toEqual([1, 2]);
    const dated = await index.searchPages('vacuum', { limit: 10, filter: { includeHosts: [{ host: 'a.test', subdomains: false }] } });
    expect(dated[0]?.publishedAt).toBe('2024-03-01T00:00:00.000Z');
    expect(await pages({ excludeHosts: [{ host: 'a.test', subdomains: false }] })).toEqual([2, 3]);
    expect(await pages({ published: { from: ms('2020-01-01'), undated: 'keep' } })).toEqual([1, 2]);
    expect(await pages({ published: { from: ms('2020-01-01'), undated: 'exclude' } })).toEqual([1]);
    await index.deletePages([1]);
    expect(await pages({ published: { from: ms('2020-01-01'), undated: 'exclude' } })).toEqual([]);
  });

  it('filters: collections inside retrieval (a page in several is found from each; one stored without any is in the default)', async () => {
    const index = await fresh();
    const inCollections = (id: number, url: string, text: string, collections?: string[]): IndexDoc => ({ ...doc(id, url, text), ...(collections ? { collections } : {}) });
    await index.upsert([
      inCollections(1, 'https://hr.test/1', 'holiday policy', ['col_hr']),
      inCollections(2, 'https://eng.test/2', 'holiday rota', ['col_eng']),
      inCollections(3, 'https://hr.test/3', 'holiday calendar', ['col_hr', 'col_eng']),
      inCollections(4, 'https://www.test/4', 'holiday opening hours'),
      inCollections(5, 'https://www.test/5', 'holiday news', ['col_default', 'col_hr']),
    ]);
    const ids = async (filter: IndexFilter) => (await index.search('holiday', { limit: 10, filter })).map((h) => h.id).sort((a, b) => a - b);
    expect(await ids({})).toEqual([1, 2, 3, 4, 5]);
    expect(await ids({ collections: ['col_hr'] })).toEqual([1, 3, 5]);
    expect(await ids({ collections: ['col_eng'] })).toEqual([2, 3]);
    expect(await ids({ collections: ['col_default'] })).toEqual([4, 5]);
    expect(await ids({ collections: ['col_hr', 'col_eng'] })).toEqual([1, 2, 3, 5]);
    expect(await ids({ collections: ['col_unknown'] })).toEqual([]);
    expect(await ids({ collections: [] })).toEqual([]);
    expect(await ids({ collections: ['col_hr'], includeHosts: [{ host: 'hr.test', subdomains: false }] })).toEqual([1, 3]);
    expect(await ids({ collections: ['col_hr'], pageIds: [1, 2, 4, 5] })).toEqual([1, 5]);
    // Replacing a passage replaces its collections; deleting it removes them.
    await index.upsert([inCollections(1, 'https://hr.test/1', 'holiday policy', ['col_eng'])]);
    expect(await ids({ collections: ['col_hr'] })).toEqual([3, 5]);
    expect(await ids({ collections: ['col_eng'] })).toEqual([1, 2, 3]);
    await index.delete([3]);
    expect(await ids({ collections: ['col_eng'] })).toEqual([1, 2]);
  });

  it('filters: a collection gets its full count though other collections fill the unfiltered top; pages likewise', async () => {
    const index = await fresh();
    const strong = Array.from({ length: 30 }, (_, i) => ({ ...doc(300 + i, `https://big.test/${i}`, 'budget budget budget forecast'), title: 'Budget', collections: ['col_big'] }));
    const weak = Array.from({ length: 6 }, (_, i) => ({ ...doc(400 + i, `https://small.test/${i}`, `budget mentioned once among many other words here ${i}`), collections: ['col_small'] }));
    await index.upsert([...strong, ...weak]);
    expect((await index.search('budget', { limit: 5 })).every((h) => h.id < 400)).toBe(true);
    const small = await index.search('budget', { limit: 5, perPageLimit: 1, filter: { collections: ['col_small'] } });
    expect(small.length).toBe(5);
    expect(small.every((h) => h.id >= 400)).toBe(true);
    const page = (pageId: number, collections?: string[]): PageDoc => ({
      pageId,
      url: `https://p.test/${pageId}`,
      title: `Budget ${pageId}`,
      headings: '',
      text: 'budget and forecast',
      ...(collections ? { collections } : {}),
    });
    await index.upsertPages([page(1, ['col_hr']), page(2), page(3, ['col_hr', 'col_eng'])]);
    const pages = async (filter: IndexFilter) => (await index.searchPages('budget', { limit: 10, filter })).map((h) => h.pageId).sort((a, b) => a - b);
    expect(await pages({ collections: ['col_hr'] })).toEqual([1, 3]);
    expect(await pages({ collections: ['col_default'] })).toEqual([2]);
    expect(await pages({ collections: ['col_eng', 'col_default'] })).toEqual([2, 3]);
    await index.deletePages([3]);
    expect(await pages({ collections: ['col_hr'] })).toEqual([1]);
  });
}
