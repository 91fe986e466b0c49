import { comparableText, hasUnspacedScript, wordSegmenter } from '../core/index.js';
import { countWords } from '../extract/index.js';
import type { ExtractedDocument } from '../extract/index.js';

export interface CutPassage {
  ordinal: number;
  /** Headings above the passage, outermost first, joined with " > " (the page title is not part of it). */
  headingPath: string;
  text: string;
  wordCount: number;
}

export interface CutOptions {
  minWords: number;
  maxWords: number;
}

interface Unit {
  text: string;
  words: number;
  /** Prose that may be split at sentence boundaries to fill a passage. */
  prose: boolean;
}

interface Draft {
  headingPath: string;
  parts: string[];
  words: number;
}

/**
 * Where one sentence ends and the next begins: after . ! ? … (and closing quotes) before a space, or after the full
 * stops of scripts that put no space after them (。！？｡ and closing brackets), with or without a space.
 */
const SENTENCE_BOUNDARY = /(?<=[.!?…]["'”’)\]]*)\s+(?=\S)|(?<=[。！？｡](?:[」』”’）)\]]*))\s*(?=\S)/u;
const UNSPACED_STOP = /[。！？｡][」』”’）)\]]*$/u;

function sentencesOf(text: string): string[] {
  return text.split(SENTENCE_BOUNDARY).filter((s) => s.length > 0);
}

/** Sentences joined back: a space between them, none after the stop of a script written without spaces. */
function joinSentences(sentences: readonly string[]): string {
  let out = '';
  for (const sentence of sentences) out += out.length === 0 || UNSPACED_STOP.test(out) ? sentence : ` ${sentence}`;
  return out;
}

/** Sentences of a paragraph; a sentence longer than maxWords is cut into even word runs. */
function splitLong(text: string, maxWords: number, prose: boolean): Unit[] {
  const pieces = prose ? sentencesOf(text) : text.split('\n');
  const units: Unit[] = [];
  let current: string[] = [];
  let currentWords = 0;
  const push = (): void => {
    if (current.length > 0) units.push({ text: prose ? joinSentences(current) : current.join('\n'), words: currentWords, prose });
    current = [];
    currentWords = 0;
  };
  for (const piece of pieces) {
    const words = countWords(piece);
    if (words === 0) continue;
    if (words > maxWords) {
      push();
      for (const chunk of chunkWords(piece, maxWords)) units.push({ text: chunk, words: countWords(chunk), prose });
      continue;
    }
    if (currentWords + words > maxWords) push();
    current.push(piece);
    currentWords += words;
  }
  push();
  return units;
}

/**
 * Splits text of a script written without spaces into the fewest chunks of at most maxWords words (the platform's
 * word segmenter's), all of about the same size, nothing dropped or added between them.
 */
function chunkSegmentedWords(text: string, maxWords: number): string[] {
  const segments = [...wordSegmenter().segment(text)];
  const total = segments.filter((s) => s.isWordLike).length;
  const size = Math.ceil(total / Math.ceil(total / maxWords));
  const out: string[] = [];
  let chunk = '';
  let words = 0;
  for (const segment of segments) {
    if (segment.isWordLike && words === size) {
      out.push(chunk.trim());
      chunk = '';
      words = 0;
    }
    chunk += segment.segment;
    if (segment.isWordLike) words++;
  }
  if (chunk.trim().length > 0) out.push(chunk.trim());
  return out;
}

/** Splits a run of words into the fewest chunks of at most maxWords, all of about the same size. */
function chunkWords(text: string, maxWords: number): string[] {
  if (hasUnspacedScript(text)) return chunkSegmentedWords(text, maxWords);
  const words = text.split(/\s+/).filter(Boolean);
  const chunks = Math.ceil(words.length / maxWords);
  const size = Math.ceil(words.length / chunks);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(' '));
  return out;
}

/**
 * Cuts a document into passages of about minWords..maxWords words at heading and paragraph boundaries. A heading
 * starts a new passage unless the open one is tiny; a paragraph over maxWords is split at sentence boundaries; a
 * tiny trailing piece merges into its neighbour in the same section. Deterministic.
 */
export function cutPassages(doc: ExtractedDocument, opts: CutOptions): CutPassage[] {
  const maxWords = Math.max(1, Math.floor(opts.maxWords));
  const minWords = Math.min(Math.max(1, Math.floor(opts.minWords)), maxWords);
  const tiny = Math.max(1, Math.floor(minWords / 4));
  const titleKey = doc.title ? comparableText(doc.title) : null;

  const drafts: Draft[] = [];
  const headings: Array<{ level: number; text: string }> = [];
  let draft: Draft = { headingPath: '', parts: [], words: 0 };
  let seenText = false;

  const flush = (): void => {
    if (draft.words > 0) drafts.push(draft);
    draft = { headingPath: draft.headingPath, parts: [], words: 0 };
  };
  const add = (unit: Unit): void => {
    if (draft.words > 0 && draft.words + unit.words > maxWords) {
      if (draft.words < minWords && unit.prose) {
        // Fill the open passage up to maxWords with leading sentences rather than leave it short.
        const room = maxWords - draft.words;
        const sentences = sentencesOf(unit.text);
        let taken = 0;
        let takenWords = 0;
        for (const sentence of sentences) {
          const words = countWords(sentence);
          if (takenWords + words > room) break;
          taken++;
          takenWords += words;
        }
        if (taken > 0 && taken < sentences.length) {
          draft.parts.push(joinSentences(sentences.slice(0, taken)));
          draft.words += takenWords;
          flush();
          const rest = joinSentences(sentences.slice(taken));
          add({ text: rest, words: unit.words - takenWords, prose: true });
          return;
        }
      }
      flush();
    }
    draft.parts.push(unit.text);
    draft.words += unit.words;
  };

  for (const block of doc.blocks) {
    if (block.type === 'heading') {
      // The page's own title heading (before any text) is the title, not a section.
      if (!seenText && headings.length === 0 && titleKey !== null && comparableText(block.text) === titleKey) continue;
      while (headings.length > 0 && (headings[headings.length - 1]?.level ?? 0) >= block.level) headings.pop();
      headings.push({ level: block.level, text: block.text });
      const path = headings.map((h) => h.text).join(' > ');
      if (draft.words >= tiny) flush();
      draft.headingPath = path;
      continue;
    }
    const words = countWords(block.text);
    if (words === 0) continue;
    seenText = true;
    const prose = block.type === 'paragraph' || block.type === 'quote';
    if (words > maxWords) {
      for (const unit of splitLong(block.text, maxWords, prose)) add(unit);
    } else {
      add({ text: block.text, words, prose });
    }
  }
  flush();

  // Tiny pieces join a neighbour of the same section when the result stays within maxWords.
  const merged: Draft[] = [];
  for (let i = 0; i < drafts.length; i++) {
    const d = drafts[i] as Draft;
    const prev = merged[merged.length - 1];
    if (d.words < tiny && prev && prev.headingPath === d.headingPath && prev.words + d.words <= maxWords + tiny) {
      prev.parts.push(...d.parts);
      prev.words += d.words;
      continue;
    }
    const next = drafts[i + 1];
    if (d.words < tiny && next && next.headingPath === d.headingPath && next.words + d.words <= maxWords + tiny) {
      next.parts.unshift(...d.parts);
      next.words += d.words;
      continue;
    }
    merged.push(d);
  }
  return merged.map((d, ordinal) => ({ ordinal, headingPath: d.headingPath, text: d.parts.join('\n'), wordCount: d.words }));
}
