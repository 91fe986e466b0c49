/**
 * The scrapinghub article-extraction-benchmark metric, reimplemented from the description in
 * ../shared/eval/extraction/scrapinghub/README.md: 4-token shingles counted as multisets, per-page TP/FP/FN
 * normalised to sum 1, mean page precision and recall, F1 of the means.
 */

/** Python's Unicode `\w`: letters, numbers and the underscore. */
const WORD = /[\p{L}\p{N}_]+/gu;

export function tokenize(text: string): string[] {
  return text.match(WORD) ?? [];
}

const WORD_SEGMENTER = new Intl.Segmenter('und', { granularity: 'word' });

/**
 * Words in every script: the platform's word segmenter, so that Chinese, Japanese and Thai (no spaces between words)
 * count word by word where `tokenize` sees one token a sentence. Used by the per-language report.
 */
export function segmentWords(text: string): string[] {
  const words: string[] = [];
  for (const part of WORD_SEGMENTER.segment(text.normalize('NFC').toLowerCase())) if (part.isWordLike) words.push(part.segment);
  return words;
}

export type Tokenizer = (text: string) => string[];

export function shingleCounts(text: string, size = 4, tokens: Tokenizer = tokenize): Map<string, number> {
  return countShingles(tokens(text), size);
}

function countShingles(tokens: readonly string[], size: number): Map<string, number> {
  const counts = new Map<string, number>();
  if (tokens.length === 0) return counts;
  if (tokens.length < size) {
    counts.set(tokens.join(' '), 1);
    return counts;
  }
  for (let i = 0; i + size <= tokens.length; i++) {
    const key = tokens.slice(i, i + size).join(' ');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export interface PageCounts {
  tp: number;
  fp: number;
  fn: number;
}

/** TP/FP/FN of one page, normalised so that they sum to 1 (all zero when both texts are empty). */
export function pageCounts(expected: string, predicted: string, tokens: Tokenizer = tokenize): PageCounts {
  const truth = shingleCounts(expected, 4, tokens);
  const guess = shingleCounts(predicted, 4, tokens);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [key, t] of truth) {
    const p = guess.get(key) ?? 0;
    tp += Math.min(t, p);
    if (t > p) fn += t - p;
  }
  for (const [key, p] of guess) {
    const t = truth.get(key) ?? 0;
    if (p > t) fp += p - t;
  }
  const sum = tp + fp + fn;
  return sum > 0 ? { tp: tp / sum, fp: fp / sum, fn: fn / sum } : { tp: 0, fp: 0, fn: 0 };
}

/** A page's precision and recall; null where the page is left out of that mean. */
export function pagePrecisionRecall(c: PageCounts): { precision: number | null; recall: number | null } {
  if (c.fp === 0 && c.fn === 0) return { precision: 1, recall: 1 };
  return {
    precision: c.tp + c.fp > 0 ? c.tp / (c.tp + c.fp) : null,
    recall: c.tp + c.fn > 0 ? c.tp / (c.tp + c.fn) : null,
  };
}

export interface Scores {
  precision: number;
  recall: number;
  f1: number;
}

export function aggregate(pages: readonly PageCounts[]): Scores {
  let pSum = 0;
  let pN = 0;
  let rSum = 0;
  let rN = 0;
  for (const page of pages) {
    const { precision, recall } = pagePrecisionRecall(page);
    if (precision !== null) {
      pSum += precision;
      pN++;
    }
    if (recall !== null) {
      rSum += recall;
      rN++;
    }
  }
  const precision = pN > 0 ? pSum / pN : 0;
  const recall = rN > 0 ? rSum / rN : 0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f1 };
}

/** Standard deviation of each score over `rounds` bootstrap resamples of the pages (seeded, so reruns agree). */
export function bootstrapStd(pages: readonly PageCounts[], rounds = 1000, seed = 42): Scores {
  let state = seed >>> 0;
  const random = (): number => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const samples: Scores[] = [];
  for (let r = 0; r < rounds; r++) {
    const resample: PageCounts[] = [];
    for (let i = 0; i < pages.length; i++) {
      const page = pages[Math.floor(random() * pages.length)];
      if (page) resample.push(page);
    }
    samples.push(aggregate(resample));
  }
  const std = (pick: (s: Scores) => number): number => {
    const values = samples.map(pick);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    return Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
  };
  return { precision: std((s) => s.precision), recall: std((s) => s.recall), f1: std((s) => s.f1) };
}

/** Shingle F1 of one pair of texts (used for body similarity on the readability test pages). */
export function textF1(expected: string, predicted: string): number {
  const { precision, recall } = pagePrecisionRecall(pageCounts(expected, predicted));
  const p = precision ?? 0;
  const r = recall ?? 0;
  return p + r > 0 ? (2 * p * r) / (p + r) : 0;
}
