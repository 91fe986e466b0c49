import { describe, expect, it } from 'vitest';
import { foldCase, stem } from '../core/index.js';
import { makeSnippet, queryTerms } from './snippet.js';

// The implementation before the words were kept in arrays (issue 28): every snippet must come out the same.

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** WORD within printable ASCII, where the letters, numbers and marks are [a-z0-9] once lower-cased. */
function isAsciiWordCode(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
}
/** Two UTF-16 code units as one number (NaN, past a word's end, gives a pair no term has). */
function pairCode(first: number, second: number): number {
  return first * 65_536 + second;
}
/** Any character but printable ASCII (the text has its whitespace collapsed to spaces already). */
const NON_ASCII = /[^ -~]/;

/**
 * The window of about `maxChars` characters of `text` holding the most distinct query terms (ties: the earliest),
 * cut at word boundaries, with an ellipsis where text was cut.
 */
function referenceSnippet(text: string, query: string, maxChars: number): string {
  const clean = text.replace(/\s+/gu, ' ').trim();
  if (clean.length <= maxChars) return clean;
  const terms = queryTerms(query);
  // Porter rewrites endings only: a stem of two or more letters begins with its word's first two (checked over
  // Cranfield's and the PostgreSQL docs' words in core/text.test.ts). A word that begins no query term so cannot
  // match one and is not stemmed: most words of a passage are skipped by comparing two character codes.
  const heads = new Set<number>();
  const singles = new Set<number>();
  for (const term of terms) {
    if (term.length >= 2) heads.add(pairCode(term.charCodeAt(0), term.charCodeAt(1)));
    else singles.add(term.charCodeAt(0));
  }
  const mayMatch = (first: number, second: number): boolean => heads.has(pairCode(first, second)) || singles.has(first);
  const words: Array<{ start: number; end: number; hit: string | null }> = [];
  const addWord = (start: number, end: number, candidate: boolean, word: () => string) => {
    const key = candidate ? stem(word()) : null;
    words.push({ start, end, hit: key !== null && terms.has(key) ? key : null });
  };
  if (NON_ASCII.test(clean)) {
    for (const m of clean.matchAll(WORD)) {
      const folded = foldCase(m[0]);
      addWord(m.index, m.index + m[0].length, mayMatch(folded.charCodeAt(0), folded.charCodeAt(1)), () => folded);
    }
  } else {
    // ASCII text folds by lower-casing, which keeps every offset: fold it once, and find its words ([a-z0-9]+, as
    // WORD finds them there) by character code.
    const lower = clean.toLowerCase();
    for (let i = 0; i < lower.length; ) {
      if (!isAsciiWordCode(lower.charCodeAt(i))) {
        i++;
        continue;
      }
      const start = i;
      while (i < lower.length && isAsciiWordCode(lower.charCodeAt(i))) i++;
      const end = i;
      addWord(start, end, mayMatch(lower.charCodeAt(start), lower.charCodeAt(start + 1)), () => lower.slice(start, end));
    }
  }
  let bestStart = 0;
  let bestScore = -1;
  let right = 0;
  const counts = new Map<string, number>();
  for (let left = 0; left < words.length; left++) {
    const leftWord = words[left];
    if (!leftWord) break;
    while (right < words.length) {
      const next = words[right];
      if (!next || next.end - leftWord.start > maxChars) break;
      if (next.hit) counts.set(next.hit, (counts.get(next.hit) ?? 0) + 1);
      right++;
    }
    if (counts.size > bestScore) {
      bestScore = counts.size;
      bestStart = left;
    }
    if (leftWord.hit) {
      const n = (counts.get(leftWord.hit) ?? 1) - 1;
      if (n <= 0) counts.delete(leftWord.hit);
      else counts.set(leftWord.hit, n);
    }
  }
  // Begin at the first hit of the best window, backed up a few words so the snippet reads as a phrase.
  let firstHit = bestStart;
  let lastHit = bestStart;
  for (let i = bestStart; i < words.length; i++) {
    const w = words[i];
    const first = words[bestStart];
    if (!w || !first || w.end - first.start > maxChars) break;
    if (w.hit) {
      if (!words[firstHit]?.hit) firstHit = i;
      lastHit = i;
    }
  }
  let startWord = firstHit;
  const lastEnd = words[lastHit]?.end ?? 0;
  while (startWord > 0 && firstHit - startWord < 3 && lastEnd - (words[startWord - 1]?.start ?? 0) <= maxChars - 2) startWord--;
  const from = words[startWord]?.start ?? 0;
  let to = from;
  for (let i = startWord; i < words.length; i++) {
    const w = words[i];
    if (!w || w.end - from > maxChars - 2) break;
    to = w.end;
  }
  const body = clean.slice(from, to).trim();
  return `${from > 0 ? '…' : ''}${body}${to < clean.length ? '…' : ''}`;
}

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

const VOCABULARY = [
  'vacuum', 'VACUUM', 'vacuums', 'vacuuming', 'index', 'indexes', 'Indexing', 'table', 'tables', 'the', 'of', 'and', 'a', 'x', 'i',
  'wal', 'WAL-logging', 'checkpoint', 'checkpoints', '9.6', '2024', 'pg_stat_activity', 'élèves', "L'ÉCOLE", 'école', 'naïve',
  'データベース', '数据库', 'straße', 'über', 'ＷＡＬ', 'ﬁle', 'Über', 'İndex', 'Vacuum—Index', 'e\u0301cole', 'supercalifragilisticexpialidocious-and-then-some-more-characters', '—', '(', ')', ',', '.',
  '𝒜lpha', '😀', '𠀀字', 'a\u00a0b', '\u2028', '\u3000', '\ufeff', 'x\u0301', '\ud800', 'tab\tbed', '…',
];

describe('makeSnippet', () => {
  it('makes the snippets the implementation before it made, over random texts, queries and lengths', () => {
    const random = seeded(28);
    const pick = () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
    const space = () => [' ', ' ', ' ', '  ', '\n', '\t ', '', '\u00a0', ' \u2029 ', '\r\n', '\v\f'][Math.floor(random() * 11)]!;
    let cut = 0;
    for (const text of ['', '   ', ' \n\t ', '.,;', ' — ', 'x', '  vacuum  ']) {
      for (const maxChars of [0, 1, 5]) expect(makeSnippet(text, 'vacuum', maxChars)).toBe(referenceSnippet(text, 'vacuum', maxChars));
    }
    for (let n = 0; n < 8_000; n++) {
      const words = Array.from({ length: Math.floor(random() * 120) }, () => pick() + space());
      const text = (random() < 0.2 ? space() + ' ' : '') + words.join(' ');
      const query = Array.from({ length: 1 + Math.floor(random() * 4) }, pick).join(' ');
      const maxChars = [5, 12, 40, 120, 300][Math.floor(random() * 5)]!;
      const want = referenceSnippet(text, query, maxChars);
      expect(makeSnippet(text, query, maxChars), JSON.stringify({ text, query, maxChars })).toBe(want);
      if (want.includes('…')) cut++;
    }
    expect(cut).toBeGreaterThan(4_000);
    // queryTerms is still the reference's.
    expect([...queryTerms('Vacuuming the indexes')]).toEqual(['vacuum', 'index']);
  });
});
