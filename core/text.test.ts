import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileAvailable, sharedDir } from '../testkit/components.js';
import { comparableText, contentWords, identifiers, queryTerms, stem, terms, words } from './text.js';

describe('text analysis', () => {
  it('splits words across case, Latin diacritics and compatibility forms, keeping other scripts whole', () => {
    expect(words('Naïve CAFÉ, 3.5 東京 ﬁle')).toEqual(['naive', 'cafe', '3', '5', '東京', 'file']);
    // Devanagari vowel signs are combining marks but part of the word.
    expect(words('हिन्दी भाषा')).toEqual(['हिन्दी', 'भाषा']);
  });

  it("stems with Porter's algorithm, as FTS5's porter tokenizer does", () => {
    expect(stem('indexes')).toBe(stem('index'));
    expect(stem('queries')).toBe(stem('query'));
    expect(stem('running')).toBe('run');
    expect(stem('vacuuming')).toBe('vacuum');
    expect(stem('utf8')).toBe('utf8');
    expect(terms('Configuring the parameters')).toEqual(['configur', 'the', 'paramet']);
  });

  it('drops stopwords unless nothing else is left', () => {
    expect(contentWords('how to vacuum a table')).toEqual(['vacuum', 'table']);
    expect(contentWords('to be or not to be')).toEqual(['to', 'be', 'or', 'not', 'to', 'be']);
    expect(queryTerms('the indexes and the index')).toEqual(['index']);
  });

  it('finds identifiers written with joiners', () => {
    expect(identifiers('set lc_numeric and os.path.join, not a.')).toEqual([
      ['lc', 'numeric'],
      ['os', 'path', 'join'],
    ]);
  });

  it('compares strings without case and punctuation', () => {
    expect(comparableText('  VACUUM — Garbage-collect ')).toBe('vacuum garbage collect');
  });
});

const cranfield = path.join(sharedDir, 'eval', 'retrieval', 'cranfield', 'cran.all.1400');

describe.runIf(fileAvailable('Cranfield collection', cranfield))('stems and first letters', () => {
  // Snippets skip stemming words whose first two letters begin no query term: that holds only while a stem of two or
  // more letters keeps its word's first two (and a shorter one its first).
  it("keeps every word's first two letters, over the Cranfield collection's words and Porter's edge cases", () => {
    const vocabulary = new Set([...words(readFileSync(cranfield, 'utf8')), 'yes', 'yield', 'ies', 'sses', 'eed', 'ying', 'yyy', 'élèves', 'über', 'ties', 'dies', 'say', 'agreed', 'hoping']);
    expect(vocabulary.size).toBeGreaterThan(5000);
    const changed = [...vocabulary].filter((word) => {
      const s = stem(word);
      return s.length >= 2 ? s.slice(0, 2) !== word.slice(0, 2) : s[0] !== word[0];
    });
    expect(changed).toEqual([]);
  });
});
