import { STOPWORDS, foldCase, stem } from '../core/index.js';

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** WORD within printable ASCII, where the letters, numbers and marks are [a-z0-9] once lower-cased. */
function isAsciiWordCode(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
}
/** Two UTF-16 code units as one number (NaN, past a word's end, gives a pair no term has). */
function pairCode(first: number, second: number): number {
  return first * 65_536 + second;
}
/** Whether every character of `word` is ASCII. */
function isAsciiWord(word: string): boolean {
  for (let i = 0; i < word.length; i++) if (word.charCodeAt(i) > 127) return false;
  return true;
}
/** An ASCII character code lower-cased (NaN stays NaN). */
function lowerAscii(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}
/** Any character but printable ASCII (the text has its whitespace collapsed to spaces already). */
const NON_ASCII = /[^ -~]/;

/** The stems of the query's content words, to spot them in a passage ("indexes" ~ "index"). */
export function queryTerms(query: string): Set<string> {
  const terms = new Set<string>();
  for (const m of foldCase(query).matchAll(WORD)) if (!STOPWORDS.has(m[0])) terms.add(stem(m[0]));
  return terms;
}

/** The query terms of the last query asked for, with their two-character heads (a search makes ten snippets of one query). */
let lastQuery: { query: string; terms: Map<string, number>; heads: Set<number>; singles: Set<number> } | null = null;

function termsOf(query: string): { terms: Map<string, number>; heads: Set<number>; singles: Set<number> } {
  if (lastQuery?.query === query) return lastQuery;
  // Each term by its number (the window counts hits in an array).
  const terms = new Map<string, number>();
  for (const term of queryTerms(query)) terms.set(term, terms.size);
  // Porter rewrites endings only: a stem of two or more letters begins with its word's first two (checked over
  // Cranfield's and the PostgreSQL docs' words in core/text.test.ts). A word that begins no query term so cannot
  // match one and is not stemmed: most words of a passage are skipped by comparing two character codes.
  const heads = new Set<number>();
  const singles = new Set<number>();
  for (const term of terms.keys()) {
    if (term.length >= 2) heads.add(pairCode(term.charCodeAt(0), term.charCodeAt(1)));
    else singles.add(term.charCodeAt(0));
  }
  lastQuery = { query, terms, heads, singles };
  return lastQuery;
}

/**
 * The window of about `maxChars` characters of `text` holding the most distinct query terms (ties: the earliest),
 * cut at word boundaries, with an ellipsis where text was cut.
 */
export function makeSnippet(text: string, query: string, maxChars: number): string {
  const clean = text.replace(/\s+/gu, ' ').trim();
  if (clean.length <= maxChars) return clean;
  const { terms, heads, singles } = termsOf(query);
  const mayMatch = (first: number, second: number): boolean => heads.has(pairCode(first, second)) || singles.has(first);
  // The words: where each starts and ends, and the number of the query term it is (-1: none).
  const starts: number[] = [];
  const ends: number[] = [];
  const hits: number[] = [];
  if (NON_ASCII.test(clean)) {
    for (const m of clean.matchAll(WORD)) {
      const word = m[0];
      let folded: string | null;
      if (isAsciiWord(word)) {
        // foldCase of an ASCII word is its lower case: it is made only for a word that may match.
        folded = mayMatch(lowerAscii(word.charCodeAt(0)), lowerAscii(word.charCodeAt(1))) ? word.toLowerCase() : null;
      } else {
        const f = foldCase(word);
        folded = mayMatch(f.charCodeAt(0), f.charCodeAt(1)) ? f : null;
      }
      starts.push(m.index);
      ends.push(m.index + word.length);
      hits.push(folded === null ? -1 : (terms.get(stem(folded)) ?? -1));
    }
  } else {
    // ASCII text folds by lower-casing, which keeps every offset: fold it once, and find its words ([a-z0-9]+, as
    // WORD finds them there) by character code.
    const lower = clean.toLowerCase();
    const length = lower.length;
    for (let i = 0; i < length; ) {
      if (!isAsciiWordCode(lower.charCodeAt(i))) {
        i++;
        continue;
      }
      const start = i;
      while (i < length && isAsciiWordCode(lower.charCodeAt(i))) i++;
      starts.push(start);
      ends.push(i);
      hits.push(mayMatch(lower.charCodeAt(start), lower.charCodeAt(start + 1)) ? (terms.get(stem(lower.slice(start, i))) ?? -1) : -1);
    }
  }
  const n = starts.length;
  let bestStart = 0;
  let bestScore = -1;
  let right = 0;
  // Hits of each term in the window, and how many terms have one.
  const counts = new Int32Array(terms.size);
  let distinct = 0;
  for (let left = 0; left < n; left++) {
    const leftStart = starts[left]!;
    while (right < n) {
      if (ends[right]! - leftStart > maxChars) break;
      const hit = hits[right]!;
      if (hit >= 0 && counts[hit]!++ === 0) distinct++;
      right++;
    }
    if (distinct > bestScore) {
      bestScore = distinct;
      bestStart = left;
    }
    const hit = hits[left]!;
    // A word leaves the window (one that never entered it, longer than the window, counts nothing).
    if (hit >= 0 && counts[hit]! > 0 && --counts[hit]! === 0) distinct--;
  }
  // Begin at the first hit of the best window, backed up a few words so the snippet reads as a phrase.
  let firstHit = bestStart;
  let lastHit = bestStart;
  for (let i = bestStart; i < n; i++) {
    if (ends[i]! - (starts[bestStart] ?? 0) > maxChars) break;
    if (hits[i]! >= 0) {
      if (!(hits[firstHit]! >= 0)) firstHit = i;
      lastHit = i;
    }
  }
  let startWord = firstHit;
  const lastEnd = ends[lastHit] ?? 0;
  while (startWord > 0 && firstHit - startWord < 3 && lastEnd - (starts[startWord - 1] ?? 0) <= maxChars - 2) startWord--;
  const from = starts[startWord] ?? 0;
  let to = from;
  for (let i = startWord; i < n; i++) {
    if (ends[i]! - from > maxChars - 2) break;
    to = ends[i]!;
  }
  const body = clean.slice(from, to).trim();
  return `${from > 0 ? '…' : ''}${body}${to < clean.length ? '…' : ''}`;
}
