import { describe, expect, it } from 'vitest';
import type { ContentBlock, ExtractedDocument } from '../extract/types.js';
import { countWords } from '../extract/words.js';
import { cutPassages } from './passages.js';

const docOf = (blocks: ContentBlock[], title: string | null = 'Guide'): ExtractedDocument => ({
  title,
  byline: null,
  siteName: null,
  lang: null,
  publishedAt: null,
  description: null,
  canonicalUrl: null,
  blocks,
  text: blocks.map((b) => b.text).join('\n\n'),
  wordCount: 0,
});
const h = (level: number, text: string): ContentBlock => ({ type: 'heading', level, text });
const p = (text: string): ContentBlock => ({ type: 'paragraph', text });
/** A sentence of exactly n words. */
const sentence = (n: number, word = 'word') => `${Array.from({ length: n }, () => word).join(' ')}.`;
const opts = { minWords: 20, maxWords: 40 };

describe('cutPassages', () => {
  it('tracks heading paths without the page title and starts a passage at each heading', () => {
    const passages = cutPassages(
      docOf([h(1, 'Guide'), p(sentence(25)), h(2, 'Setup'), p(sentence(25)), h(3, 'Linux'), p(sentence(25)), h(2, 'Usage'), p(sentence(25))]),
      opts,
    );
    expect(passages.map((x) => x.headingPath)).toEqual(['', 'Setup', 'Setup > Linux', 'Usage']);
    expect(passages.map((x) => x.ordinal)).toEqual([0, 1, 2, 3]);
    expect(passages.every((x) => x.wordCount === 25)).toBe(true);
  });

  it('packs paragraphs up to maxWords and splits long paragraphs at sentence boundaries', () => {
    const passages = cutPassages(docOf([p(sentence(15)), p(sentence(15)), p(sentence(15)), p([sentence(30), sentence(30)].join(' '))]), opts);
    // 15+15 | 15 (short, but the next sentence would overflow and is not cut) | 30 | 30
    expect(passages.map((x) => x.wordCount)).toEqual([30, 15, 30, 30]);
    for (const x of passages) {
      expect(x.wordCount).toBeLessThanOrEqual(opts.maxWords);
      expect(x.wordCount).toBe(x.text.split(/\s+/).filter(Boolean).length);
    }
    const total = passages.reduce((n, x) => n + x.wordCount, 0);
    expect(total).toBe(15 * 3 + 60);
    // No sentence is cut: every passage ends at a sentence end.
    expect(passages.every((x) => x.text.endsWith('.'))).toBe(true);
  });

  it('cuts a single sentence longer than maxWords into even pieces', () => {
    const passages = cutPassages(docOf([p(sentence(100))]), opts);
    expect(passages.map((x) => x.wordCount)).toEqual([34, 34, 32]);
  });

  it('keeps a tiny intro with the following subsection instead of alone', () => {
    const passages = cutPassages(docOf([h(2, 'Setup'), p('Short intro.'), h(3, 'Linux'), p(sentence(25))]), opts);
    expect(passages).toHaveLength(1);
    expect(passages[0]).toMatchObject({ headingPath: 'Setup > Linux', wordCount: 27 });
  });

  it('merges a tiny trailing piece into its neighbour in the same section', () => {
    const passages = cutPassages(docOf([h(2, 'A'), p(sentence(38)), p('Tail end.')]), opts);
    expect(passages).toHaveLength(1);
    expect(passages[0]?.wordCount).toBe(40);
  });

  it('splits long code and tables by lines and is deterministic', () => {
    const code = Array.from({ length: 30 }, (_, i) => `SELECT ${i} FROM t;`).join('\n');
    const doc = docOf([h(2, 'Examples'), { type: 'code', text: code }]);
    const a = cutPassages(doc, opts);
    expect(a.length).toBeGreaterThan(1);
    expect(a.every((x) => x.wordCount <= 40 && x.headingPath === 'Examples')).toBe(true);
    expect(a.map((x) => x.text).join('\n')).toBe(code);
    expect(cutPassages(doc, opts)).toEqual(a);
  });

  it('cuts a long paragraph of Chinese, written without spaces, at its full stops into passages within maxWords', () => {
    // 30 sentences of about 12 segmenter words each: one paragraph of about 360 words with no space in it.
    const zh = Array.from({ length: 30 }, (_, i) => `第${i + 1}次会议讨论了城市交通和公共图书馆的建设计划。`).join('');
    const passages = cutPassages(docOf([p(zh)]), opts);
    expect(passages.length).toBeGreaterThan(5);
    for (const x of passages) {
      expect(x.wordCount).toBeLessThanOrEqual(opts.maxWords);
      expect(x.wordCount).toBe(countWords(x.text));
      expect(x.text).not.toMatch(/\s/);
      expect(x.text.endsWith('。')).toBe(true);
    }
    expect(passages.map((x) => x.text).join('')).toBe(zh);
  });

  it('cuts a long run of Japanese or Thai with no full stop by the segmenter\'s words, losing nothing', () => {
    const ja = '東京の図書館では子どもたちが新しい本を読んでいます'.repeat(12);
    const th = 'ห้องสมุดประชาชนเปิดให้บริการทุกวันสำหรับนักเรียนและครอบครัว'.repeat(10);
    for (const text of [ja, th]) {
      const passages = cutPassages(docOf([p(text)]), opts);
      expect(passages.length).toBeGreaterThan(2);
      for (const x of passages) expect(x.wordCount).toBeLessThanOrEqual(opts.maxWords);
      expect(passages.map((x) => x.text).join('')).toBe(text);
    }
  });

  it('keeps the space between sentences of spaced scripts when it splits them', () => {
    const text = [sentence(30, 'alpha'), sentence(30, 'beta')].join(' ');
    const passages = cutPassages(docOf([p(text)]), opts);
    expect(passages.map((x) => x.text).join(' ')).toBe(text);
  });

  it('returns nothing for a document without text', () => {
    expect(cutPassages(docOf([h(1, 'Only a heading')]), opts)).toEqual([]);
    expect(cutPassages(docOf([]), opts)).toEqual([]);
  });
});
