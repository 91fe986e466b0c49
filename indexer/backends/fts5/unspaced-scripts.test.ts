import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { IndexDoc } from '../../search-index.js';
import { Fts5SearchIndex } from './search-index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-fts5-unspaced-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

const docs: IndexDoc[] = [
  { id: 1, pageId: 1, url: 'http://zh.test/library', title: '城市公共图书馆', headingPath: '开放时间', text: '第一次会议讨论了城市交通和公共图书馆的建设计划。图书馆周末也开放。' },
  { id: 2, pageId: 2, url: 'http://zh.test/transit', title: '交通新闻', headingPath: '', text: '地铁新线路将在明年通车，市民出行更加方便。' },
  { id: 3, pageId: 3, url: 'http://ja.test/library', title: '東京の図書館', headingPath: '', text: '東京の図書館では子どもたちが新しい本を読んでいます。' },
  { id: 4, pageId: 4, url: 'http://th.test/library', title: 'ห้องสมุด', headingPath: '', text: 'ห้องสมุดประชาชนเปิดให้บริการทุกวันสำหรับนักเรียนและครอบครัว' },
  { id: 5, pageId: 5, url: 'http://en.test/library', title: 'Library hours', headingPath: '', text: 'The public library opens at nine on weekdays.' },
];

const settings = {
  'SQL ranking': { rankingCache: 0 },
  'ranking from memory': { memoryRankingUpTo: 1_000_000, waitForMemoryRanking: true, rankingCache: 0 },
} as const;

describe.each(Object.entries(settings))('FTS5 over scripts written without spaces (%s)', (_name, options) => {
  const open = async (): Promise<Fts5SearchIndex> => {
    const db = new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`));
    db.pragma('journal_mode = WAL');
    const index = new Fts5SearchIndex(db, { ownsHandle: true, ...options });
    await index.upsert(docs);
    await index.upsertPages(docs.map((d) => ({ pageId: d.pageId, url: d.url, title: d.title, headings: d.headingPath, text: d.text })));
    return index;
  };

  it('finds a word inside a clause of Chinese, Japanese or Thai text', async () => {
    const index = await open();
    try {
      const urls = async (query: string) => (await index.search(query, { limit: 10 })).map((h) => h.url);
      expect(await urls('图书馆')).toEqual(['http://zh.test/library']);
      expect(await urls('地铁')).toEqual(['http://zh.test/transit']);
      expect(await urls('図書館')).toEqual(['http://ja.test/library']);
      expect(await urls('ห้องสมุด')).toEqual(['http://th.test/library']);
      // A question written as one run: its words, not the whole run, are looked up.
      expect((await urls('公共图书馆什么时候开放'))[0]).toBe('http://zh.test/library');
      expect(await urls('library')).toEqual(['http://en.test/library']);
    } finally {
      await index.close();
    }
  });

  it('gives the text back exactly as it was stored, without the word breaks', async () => {
    const index = await open();
    try {
      const [hit] = await index.search('图书馆', { limit: 1 });
      const doc = docs[0]!;
      expect(hit).toMatchObject({ title: doc.title, headingPath: doc.headingPath, text: doc.text });
      expect((await index.get([3, 4])).map((d) => [d.title, d.text])).toEqual([docs[2], docs[3]].map((d) => [d!.title, d!.text]));
      expect((await index.searchPages('图书馆', { limit: 5 })).map((p) => [p.url, p.title])).toEqual([[doc.url, doc.title]]);
    } finally {
      await index.close();
    }
  });
});
