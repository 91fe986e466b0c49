import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { fileAvailable } from '../testkit/components.js';
import { crossEncoderDir } from '../testkit/models.js';
import { BertPairTokenizer } from '../reranker/tokenizer.js';
import { CrossEncoderStage, crossEncoderText, MIN_PASSAGE_TOKENS, queryWindow, wordStems, type WordTokens } from './cross-encoder.js';

const filler = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');

describe('queryWindow', () => {
  it('keeps a text no longer than the window, and the whole text with window 0', () => {
    expect(queryWindow('vacuum  reclaims\nstorage', 'vacuum', 5)).toBe('vacuum reclaims storage');
    const long = `${filler(100, 'a')} vacuum`;
    expect(queryWindow(long, 'vacuum', 0)).toBe(long);
  });

  it('takes the window with the most distinct query words (stemmed), not the most repeats of one', () => {
    const text = `${filler(30, 'a')} vacuum vacuum vacuum vacuum ${filler(30, 'b')} vacuuming reclaims storage ${filler(30, 'c')}`;
    const window = queryWindow(text, 'how does vacuum reclaim storage', 10);
    expect(window.split(' ')).toHaveLength(10);
    expect(window).toContain('vacuuming reclaims storage');
  });

  it('matches query stems with the stems stemsOf gives a word (a stage passes its remembered ones)', () => {
    const text = `${filler(30, 'a')} vacuum ${filler(30, 'b')} zzz ${filler(30, 'c')}`;
    expect(queryWindow(text, 'vacuum', 5, undefined, wordStems)).toBe(queryWindow(text, 'vacuum', 5));
    expect(queryWindow(text, 'vacuum', 5, undefined, (word) => (word === 'zzz' ? ['vacuum'] : wordStems(word)))).toContain('vacuum');
    expect(queryWindow(text, 'vacuum', 5, undefined, (word) => (word === 'zzz' ? ['vacuum'] : []))).toContain('zzz');
  });

  it('starts at the beginning when no query word occurs', () => {
    expect(queryWindow(filler(50, 'x'), 'vacuum', 4)).toBe('x0 x1 x2 x3');
  });
});

describe('queryWindow with a token budget', () => {
  // One token a word, except words made of "x", which are as many tokens as they are long.
  const count: WordTokens = (word) => (/^x+$/.test(word) ? word.length : 1);
  const sum = (text: string) => text.split(' ').filter(Boolean).reduce((n, w) => n + count(w), 0);

  it('keeps the window within the budget where words are dear, still around the query words', () => {
    const dear = Array.from({ length: 40 }, () => 'xxxxxx').join(' ');
    const text = `${filler(30, 'a')} ${dear} vacuum reclaims storage ${dear} ${filler(30, 'b')}`;
    const window = queryWindow(text, 'vacuum reclaims storage', 60, { tokens: 20, count });
    expect(sum(window)).toBeLessThanOrEqual(20);
    expect(window).toContain('vacuum reclaims storage');
    // Words alone would have taken 60 words, 200 tokens and more.
    expect(sum(queryWindow(text, 'vacuum reclaims storage', 60))).toBeGreaterThan(200);
  });

  it('takes as many cheap words as the budget allows, up to the word limit, and whole short texts unchanged', () => {
    const text = `${filler(100, 'a')} vacuum ${filler(100, 'b')}`;
    expect(queryWindow(text, 'vacuum', 60, { tokens: 30, count }).split(' ')).toHaveLength(30);
    expect(queryWindow(text, 'vacuum', 10, { tokens: 30, count }).split(' ')).toHaveLength(10);
    expect(queryWindow(text, 'vacuum', 0, { tokens: 30, count })).toContain('vacuum');
    expect(queryWindow('vacuum  reclaims storage', 'vacuum', 60, { tokens: 30, count })).toBe('vacuum reclaims storage');
  });

  it('skips a word dearer than the whole budget', () => {
    expect(queryWindow(`${'x'.repeat(50)} vacuum reclaims`, 'vacuum', 60, { tokens: 5, count })).toBe('vacuum reclaims');
  });
});

describe('crossEncoderText', () => {
  it('with a budget, gives the title and headings at most half of it and the window the rest', () => {
    const count: WordTokens = () => 1;
    const doc = { title: 'Routine Vacuuming', headingPath: filler(30, 'h'), text: `${filler(40, 'a')} vacuum ${filler(40, 'b')}` };
    const text = crossEncoderText(doc, 'vacuum', 60, { tokens: 21, count });
    const [where, window] = text.split('. ');
    expect(where?.split(' ')).toHaveLength(10);
    expect(where?.startsWith('Routine Vacuuming —')).toBe(true);
    expect(window?.split(' ')).toHaveLength(10);
    expect(window).toContain('vacuum');
  });

  it('puts where the passage is (title, headings) before its window', () => {
    expect(crossEncoderText({ title: 'Routine Vacuuming', headingPath: '', text: 'dead rows' }, 'vacuum', 60)).toBe('Routine Vacuuming. dead rows');
    expect(crossEncoderText({ title: 'T', headingPath: 'A > B', text: 'dead rows' }, 'vacuum', 60)).toBe('T — A > B. dead rows');
  });
});

describe.runIf(fileAvailable('the cross-encoder of ../shared', path.join(crossEncoderDir, 'tokenizer.json')))('CrossEncoderStage with a token budget', () => {
  const query = 'how does autovacuum decide when to vacuum a table';
  const code = 'pg_stat_user_tables.n_dead_tup autovacuum_vacuum_scale_factor=0.2 autovacuum_vacuum_threshold=50';
  const docs = [1, 2, 3, 4].map((i) => ({
    title: `Routine Vacuuming ${i}`,
    headingPath: 'Server Administration > Routine Database Maintenance Tasks > The Autovacuum Daemon',
    text: `${filler(40, 'w')} ${code} the autovacuum daemon vacuums a table when ${code} ${filler(60, 'z')}`,
  }));

  it('holds every pair the model reads to search.cross_encoder_pair_tokens, the window still around the query words', async () => {
    const model = await OnnxReranker.load(crossEncoderDir, { threads: 1, batchSize: 1, maxSeqLength: 256, source: 'test' });
    const tokenizer = BertPairTokenizer.fromDir(crossEncoderDir);
    try {
      const options = { fromDepth: 2, topN: 20, windowWords: 60, cacheSize: 0, batchWaitMs: 0, batchPairs: 64 };
      const budget = { count: (word: string) => model.textTokens(word) };
      for (const pairTokens of [64, 96]) {
        const room = pairTokens - model.pairSpecialTokens - model.textTokens(query);
        for (const doc of docs) {
          const text = crossEncoderText(doc, query, 60, { ...budget, tokens: room });
          expect(tokenizer.encodePair(query, text, 512).inputIds.length).toBeLessThanOrEqual(pairTokens);
          expect(text).toContain('autovacuum daemon');
        }
      }
      // The window sums the tokens of words: a text's tokens are the sum of its words' (BERT splits at whitespace).
      const sample = `${code} the autovacuum daemon's checks, e.g. VACUUM (VERBOSE) — naïve 10.5%`;
      expect(sample.split(' ').reduce((n, w) => n + model.textTokens(w), 0)).toBe(model.textTokens(sample));
      expect(model.pairTokenCount(query, sample)).toBe(model.pairSpecialTokens + model.textTokens(query) + model.textTokens(sample));
      // Unlimited, the same pairs run to about 130 tokens.
      expect(tokenizer.encodePair(query, crossEncoderText(docs[0] as (typeof docs)[number], query, 60), 512).inputIds.length).toBeGreaterThan(110);
      // The stage scores exactly those texts: its scores are the model's for them.
      const stage = new CrossEncoderStage(model, { ...options, pairTokens: 64 });
      const room = 64 - model.pairSpecialTokens - model.textTokens(query);
      const expected = await model.score(query, docs.map((doc) => crossEncoderText(doc, query, 60, { ...budget, tokens: room })));
      expect((await stage.score(query, docs)).scores).toEqual(expected);
      const unlimited = await new CrossEncoderStage(model, { ...options, pairTokens: 0 }).score(query, docs);
      expect(unlimited.scores).toEqual(await model.score(query, docs.map((doc) => crossEncoderText(doc, query, 60))));
      expect(unlimited.scores).not.toEqual(expected);
      // A query longer than the budget still leaves the passage MIN_PASSAGE_TOKENS.
      const long = filler(80, 'q');
      const [text] = docs.map((doc) => crossEncoderText(doc, long, 60, { ...budget, tokens: MIN_PASSAGE_TOKENS }));
      const stageLong = new CrossEncoderStage(model, { ...options, pairTokens: 64, cacheSize: 10 });
      await stageLong.score(long, docs.slice(0, 1));
      expect(await model.score(long, [text as string])).toEqual((await stageLong.score(long, docs.slice(0, 1))).scores);
    } finally {
      await model.close();
    }
  });
});

describe.runIf(fileAvailable('the cross-encoder of ../shared', path.join(crossEncoderDir, 'tokenizer.json')))('CrossEncoderStage with batching', () => {
  const docs = (tag: string) => [1, 2, 3].map((i) => ({ title: `Page ${tag}${i}`, headingPath: '', text: `vacuum reclaims storage ${tag} ${i}` }));
  const options = { fromDepth: 2, topN: 20, windowWords: 60, cacheSize: 0, batchPairs: 64 };

  it('puts the pairs of concurrent searches into one model call, each search getting the scores it would alone', async () => {
    const model = await OnnxReranker.load(crossEncoderDir, { threads: 1, batchSize: 16, maxSeqLength: 256, source: 'test' });
    try {
      const alone = new CrossEncoderStage(model, { ...options, batchWaitMs: 0 });
      const batched = new CrossEncoderStage(model, { ...options, batchWaitMs: 20 });
      expect(alone.batcher).toBeNull();
      const [a, b] = await Promise.all([batched.score('how does vacuum work', docs('a')), batched.score('reclaim disk space', docs('b'))]);
      expect(batched.batcher?.stats).toEqual({ calls: 1, pairs: 6, requests: 2 });
      expect(a.scores).toEqual((await alone.score('how does vacuum work', docs('a'))).scores);
      expect(b.scores).toEqual((await alone.score('reclaim disk space', docs('b'))).scores);
    } finally {
      await model.close();
    }
  });
});
