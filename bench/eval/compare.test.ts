import { describe, expect, it } from 'vitest';
import { compareReports, pairedComparison } from './compare.js';

describe('pairedComparison', () => {
  // Student's sleep data (R: t.test(extra ~ group, data = sleep, paired = TRUE)): t = -4.0621, df = 9,
  // p = 0.002833, 95% CI -2.4598858 .. -0.7001142, mean difference -1.58.
  const group1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
  const group2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

  it('matches R on the sleep data', () => {
    const c = pairedComparison('extra', { name: 'drug 2', scores: group2 }, { name: 'drug 1', scores: group1 });
    expect(c.difference).toBeCloseTo(-1.58, 10);
    expect(c.p_value).toBeCloseTo(0.002833, 5);
    expect(c.ci_95[0]).toBeCloseTo(-2.4598858, 6);
    expect(c.ci_95[1]).toBeCloseTo(-0.7001142, 6);
    expect([c.wins, c.losses, c.ties]).toEqual([0, 9, 1]);
    expect(c.baseline_mean).toBeCloseTo(2.33, 10);
    expect(c.candidate_mean).toBeCloseTo(0.75, 10);
  });

  it('reports p = 1 when every query ties, and a constant shift without a t statistic', () => {
    expect(pairedComparison('m', { name: 'a', scores: [0.5, 1, 0] }, { name: 'b', scores: [0.5, 1, 0] })).toMatchObject({ difference: 0, p_value: 1, ties: 3 });
    const shifted = pairedComparison('m', { name: 'a', scores: [0.1, 0.2] }, { name: 'b', scores: [0.2, 0.3] });
    expect(shifted.difference).toBeCloseTo(0.1, 12);
    expect(shifted.wins).toBe(2);
  });

  it('refuses lists of different lengths', () => {
    expect(() => pairedComparison('m', { name: 'a', scores: [1, 2] }, { name: 'b', scores: [1] })).toThrow(RangeError);
  });
});

describe('compareReports', () => {
  const report = (ndcg: number[], ids = ['1', '2', '3']) => ({ sets: { pgdocs: { query_ids: ids, rows: { depth1: { per_query: { ndcg_10: ndcg } } } } } });

  it('pairs each set and row of two reports query by query', () => {
    const [c, ...rest] = compareReports(report([0.5, 1, 0]), report([0.5, 1, 0.3]), ['ndcg_10', 'mrr_10']);
    expect(rest).toHaveLength(0);
    expect(c).toMatchObject({ set: 'pgdocs', row: 'depth1', metric: 'ndcg_10', wins: 1, losses: 0, ties: 2 });
    expect(c?.difference).toBeCloseTo(0.1, 10);
  });

  it('identical runs: every query ties, p = 1', () => {
    const [c] = compareReports(report([0.5, 1, 0]), report([0.5, 1, 0]), ['ndcg_10']);
    expect(c).toMatchObject({ difference: 0, ties: 3, p_value: 1 });
  });

  it('refuses reports over different queries, or without per-query ids', () => {
    expect(() => compareReports(report([0.5, 1, 0]), report([0.5, 1, 0], ['1', '3', '2']), ['ndcg_10'])).toThrow(/different queries/);
    expect(() => compareReports({ sets: { pgdocs: { rows: {} } } }, report([1, 1, 1]), ['ndcg_10'])).toThrow(/no query_ids/);
  });
});
