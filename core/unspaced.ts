/**
 * Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Myanmar, Tibetan): telling their
 * text apart in one scan, and finding its words with the platform's segmenter (Intl.Segmenter, ICU's dictionaries),
 * which is about ten times slower than a scan and so runs only on text that holds such a character.
 */

let segmenter: Intl.Segmenter | null = null;

/** The platform's word segmenter, made once. */
export function wordSegmenter(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
  return segmenter;
}

/** A character of a script written without spaces between words (UTF-16 code unit; a high surrogate of CJK extensions). */
export function isUnspacedCode(c: number): boolean {
  return (
    (c >= 0x0e00 && c <= 0x0fff) || // Thai, Lao, Tibetan
    (c >= 0x1000 && c <= 0x109f) || // Myanmar
    (c >= 0x1780 && c <= 0x17ff) || // Khmer
    (c >= 0x19e0 && c <= 0x19ff) || // Khmer symbols
    (c >= 0x3040 && c <= 0x30ff) || // Hiragana, Katakana
    (c >= 0x31f0 && c <= 0x31ff) || // Katakana phonetic extensions
    (c >= 0x3400 && c <= 0x4dbf) || // CJK extension A
    (c >= 0x4e00 && c <= 0x9fff) || // CJK unified ideographs
    (c >= 0xf900 && c <= 0xfaff) || // CJK compatibility ideographs
    (c >= 0xff66 && c <= 0xff9f) || // half-width Katakana
    (c >= 0xd840 && c <= 0xd87f) // CJK extensions B-F (high surrogates)
  );
}

/** Whether `text` holds a character of a script written without spaces between words. */
export function hasUnspacedScript(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x0e00 && isUnspacedCode(c)) return true;
  }
  return false;
}

/** The word-like segments of `text` (punctuation and spaces are not words), in order. */
export function segmentWords(text: string): string[] {
  const out: string[] = [];
  for (const segment of wordSegmenter().segment(text)) if (segment.isWordLike) out.push(segment.segment);
  return out;
}

/** U+200B ZERO WIDTH SPACE: invisible, and a separator to tokenizers that split on what is not a letter or digit. */
export const WORD_BREAK = '\u200b';
const WORD_BREAKS = /\u200b/g;

/**
 * `text` with a zero-width space between two adjacent words of an unspaced script, so that a tokenizer splitting on
 * non-letters (SQLite FTS5's unicode61) sees the segmenter's words instead of one token a clause. Other text is
 * returned as it is; `withoutWordBreaks` undoes it.
 */
export function withWordBreaks(text: string): string {
  if (!hasUnspacedScript(text)) return text;
  let out = '';
  let previousWordLike = false;
  for (const segment of wordSegmenter().segment(text)) {
    if (segment.isWordLike && previousWordLike) out += WORD_BREAK;
    out += segment.segment;
    previousWordLike = segment.isWordLike === true;
  }
  return out;
}

export function withoutWordBreaks(text: string): string {
  return text.includes(WORD_BREAK) ? text.replace(WORD_BREAKS, '') : text;
}
