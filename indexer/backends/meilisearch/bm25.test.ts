import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../testkit/seeded-random.js';
import { stemmedText, stemWord } from '../analysis.js';
import { bm25Scores, occurrences, type Bm25Fields } from './bm25.js';

describe('occurrences', () => {
  it('counts whole tokens only, at either end and overlapping', () => {
    expect(occurrences('start art smart art', 'art')).toBe(2);
    expect(occurrences('art', 'art')).toBe(1);
    expect(occurrences('arts', 'art')).toBe(0);
    expect(occurrences('a a a', 'a a')).toBe(2);
    expect(occurrences('index scan index', 'index scan')).toBe(1);
    expect(occurrences('', 'art')).toBe(0);
    expect(occurrences('art', '')).toBe(0);
  });
});

describe('bm25Scores', () => {
  // Words whose stems are prefixes, suffixes and repeats of each other, so that a substring match that is not a token shows.
  const vocabulary = ['index', 'indexes', 'reindex', 'scan', 'scans', 'rescan', 'table', 'tables', 'vacuum', 'full', 'fuller', 'a', 'an', 'the', 'lc_numeric', 'page', 'pages', 'art', 'start'];

  function text(random: () => number, words: number): string {
    return Array.from({ length: words }, () => vocabulary[Math.floor(random() * vocabulary.length)]!).join(' ');
  }

  it('scores from the stored stems exactly as from the text analysed (bit for bit)', () => {
    const random = seededRandom(20261128);
    const raw: Bm25Fields[] = Array.from({ length: 300 }, (_, i) => ({
      title: text(random, 1 + Math.floor(random() * 5)),
      headingPath: i % 7 === 0 ? '' : text(random, Math.floor(random() * 8)),
      text: text(random, 20 + Math.floor(random() * 150)),
      navigation: i % 5 === 0,
      ...(i % 3 === 0 ? { translationKey: 'k' } : {}),
    }));
    const stored = raw.map((d) => ({ ...d, s_title: stemmedText(d.title ?? ''), s_headings: stemmedText(d.headingPath ?? ''), s_text: stemmedText(d.text ?? '') }));
    const stats = { documents: 5000, averageLength: 90, df: (s: string) => (s.length * 37) % 900 };
    const queries: Array<{ stems: string[]; phrases: string[][] }> = [
      { stems: ['index', 'scan'].map(stemWord), phrases: [] },
      { stems: ['index', 'index', 'tabl', 'art'], phrases: [['index', 'scan'].map(stemWord)] },
      { stems: ['vacuum', 'full'].map(stemWord), phrases: [['vacuum', 'full'].map(stemWord), ['a', 'a']] },
      { stems: ['start'], phrases: [['page', 'page'].map(stemWord)] },
    ];
    let nonZero = 0;
    for (const { stems, phrases } of queries) {
      const expected = bm25Scores(stems, raw, stats, phrases);
      const got = bm25Scores(stems, stored, stats, phrases);
      expect(got.length).toBe(expected.length);
      got.forEach((score, i) => expect(Object.is(score, expected[i])).toBe(true));
      nonZero += got.filter((s) => s > 0).length;
      // With a stored length, both read it.
      const withLen = (docs: Bm25Fields[]) => docs.map((d, i) => ({ ...d, len: 40 + (i % 50) }));
      expect(bm25Scores(stems, withLen(stored), stats, phrases)).toEqual(bm25Scores(stems, withLen(raw), stats, phrases));
    }
    expect(nonZero).toBeGreaterThan(300);
  });
});
