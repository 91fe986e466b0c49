import { describe, expect, it } from 'vitest';
import { LexicalReranker, lexicalTerms } from './lexical.js';

describe('LexicalReranker', () => {
  const reranker = new LexicalReranker();

  it('ranks a passage with the query terms above one without', async () => {
    const [withTerms, without] = await reranker.score('postgresql vacuum freeze', [
      'VACUUM FREEZE in PostgreSQL marks old tuples as frozen.',
      'The museum opens at nine and closes at five.',
    ]);
    expect(withTerms).toBeGreaterThan(0.3);
    expect(without).toBe(0);
  });

  it('ranks more of the query terms higher, and adjacent query words higher still', async () => {
    const scores = await reranker.score('vacuum freeze tuples', [
      'vacuum is a maintenance command',
      'vacuum can freeze old rows',
      'vacuum can freeze old tuples',
      'tuples freeze vacuum in any order',
      'vacuum freeze tuples',
    ]);
    const [one, two, three, scrambled, phrase] = scores as [number, number, number, number, number];
    expect(two).toBeGreaterThan(one);
    expect(three).toBeGreaterThan(two);
    expect(phrase).toBeGreaterThan(scrambled);
  });

  it('matches across case, accents and simple word forms', async () => {
    const [score] = await reranker.score('Café indexes', ['the CAFE index']);
    expect(score).toBeGreaterThan(0.3);
    expect(lexicalTerms('Naïve CAFÉ, 3.5 東京 indexes')).toEqual(['naiv', 'cafe', '3', '5', '東京', 'index']);
  });

  it('saturates repeated terms below 1 and scores stopword-only queries', async () => {
    const [repeated] = await reranker.score('vacuum', ['vacuum '.repeat(1000)]);
    expect(repeated).toBeGreaterThan(0.5);
    expect(repeated).toBeLessThanOrEqual(1);
    const [stop] = await reranker.score('what is the', ['what is the answer']);
    expect(stop).toBeGreaterThan(0);
  });

  it('says it is the lexical fallback', () => {
    expect(reranker.info).toEqual({ kind: 'lexical', model: 'lexical', source: 'fallback' });
  });
});
