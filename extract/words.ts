/**
 * Text measures that hold in every script. Words are counted between spaces, except in text of the scripts written
 * without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Myanmar, Tibetan), where the platform's word
 * segmenter (Intl.Segmenter, ICU's dictionaries) finds them. The segmenter is about ten times slower than the scan,
 * so it runs only on text that holds a character of those scripts (found in the same scan).
 */

import { hasUnspacedScript, isUnspacedCode, wordSegmenter } from '../core/index.js';

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 160 || c === 0x3000;
}

/** Words of any script found by the segmenter (punctuation and spaces are not words). */
function segmentedWords(text: string): number {
  let n = 0;
  for (const segment of wordSegmenter().segment(text)) if (segment.isWordLike) n++;
  return n;
}

/** Words in `text`: runs between spaces, or the segmenter's words in text of unspaced scripts. */
export function countWords(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x0e00 && isUnspacedCode(c)) return segmentedWords(text);
    const space = isSpace(c);
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** Words that hold a letter or digit (a dash or a bullet between spaces is not one). */
export function countLetterWords(text: string): number {
  if (hasUnspacedScript(text)) return segmentedWords(text);
  let n = 0;
  for (const token of text.split(/\s+/)) if (LETTER_OR_DIGIT.test(token)) n++;
  return n;
}

/**
 * Commas of every script: ASCII, Arabic (،), ideographic (、), full-width (，) and the small and vertical forms
 * (Readability's set, with the ideographic comma). Container scoring counts them as signs of prose.
 */
const OTHER_COMMA = /[\u060c\u3001\ufe50\ufe51\ufe10\ufe11\u2e41\u2e34\u2e32\uff0c\uff64]/;
const OTHER_COMMAS = new RegExp(OTHER_COMMA.source, 'g');

export function countCommas(text: string): number {
  let n = 0;
  for (let i = text.indexOf(','); i !== -1; i = text.indexOf(',', i + 1)) n++;
  // Most text has none of the other commas: one regex scan rules them out.
  if (OTHER_COMMA.test(text)) n += text.match(OTHER_COMMAS)?.length ?? 0;
  return n;
}

/**
 * A full stop that ends a sentence: "." before a space or the end, or a stop of the scripts that put no space after
 * it: ideographic and full-width (。．｡), Devanagari danda (। ॥), Urdu (۔).
 */
export const SENTENCE_END = /\.(?: |$)|[。．｡।॥۔]/u;
