import { describe, expect, it } from 'vitest';
import { makeSnippet, queryTerms } from './snippet.js';

describe('makeSnippet', () => {
  const filler = 'lorem ipsum dolor sit amet '.repeat(40);
  const text = `${filler}The VACUUM command reclaims storage occupied by dead tuples. ${filler}`;

  it('returns short text whole', () => {
    expect(makeSnippet('  a  short\ntext ', 'x', 100)).toBe('a short text');
  });

  it('centres on the query terms and respects the length', () => {
    const s = makeSnippet(text, 'vacuum dead tuples', 120);
    expect(s).toContain('VACUUM command reclaims storage occupied by dead tuples');
    expect(s.length).toBeLessThanOrEqual(122);
    expect(s.startsWith('…')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
  });

  it('starts at the beginning when no term matches', () => {
    const s = makeSnippet(text, 'zzz', 60);
    expect(s.startsWith('lorem ipsum')).toBe(true);
  });

  it('folds case and diacritics of non-ASCII text and keeps its original spelling in the snippet', () => {
    const s = makeSnippet(`${filler}Les élèves de L'ÉCOLE Normale étudient. ${filler}`, 'ecole eleves', 80);
    expect(s).toContain("élèves de L'ÉCOLE Normale");
  });

  it('matches plural and singular forms', () => {
    expect(queryTerms('indexes')).toEqual(queryTerms('index'));
  });
});
