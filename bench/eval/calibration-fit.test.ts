import { describe, expect, it } from 'vitest';
import { fitCalibration, shares, type ScoredList } from './calibration-fit.js';

/** A list whose best result has model score `model` and coverage `coverage`, its answer (if any) at `answerAt`. */
function list(model: number, coverage: number, answerAt: number, fused = [0.9, 0.85, 0.6]): ScoredList {
  return { set: 's', index: 'i', query: 'q', fused, evidence: { model, coverage }, answerAt };
}

describe('fitCalibration', () => {
  it('separates answers from out-of-corpus lists with a positive model weight, and the shares say so', () => {
    const inCorpus = Array.from({ length: 40 }, (_, i) => list(0.7 + (i % 10) / 50, 0.6 + (i % 5) / 10, i % 2));
    const outOfCorpus = Array.from({ length: 40 }, (_, i) => list(0.5 + (i % 10) / 50, (i % 3) / 10, -1));
    const params = fitCalibration(inCorpus, outOfCorpus);
    expect(params.modelWeight).toBeGreaterThan(0);
    expect(shares(inCorpus, params, true).answers_above?.share).toBeGreaterThanOrEqual(0.9);
    expect(shares(outOfCorpus, params, false).top_below?.share).toBeGreaterThanOrEqual(0.9);
    // Uncalibrated, every list's best result looks like an answer.
    expect(shares(outOfCorpus, null, false).top_below?.share).toBe(0);
  });

  it('counts an in-corpus list without its answer as a miss', () => {
    const s = shares([list(0.9, 1, 0), list(0.9, 1, -1)], { modelWeight: 10, coverageWeight: 0, bias: -5 }, true);
    expect(s.answers_above).toEqual({ share: 0.5, of: 2, answer_in_list: 1 });
  });

  it('refuses a fit where the model score points the wrong way', () => {
    const inCorpus = Array.from({ length: 20 }, () => list(0.4, 0.5, 0));
    const outOfCorpus = Array.from({ length: 20 }, () => list(0.9, 0.5, -1));
    expect(() => fitCalibration(inCorpus, outOfCorpus)).toThrow(/model weight/);
  });
});
