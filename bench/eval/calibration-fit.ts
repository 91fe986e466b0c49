/**
 * Fitting and measuring a calibration (search/calibration.ts): a group-balanced logistic regression of four numbers
 * (model weight, coverage weight, bias) separating the known answers of in-corpus queries from the best results of
 * out-of-corpus ones, and the shares the report gives on any split.
 */
import { CALIBRATED_THRESHOLD, calibrateList, type CalibrationParameters, type ListEvidence } from '../../search/calibration.js';

/** One query's list as the pipeline scored it (SearchOutcome.scoring) and where its known answer is. */
export interface ScoredList {
  set: string;
  /** The index it was searched in (its own set: in-corpus; another: out-of-corpus). */
  index: string;
  query: string;
  fused: number[];
  evidence: ListEvidence | null;
  /** In-corpus: position of the first judged-relevant result (-1 when the list has none); out-of-corpus: -1. */
  answerAt: number;
}

/** A training example: the features of the calibrated logit, whether it is an answer, and its (query set, index) group. */
interface Example {
  features: [number, number, number];
  answer: boolean;
  group: string;
}

/** The features of a list's result at `position`: the best's model score less the fused gap down to it, the best's coverage, 1. */
function example(list: ScoredList, position: number, answer: boolean): Example | null {
  if (!list.evidence || position < 0 || position >= list.fused.length) return null;
  const best = Math.max(...list.fused);
  return { features: [list.evidence.model - (best - (list.fused[position] as number)), list.evidence.coverage, 1], answer, group: `${list.set}>${list.index}` };
}

/**
 * Logistic regression of the three parameters by Newton's method with a small ridge (lambda) on the weights: positives
 * are the in-corpus lists' known answers, negatives the out-of-corpus lists' best results. Each (query set, index)
 * group weighs the same in total, so a large set does not decide the threshold for a small one. Throws when the model
 * weight comes out <= 0 (the model's score would mean the opposite, and the order within a list would reverse).
 */
export function fitCalibration(inCorpus: readonly ScoredList[], outOfCorpus: readonly ScoredList[], lambda = 1e-3): CalibrationParameters {
  const examples: Example[] = [
    ...inCorpus.flatMap((l) => example(l, l.answerAt, true) ?? []),
    ...outOfCorpus.flatMap((l) => example(l, 0, false) ?? []),
  ];
  const positives = examples.filter((e) => e.answer).length;
  if (positives === 0 || positives === examples.length) throw new Error(`calibration needs both answers (${positives}) and out-of-corpus lists (${examples.length - positives})`);
  const sizes = new Map<string, number>();
  for (const e of examples) sizes.set(e.group, (sizes.get(e.group) ?? 0) + 1);
  const weightOf = (e: Example): number => examples.length / (sizes.size * (sizes.get(e.group) as number));
  const n = 3;
  let theta = [1, 0, 0];
  for (let iter = 0; iter < 100; iter++) {
    const grad = new Array<number>(n).fill(0);
    const hess = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    for (const e of examples) {
      const f = e.features;
      const z = theta.reduce((sum, t, i) => sum + t * f[i]!, 0);
      const p = 1 / (1 + Math.exp(-z));
      const w = weightOf(e);
      for (let i = 0; i < n; i++) {
        grad[i]! += w * (p - (e.answer ? 1 : 0)) * f[i]!;
        for (let j = 0; j < n; j++) hess[i]![j]! += w * p * (1 - p) * f[i]! * f[j]!;
      }
    }
    for (let i = 0; i < n - 1; i++) {
      grad[i]! += lambda * examples.length * theta[i]!;
      hess[i]![i]! += lambda * examples.length;
    }
    const step = solve(hess, grad);
    theta = theta.map((t, i) => t - step[i]!);
    if (Math.max(...step.map(Math.abs)) < 1e-9) break;
  }
  const [modelWeight, coverageWeight, bias] = theta as [number, number, number];
  if (!(modelWeight > 0)) throw new Error(`the fitted model weight is ${modelWeight}: the model's score does not separate answers from out-of-corpus results`);
  return { modelWeight, coverageWeight, bias };
}

/** Solves a small linear system by Gaussian elimination with partial pivoting (zeros when singular). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[pivot]![c]!)) pivot = r;
    [m[c], m[pivot]] = [m[pivot]!, m[c]!];
    const d = m[c]![c]!;
    if (Math.abs(d) < 1e-12) return new Array<number>(n).fill(0);
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / d;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}

/** The rerank_scores a list gets: calibrated with `params`, or the fused ones (null: today's scores). */
export function listScores(list: ScoredList, params: CalibrationParameters | null): number[] {
  return calibrateList(params, list.evidence, list.fused);
}

export interface Shares {
  /** In-corpus lists: share whose known answer scores at or above the threshold (a list without it counts as a miss). */
  answers_above?: { share: number; of: number; answer_in_list: number };
  /** Out-of-corpus lists: share whose best result scores below the threshold (an empty list counts as below). */
  top_below?: { share: number; of: number };
}

/** The report's shares for one group of lists (all in-corpus or all out-of-corpus) at `threshold`. */
export function shares(lists: readonly ScoredList[], params: CalibrationParameters | null, inCorpus: boolean, threshold = CALIBRATED_THRESHOLD): Shares {
  if (lists.length === 0) return {};
  if (inCorpus) {
    let above = 0;
    let found = 0;
    for (const l of lists) {
      if (l.answerAt < 0) continue;
      found++;
      if ((listScores(l, params)[l.answerAt] ?? 0) >= threshold) above++;
    }
    return { answers_above: { share: above / lists.length, of: lists.length, answer_in_list: found } };
  }
  let below = 0;
  for (const l of lists) if ((listScores(l, params)[0] ?? 0) < threshold) below++;
  return { top_below: { share: below / lists.length, of: lists.length } };
}
