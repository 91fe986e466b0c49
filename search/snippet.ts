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
/** An ASCII character code lower-cased (NaN stays NaN). */
function lowerAscii(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}
/** Whether a UTF-16 code unit is whitespace as `\s` and trim() have it (WhiteSpace and LineTerminator). */
function isSpaceCode(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return (
    code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}
const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;
/** Non-ASCII code points by whether WORD takes them (a passage holds few distinct ones). */
const wordCodePoints = new Map<number, boolean>();
function isWordCodePoint(cp: number): boolean {
  let known = wordCodePoints.get(cp);
  if (known === undefined) {
    known = WORD_CHAR.test(String.fromCodePoint(cp));
    if (wordCodePoints.size < 65_536) wordCodePoints.set(cp, known);
  }
  return known;
}
/** The words of the text being cut (a text of L characters has at most L/2 + 1), reused from snippet to snippet. */
let buffers = { size: 0, starts: new Int32Array(0), ends: new Int32Array(0), textStarts: new Int32Array(0), textEnds: new Int32Array(0), hits: new Int32Array(0) };
function wordBuffers(textLength: number): typeof buffers {
  const size = Math.floor(textLength / 2) + 1;
  if (buffers.size < size) {
    const grown = Math.max(size, buffers.size * 2, 1024);
    buffers = { size: grown, starts: new Int32Array(grown), ends: new Int32Array(grown), textStarts: new Int32Array(grown), textEnds: new Int32Array(grown), hits: new Int32Array(grown) };
  }
  return buffers;
}

/** Whitespace runs as one space, as `text.replace(/\s+/gu, ' ').trim()` has them. */
function collapsed(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

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
  const { terms, heads, singles } = termsOf(query);
  const mayMatch = (first: number, second: number): boolean => heads.has(pairCode(first, second)) || singles.has(first);
  // One pass over the text as stored: its words, where each starts and ends in the text with whitespace runs as one
  // space and trimmed (`collapsed`, what the snippet is cut from; window widths count there) and in the text itself
  // (what the snippet is copied from), and the number of the query term each is (-1: none). A word is a run of
  // WORD's characters (letters, numbers, marks, by code point).
  const length = text.length;
  const { starts, ends, textStarts, textEnds, hits } = wordBuffers(length);
  let n = 0;
  let at = 0; // offset in the collapsed text
  let space = false; // whitespace seen since the last character kept (one space if more follows)
  for (let i = 0; i < length; ) {
    const code = text.charCodeAt(i);
    if (isSpaceCode(code)) {
      if (at > 0) space = true;
      i++;
      continue;
    }
    if (space) {
      at++;
      space = false;
    }
    const wordAscii = isAsciiWordCode(lowerAscii(code));
    if (!wordAscii && (code < 128 || !isWordCodePoint(text.codePointAt(i)!))) {
      const width = text.codePointAt(i)! > 0xffff ? 2 : 1;
      i += width;
      at += width;
      continue;
    }
    const start = i;
    let ascii = true;
    while (i < length) {
      const c = text.charCodeAt(i);
      if (c < 128) {
        if (!isAsciiWordCode(lowerAscii(c))) break;
        i++;
      } else {
        const cp = text.codePointAt(i)!;
        if (!isWordCodePoint(cp)) break;
        ascii = false;
        i += cp > 0xffff ? 2 : 1;
      }
    }
    starts[n] = at;
    ends[n] = at + (i - start);
    textStarts[n] = start;
    textEnds[n] = i;
    at += i - start;
    let hit = -1;
    if (ascii) {
      // foldCase of an ASCII word is its lower case: made only for a word that may match.
      if (mayMatch(lowerAscii(code), lowerAscii(text.charCodeAt(start + 1)))) hit = terms.get(stem(text.slice(start, i).toLowerCase())) ?? -1;
    } else {
      const folded = foldCase(text.slice(start, i));
      if (mayMatch(folded.charCodeAt(0), folded.charCodeAt(1))) hit = terms.get(stem(folded)) ?? -1;
    }
    hits[n++] = hit;
  }
  const cleanLength = at;
  if (cleanLength <= maxChars) return collapsed(text);
  if (n === 0) return '…'; // no word: nothing to show of a text longer than the window
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
  let last = -1;
  for (let i = startWord; i < n; i++) {
    if (ends[i]! - from > maxChars - 2) break;
    to = ends[i]!;
    last = i;
  }
  // From a word's start to a word's end: the collapsed text between them is the text's with its whitespace runs as one space.
  const body = last < 0 ? '' : text.slice(textStarts[startWord], textEnds[last]).replace(/\s+/gu, ' ');
  return `${from > 0 ? '…' : ''}${body}${to < cleanLength ? '…' : ''}`;
}
