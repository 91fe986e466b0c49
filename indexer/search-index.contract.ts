import { afterEach, describe, expect, it } from 'vitest';
import type { IndexDoc, SearchIndex } from './search-index.js';
import { searchFilterContract } from './search-index-filters.contract.js';

const doc = (id: number, pageId: number, fields: Partial<IndexDoc> = {}): IndexDoc => ({
  id,
  pageId,
  url: `http://docs.test/page-${pageId}`,
  title: `Page ${pageId}`,
  headingPath: '',
  text: 'placeholder text',
  ...fields,
});

const HOSTILE_QUERIES = [
  '"',
  '""',
  '*',
  'index*',
  'title:index',
  ':',
  '(',
  ')',
  'NEAR(',
  'NEAR(index heap, 3)',
  'a AND OR',
  'AND',
  'OR NOT',
  '-x',
  '-',
  '^index',
  '+index',
  "'; DROP TABLE passages; --",
  '{title headings}: index',
  'índex çafé naïve',
  '日本語の検索',
  '🙂🙂 emoji',
  '\u0000\u0001 control',
  'index '.repeat(1000).slice(0, 5000),
  'x'.repeat(5000),
  '',
  '   ',
];

/**
 * The behaviour every SearchIndex backend must show. `factory` returns a fresh, empty index for each test; the
 * suite closes it afterwards.
 */
export function searchIndexContract(name: string, factory: () => Promise<SearchIndex>): void {
  describe(`SearchIndex contract: ${name}`, () => {
    let open: SearchIndex[] = [];
    const fresh = async (): Promise<SearchIndex> => {
      const index = await factory();
      open.push(index);
      return index;
    };
    afterEach(async () => {
      for (const index of open) await index.close();
      open = [];
    });

    it('finds an upserted passage and returns its stored fields', async () => {
      const index = await fresh();
      const stored = doc(11, 3, {
        title: 'Routine Vacuuming',
        headingPath: 'Vacuum Basics > Recovering Disk Space',
        text: 'The autovacuum daemon reclaims storage occupied by dead tuples.',
      });
      await index.upsert([stored, doc(12, 4, { text: 'Something unrelated about replication slots.' })]);
      const hits = await index.search('autovacuum daemon', { limit: 10 });
      expect(hits).toHaveLength(1);
      const { score, ...fields } = hits[0]!;
      expect(fields).toEqual(stored);
      expect(typeof score).toBe('number');
      expect(Number.isFinite(score)).toBe(true);
    });

    it('ranks a title match above a body-only match, scores descending', async () => {
      const index = await fresh();
      await index.upsert([
        doc(1, 1, { title: 'Notes', text: 'Among many other topics this page briefly mentions tablespaces once.' }),
        doc(2, 2, { title: 'Tablespaces', text: 'Among many other topics this page describes where files are kept.' }),
      ]);
      const hits = await index.search('tablespaces', { limit: 10 });
      expect(hits.map((h) => h.id)).toEqual([2, 1]);
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    });

    it('scores every hit positive and finite, more of the query words higher (what the pipeline relies on)', async () => {
      const index = await fresh();
      await index.upsert([
        doc(81, 1, { text: 'The planner estimates join selectivity from column statistics.' }),
        doc(82, 2, { text: 'Column statistics are gathered by analyze.' }),
        doc(83, 3, { text: 'The planner chooses among join strategies.' }),
        doc(84, 4, { text: 'Unrelated words about replication slots.' }),
      ]);
      const hits = await index.search('planner join selectivity statistics', { limit: 10 });
      expect(hits.map((h) => h.id)[0]).toBe(81);
      expect(hits.map((h) => h.id)).not.toContain(84);
      for (const hit of hits) {
        expect(Number.isFinite(hit.score)).toBe(true);
        expect(hit.score).toBeGreaterThan(0);
      }
      expect(hits[0]!.score).toBeGreaterThan(hits[hits.length - 1]!.score);
    });

    it('matches heading text', async () => {
      const index = await fresh();
      await index.upsert([doc(5, 1, { headingPath: 'Configuration > Checkpoints', text: 'Settings described below.' })]);
      expect((await index.search('checkpoints', { limit: 5 })).map((h) => h.id)).toEqual([5]);
    });

    it('uses OR semantics so a long question still matches', async () => {
      const index = await fresh();
      await index.upsert([doc(7, 1, { text: 'Partial indexes cover only a subset of rows.' })]);
      const hits = await index.search('how do I build an index over just some of the rows of a big table?', { limit: 5 });
      expect(hits.map((h) => h.id)).toEqual([7]);
    });

    it('replaces a document upserted again under the same id', async () => {
      const index = await fresh();
      await index.upsert([doc(21, 1, { text: 'The old wording talks about sequences.' })]);
      await index.upsert([doc(21, 1, { text: 'The new wording talks about collations.' })]);
      expect(await index.search('sequences', { limit: 5 })).toEqual([]);
      const hits = await index.search('collations', { limit: 5 });
      expect(hits.map((h) => [h.id, h.text])).toEqual([[21, 'The new wording talks about collations.']]);
      expect((await index.stats()).documents).toBe(1);
    });

    it('gets stored documents by id in the order asked, skipping unknown ids', async () => {
      const index = await fresh();
      const a = doc(41, 7, { title: 'Sequences', headingPath: 'Functions > nextval', text: 'nextval advances a sequence.' });
      const b = doc(42, 8, { text: 'setval sets it.' });
      await index.upsert([a, b]);
      expect(await index.get([42, 999_999, 41, 42])).toEqual([b, a]);
      expect(await index.get([])).toEqual([]);
      await index.delete([41]);
      expect(await index.get([41])).toEqual([]);
    });

    it('deletes documents by id and ignores unknown ids', async () => {
      const index = await fresh();
      await index.upsert([doc(31, 1, { text: 'trigger functions' }), doc(32, 1, { text: 'trigger events' })]);
      await index.delete([31, 999_999]);
      expect((await index.search('trigger', { limit: 5 })).map((h) => h.id)).toEqual([32]);
      await index.delete([]);
      expect((await index.stats()).documents).toBe(1);
    });

    it('honours limit and perPageLimit', async () => {
      const index = await fresh();
      const docs: IndexDoc[] = [];
      for (let i = 0; i < 5; i++) docs.push(doc(100 + i, 1, { text: `locking ${'locking '.repeat(i)}on page one` }));
      for (let i = 0; i < 3; i++) docs.push(doc(200 + i, 2, { text: `locking note ${i} on page two` }));
      await index.upsert(docs);
      expect(await index.search('locking', { limit: 3 })).toHaveLength(3);
      const all = await index.search('locking', { limit: 50 });
      expect(all).toHaveLength(8);
      const limited = await index.search('locking', { limit: 50, perPageLimit: 2 });
      expect(limited).toHaveLength(4);
      const perPage = new Map<number, number>();
      for (const h of limited) perPage.set(h.pageId, (perPage.get(h.pageId) ?? 0) + 1);
      expect([...perPage.values()]).toEqual([2, 2]);
      // The passages kept for a page are its best ones.
      const bestOfPageOne = all.filter((h) => h.pageId === 1).slice(0, 2).map((h) => h.id);
      expect(limited.filter((h) => h.pageId === 1).map((h) => h.id)).toEqual(bestOfPageOne);
      const scores = limited.map((h) => h.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    });

    it('finds the other pages below a page whose passages all outrank them (perPageLimit with a small limit)', async () => {
      const index = await fresh();
      const docs: IndexDoc[] = [];
      // 300 passages of page 1 each outscore every passage of pages 2..4: a backend that ranks a fixed window of
      // matches before applying the per-page cap would return page 1 alone.
      for (let i = 0; i < 300; i++) docs.push(doc(1000 + i, 1, { title: 'vacuum vacuum', text: `vacuum freeze vacuum ${i}` }));
      for (let p = 2; p <= 4; p++) docs.push(doc(2000 + p, p, { text: `a long passage that mentions vacuum once among many other words number ${p}` }));
      await index.upsert(docs);
      const hits = await index.search('vacuum', { limit: 3, perPageLimit: 1 });
      expect(new Set(hits.map((h) => h.pageId)).size).toBe(3);
      expect(hits[0]?.pageId).toBe(1);
      expect(hits.slice(1).every((h) => h.pageId >= 2 && h.pageId <= 4)).toBe(true);
      expect(hits.every((h) => h.text.length > 0 && h.url.startsWith('http://docs.test/page-'))).toBe(true);
    });

    it('never throws on hostile queries and returns arrays', async () => {
      const index = await fresh();
      await index.upsert([doc(41, 1, { title: 'Index Types', text: 'index heap NEAR AND OR NOT café naïve 日本語の検索' })]);
      for (const query of HOSTILE_QUERIES) {
        const hits = await index.search(query, { limit: 5 });
        expect(Array.isArray(hits), JSON.stringify(query.slice(0, 40))).toBe(true);
      }
      expect(await index.search('', { limit: 5 })).toEqual([]);
      expect(await index.search('"*:()', { limit: 5 })).toEqual([]);
      expect((await index.search('NEAR(index', { limit: 5 })).map((h) => h.id)).toEqual([41]);
      expect((await index.search('cafe', { limit: 5 })).map((h) => h.id)).toEqual([41]);
      expect((await index.search('x'.repeat(5000), { limit: 5 })).length).toBe(0);
    });

    it('stems English words (indexes finds index)', async () => {
      const index = await fresh();
      await index.upsert([doc(51, 1, { text: 'Create an index on the column.' }), doc(52, 2, { text: 'Unrelated words.' })]);
      expect((await index.search('indexes', { limit: 5 })).map((h) => h.id)).toEqual([51]);
      expect((await index.search('indexing', { limit: 5 })).map((h) => h.id)).toEqual([51]);
    });

    it('counts documents in stats', async () => {
      const index = await fresh();
      expect((await index.stats()).documents).toBe(0);
      await index.upsert([doc(61, 1), doc(62, 1), doc(63, 2)]);
      const stats = await index.stats();
      expect(stats.documents).toBe(3);
      expect(stats.backend).toBe(index.name);
      expect(stats.bytes === null || stats.bytes > 0).toBe(true);
    });

    it('filters by language (unknown passes), navigation, translation group and page, and returns the facts', async () => {
      const index = await fresh();
      await index.upsert([
        doc(71, 1, { text: 'vacuum reclaims storage', language: 'en', translationKey: 'g1' }),
        doc(72, 2, { text: 'vacuum récupère le stockage', language: 'fr', translationKey: 'g1' }),
        doc(73, 3, { text: 'vacuum pages listing', navigation: true }),
        doc(74, 4, { text: 'vacuum without a known language' }),
        doc(75, 5, { text: 'vacuum in british english', language: 'en-gb' }),
      ]);
      const ids = async (filter: Parameters<SearchIndex['search']>[1]['filter']) =>
        (await index.search('vacuum', { limit: 10, ...(filter ? { filter } : {}) })).map((h) => h.id).sort((a, b) => a - b);
      expect(await ids(undefined)).toEqual([71, 72, 73, 74, 75]);
      expect(await ids({ languages: ['en'] })).toEqual([71, 73, 74, 75]);
      expect(await ids({ languages: ['fr'], excludeNavigation: true })).toEqual([72, 74]);
      expect(await ids({ translationKey: 'g1' })).toEqual([71, 72]);
      expect(await ids({ pageIds: [2, 3] })).toEqual([72, 73]);
      expect(await ids({ pageIds: [] })).toEqual([]);
      const [hit] = await index.search('vacuum', { limit: 1, filter: { pageIds: [1] } });
      expect(hit).toMatchObject({ id: 71, language: 'en', translationKey: 'g1' });
      expect(hit?.navigation).toBeUndefined();
      expect((await index.get([73]))[0]?.navigation).toBe(true);
    });

    it('page-level index: whole pages, title above body, filters, replace and delete', async () => {
      const index = await fresh();
      const page = (pageId: number, fields: Partial<Parameters<SearchIndex['upsertPages']>[0][number]> = {}) => ({
        pageId,
        url: `http://docs.test/p${pageId}.html`,
        title: `Page ${pageId}`,
        headings: '',
        text: 'placeholder text',
        ...fields,
      });
      await index.upsertPages([
        page(1, { title: 'Routine vacuuming', language: 'en' }),
        page(2, { text: 'Run vacuum now and then.', language: 'fr' }),
        page(3, { text: 'vacuum listing', navigation: true }),
        page(4, { text: 'Nothing relevant.' }),
      ]);
      const hits = await index.searchPages('vacuum', { limit: 10 });
      expect(hits.map((h) => h.pageId).sort()).toEqual([1, 2, 3]);
      expect(hits[0]?.pageId).toBe(1);
      expect(hits.slice(1).every((h) => h.pageId >= 2 && h.pageId <= 4)).toBe(true);
      for (const h of hits) expect(h.score > 0 && Number.isFinite(h.score)).toBe(true);
      expect(hits[0]).toMatchObject({ url: 'http://docs.test/p1.html', title: 'Routine vacuuming', language: 'en' });
      expect((await index.searchPages('vacuum', { limit: 10, filter: { languages: ['en'], excludeNavigation: true } })).map((h) => h.pageId)).toEqual([1]);
      expect((await index.searchPages('vacuum', { limit: 1 })).length).toBe(1);
      await index.upsertPages([page(2, { text: 'Nothing here any more.' })]);
      await index.deletePages([1, 999]);
      expect((await index.searchPages('vacuum', { limit: 10 })).map((h) => h.pageId)).toEqual([3]);
      expect(await index.searchPages('"*', { limit: 10 })).toEqual([]);
    });
  
    searchFilterContract(fresh);
  });
}
