import { comparableText } from '../core/text.js';
import { countWords } from '../extract/content.js';
import type { ExtractedDocument } from '../extract/types.js';

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


const SENTENCE_END = /(?<=[.!?…。！？])["'”’)\]]*\s+(?=[^\s])/u;

/** Sentences of a paragraph; a sentence longer than maxWords is cut into even word runs. */
function splitLong(text: string, maxWords: number, prose: boolean): Unit[] {
  const pieces = prose ? text.split(SENTENCE_END) : text.split('\n');
  const units: Unit[] = [];
  let current: string[] = [];
  let currentWords = 0;
  const joiner = prose ? ' ' : '\n';
  const push = (): void => {
    if (current.length > 0) units.push({ text: current.join(joiner), words: currentWords, prose });
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

/** Splits a run of words into the fewest chunks of at most maxWords, all of about the same size. */
function chunkWords(text: string, maxWords: number): string[] {
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
        const sentences = unit.text.split(SENTENCE_END);
        let taken = 0;
        let takenWords = 0;
        for (const sentence of sentences) {
          const words = countWords(sentence);
          if (takenWords + words > room) break;
          taken++;
          takenWords += words;
        }
        if (taken > 0 && taken < sentences.length) {
          draft.parts.push(sentences.slice(0, taken).join(' '));
          draft.words += takenWords;
          flush();
          const rest = sentences.slice(taken).join(' ');
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
