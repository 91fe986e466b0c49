import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isNotaryError } from '../core/errors.js';
import { BertPairTokenizer, longestFirstLengths } from './tokenizer.js';
import { biEncoderDir, crossEncoderDir, type ReferenceLogits } from '../testkit/models.js';

const reference = JSON.parse(readFileSync(path.join(crossEncoderDir, 'reference_logits.json'), 'utf8')) as ReferenceLogits;
const tokenizer = BertPairTokenizer.fromDir(crossEncoderDir);

describe('BertPairTokenizer parity with the reference tokenizer', () => {
  it.each(reference.cases.map((c, i) => [i, c] as const))('case %i: input_ids and token_type_ids are identical', (_, c) => {
    const encoded = tokenizer.encodePair(c.query, c.passage, reference.max_length);
    expect(encoded.inputIds).toEqual(c.input_ids);
    expect(encoded.tokenTypeIds).toEqual(c.token_type_ids);
  });

  it('the reference set covers truncation, accents, CJK, emoji and one-letter texts', () => {
    expect(reference.cases.some((c) => c.input_ids.length === reference.max_length)).toBe(true);
    expect(reference.cases.some((c) => /[\u4e00-\u9fff]/u.test(c.passage))).toBe(true);
  });
});

describe('longest_first truncation', () => {
  it('keeps both when they fit', () => {
    expect(longestFirstLengths(5, 10, 20)).toEqual([5, 10]);
  });
  it('cuts only the longer one when the shorter fits in half', () => {
    expect(longestFirstLengths(6, 1000, 253)).toEqual([6, 247]);
    expect(longestFirstLengths(1000, 6, 253)).toEqual([247, 6]);
  });
  it('halves when both are long, the longer side getting the odd token', () => {
    expect(longestFirstLengths(200, 300, 253)).toEqual([126, 127]);
    expect(longestFirstLengths(300, 200, 253)).toEqual([127, 126]);
    expect(longestFirstLengths(300, 300, 253)).toEqual([126, 127]);
    expect(longestFirstLengths(200, 300, 252)).toEqual([126, 126]);
  });
});

describe('BertPairTokenizer', () => {
  const budget = 256 - tokenizer.pairSpecialTokens;
  const truncateByHand = (query: string, passage: string): number[] => {
    const a = tokenizer.tokenIds(query);
    const b = tokenizer.tokenIds(passage);
    const [keepA, keepB] = longestFirstLengths(a.length, b.length, budget);
    return [101, ...a.slice(0, keepA), 102, ...b.slice(0, keepB), 102];
  };

  it('gives the same ids for a huge passage as tokenizing all of it and truncating', () => {
    const words = 'Ünïcödé postgres VACUUM reclaims 東京都 storage, tuples; 3,520,031 unaffordable 🚀'.split(' ');
    const huge = Array.from({ length: 20_000 }, (_, i) => words[(i * 7) % words.length]).join(' ');
    expect(tokenizer.encodePair('vacuum freeze', huge, 256).inputIds).toEqual(truncateByHand('vacuum freeze', huge));
  });

  it('gives the same ids when the query is longer than the passage head', () => {
    const longQuery = 'tuple '.repeat(400);
    const passage = 'storage '.repeat(3000);
    const encoded = tokenizer.encodePair(longQuery, passage, 256);
    expect(encoded.inputIds).toEqual(truncateByHand(longQuery, passage));
    expect(encoded.inputIds).toHaveLength(256);
  });

  it('encodes a single text as [CLS] A [SEP] for bi-encoders', () => {
    const bi = BertPairTokenizer.fromDir(biEncoderDir);
    const single = bi.encodeSingle('Hello World', 128);
    expect(single.inputIds).toEqual([101, 7592, 2088, 102]);
    expect(single.tokenTypeIds).toEqual([0, 0, 0, 0]);
    expect(bi.encodeSingle('word '.repeat(500), 128).inputIds).toHaveLength(128);
  });

  it('tokenizes a text as the tokenizer itself does, piece by remembered piece, for both models of ../shared', () => {
    // Whitespace of every kind, controls, accents (composed and combining), CJK, emoji, Greek final sigma, punctuation
    // glued to words, words longer than WordPiece's 100 characters, added tokens in the text, repeated spaces.
    const alphabet = [
      'vacuum', 'VACUUM', 'Ünïcödé', 'e\u0301', '\u0301x', '東京都', 'ΟΔΟΣ', 'Σ', '🚀', 'a.b', '(x)', "don't", '3,520,031',
      'pg_stat_user_tables.n_dead_tup', 'x'.repeat(120), '[SEP]', '[MASK]x', '\t', '\n', '\u00a0', '\u3000', '\u200b',
      '\ufeff', '\u2028', '\u000b', '\u0000', '\ufffd', '\u0085', ' ', '  ', '—', '½', 'ﬁ', 'Ⅳ',
    ];
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const texts = [
      ...reference.cases.flatMap((c) => [c.query, c.passage]),
      ...Array.from({ length: 300 }, () => Array.from({ length: 1 + next(40) }, () => alphabet[next(alphabet.length)]).join(next(3) === 0 ? '' : ' ')),
    ];
    for (const dir of [crossEncoderDir, biEncoderDir]) {
      const fresh = BertPairTokenizer.fromDir(dir);
      for (const text of texts) {
        const expected = fresh.encodeText(text);
        expect(fresh.tokenIds(text)).toEqual(expected);
        expect(fresh.tokenIds(text)).toEqual(expected); // the second time from remembered pieces
      }
      expect(fresh.rememberedPieces).toBeGreaterThan(alphabet.length);
    }
  });

  it('encodes empty texts as the bare template', () => {
    expect(tokenizer.encodePair('', '', 256).inputIds).toEqual([101, 102, 102]);
  });

  it('refuses a missing tokenizer with model_unavailable', () => {
    let caught: unknown;
    try {
      BertPairTokenizer.fromDir('/nonexistent-model-dir');
    } catch (err) {
      caught = err;
    }
    expect(isNotaryError(caught) && caught.code === 'model_unavailable').toBe(true);
  });
});
