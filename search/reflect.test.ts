import { describe, expect, it } from 'vitest';
import { expansionTerms, queryStems, splitSubQueries } from './reflect.js';

const options = { terms: 5, minPassages: 2, maxPoolShare: 1, poolIdf: false };

describe('expansionTerms', () => {
  const feedback = [
    { text: 'Film cooling of turbine blades: the film cooling effectiveness and blowing ratio.', weight: 0.9 },
    { text: 'Turbine blade film cooling holes; effectiveness falls downstream.', weight: 0.6 },
    { text: 'Turbine blades see radiant heat and effectiveness.', weight: 0.1 },
  ];

  it('draws weighted content words from the feedback, leaving out the query, stopwords and one-passage words', () => {
    const terms = expansionTerms('turbine blade heat', feedback, options);
    const names = terms.map((t) => t.term);
    expect(names).toEqual(expect.arrayContaining(['film', 'cooling', 'effectiveness']));
    expect(names).not.toContain('turbine');
    expect(names).not.toContain('blades');
    expect(names).not.toContain('the');
    expect(names).not.toContain('radiant');
    expect(terms.reduce((s, t) => s + t.weight, 0)).toBeCloseTo(1, 10);
    expect(terms.map((t) => t.weight)).toEqual([...terms.map((t) => t.weight)].sort((a, b) => b - a));
  });

  it('follows the passage weights', () => {
    const heavy = [
      { text: 'alpha alpha gamma', weight: 1 },
      { text: 'beta beta gamma', weight: 1 },
      { text: 'alpha beta', weight: 1 },
    ];
    const tilt = (wa: number, wb: number): string[] =>
      expansionTerms('query', [{ ...heavy[0]!, weight: wa }, { ...heavy[1]!, weight: wb }, heavy[2]!], options).map((t) => t.term);
    expect(tilt(10, 1)[0]).toBe('alpha');
    expect(tilt(1, 10)[0]).toBe('beta');
  });

  it('drops words common to most of the pool', () => {
    const pool = Array.from({ length: 40 }, (_, i) => (i < 30 ? 'flow over bodies' : 'film cooling'));
    const withFlow = [
      { text: 'flow film cooling', weight: 1 },
      { text: 'flow film cooling', weight: 1 },
    ];
    expect(expansionTerms('heat', withFlow, options, pool).map((t) => t.term)).toContain('flow');
    expect(expansionTerms('heat', withFlow, { ...options, maxPoolShare: 0.5 }, pool).map((t) => t.term)).not.toContain('flow');
    const idf = expansionTerms('heat', withFlow, { ...options, poolIdf: true }, pool);
    expect(idf[idf.length - 1]?.term).toBe('flow');
  });

  it('returns nothing without feedback', () => {
    expect(expansionTerms('heat', [], options)).toEqual([]);
  });
});

describe('queryStems', () => {
  it('keeps content words, stemmed', () => {
    expect([...queryStems('How are the indexes used?')]).toEqual(['index']);
    expect([...queryStems('the of')]).toEqual(['the', 'of']);
  });
});

describe('splitSubQueries', () => {
  it('splits on question marks, commas, "and", "vs" when every kept part is substantial', () => {
    expect(splitSubQueries('how is heat transfer computed, and what is the effect of viscosity?')).toEqual([
      'how is heat transfer computed',
      'what is the effect of viscosity',
    ]);
    expect(splitSubQueries('btree index scans vs hash index lookups')).toEqual(['btree index scans', 'hash index lookups']);
    expect(splitSubQueries('when does wing flutter start? what causes buffeting of wings?')).toEqual(['when does wing flutter start', 'what causes buffeting of wings']);
  });

  it('leaves a single question alone', () => {
    expect(splitSubQueries('compare btree vs hash')).toEqual([]);
    expect(splitSubQueries('boundary layer transition on flat plates')).toEqual([]);
    expect(splitSubQueries('salt and pepper')).toEqual([]);
  });
});
