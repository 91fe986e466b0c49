import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { fileAvailable } from '../testkit/components.js';
import { crossEncoderDir } from '../testkit/models.js';
import { CrossEncoderStage, crossEncoderText, queryWindow } from './cross-encoder.js';

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

  it('starts at the beginning when no query word occurs', () => {
    expect(queryWindow(filler(50, 'x'), 'vacuum', 4)).toBe('x0 x1 x2 x3');
  });
});

describe('crossEncoderText', () => {
  it('puts where the passage is (title, headings) before its window', () => {
    expect(crossEncoderText({ title: 'Routine Vacuuming', headingPath: '', text: 'dead rows' }, 'vacuum', 60)).toBe('Routine Vacuuming. dead rows');
    expect(crossEncoderText({ title: 'T', headingPath: 'A > B', text: 'dead rows' }, 'vacuum', 60)).toBe('T — A > B. dead rows');
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
