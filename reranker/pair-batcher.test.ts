import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotaryError } from '../core/errors.js';
import { crossEncoderDir } from '../testkit/models.js';
import { fileAvailable } from '../testkit/components.js';
import { OnnxReranker } from './onnx-reranker.js';
import { PairBatcher, type PairScorer } from './pair-batcher.js';

const present = fileAvailable('the cross-encoder of ../shared', path.join(crossEncoderDir, 'tokenizer.json'));

/** The real model, with the moments its calls began and the pairs each carried. */
function watched(model: OnnxReranker): PairScorer & { calls: Array<{ at: number; pairs: number }> } {
  const calls: Array<{ at: number; pairs: number }> = [];
  return {
    calls,
    scorePairs: (pairs) => {
      calls.push({ at: performance.now(), pairs: pairs.length });
      return model.scorePairs(pairs);
    },
  };
}

const requests = [
  { query: 'how do I vacuum a table', passages: ['VACUUM reclaims storage occupied by dead tuples.', 'Routine vacuuming keeps statistics fresh.'] },
  { query: 'create an index concurrently', passages: ['CREATE INDEX CONCURRENTLY builds the index without locking out writes.'] },
  { query: 'point in time recovery', passages: ['Continuous archiving and PITR.', 'Base backups with pg_basebackup.', 'Restore commands replay WAL.'] },
];

describe.runIf(present)('PairBatcher in front of the cross-encoder (the model of ../shared)', () => {
  let model: OnnxReranker;
  let expected: number[][];
  beforeAll(async () => {
    model = await OnnxReranker.load(crossEncoderDir, { threads: 1, batchSize: 16, maxSeqLength: 256, source: 'test' });
    expected = [];
    for (const r of requests) expected.push(await model.score(r.query, r.passages));
  });
  afterAll(async () => {
    await model?.close();
  });

  it('puts concurrent requests into one model call and gives each caller its own scores, in order', async () => {
    const scorer = watched(model);
    const batcher = new PairBatcher(scorer, { maxWaitMs: 20, maxPairs: 64 });
    const got = await Promise.all(requests.map((r) => batcher.score(r.query, r.passages)));
    expect(scorer.calls.map((c) => c.pairs)).toEqual([6]);
    // One pair per run for this int8 model: a pair's score does not depend on its neighbours.
    got.forEach((scores, i) => expect(scores).toEqual(expected[i]));
  });

  it('starts a call as soon as maxPairs pairs wait, and never splits a request', async () => {
    const scorer = watched(model);
    const batcher = new PairBatcher(scorer, { maxWaitMs: 50, maxPairs: 4 });
    const started = performance.now();
    const got = await Promise.all(requests.map((r) => batcher.score(r.query, r.passages)));
    expect(scorer.calls.map((c) => c.pairs)).toEqual([3, 3]);
    expect((scorer.calls[0]?.at ?? Infinity) - started).toBeLessThan(25);
    got.forEach((scores, i) => expect(scores).toEqual(expected[i]));
  });

  it('waits at most maxWaitMs for company: a lone request is scored', async () => {
    const scorer = watched(model);
    const batcher = new PairBatcher(scorer, { maxWaitMs: 30, maxPairs: 1000 });
    const started = performance.now();
    const r = requests[0] as (typeof requests)[number];
    const scores = await batcher.score(r.query, r.passages);
    const waited = (scorer.calls[0]?.at ?? Infinity) - started;
    expect(scores).toEqual(expected[0]);
    expect(waited).toBeGreaterThanOrEqual(25);
    expect(waited).toBeLessThan(30 + 200);
  });

  it('a failing call rejects every request in it with the error', async () => {
    const closed = await OnnxReranker.load(crossEncoderDir, { threads: 1, batchSize: 16, maxSeqLength: 256, source: 'test' });
    await closed.close();
    const batcher = new PairBatcher(closed, { maxWaitMs: 10, maxPairs: 64 });
    const outcomes = await Promise.allSettled(requests.map((r) => batcher.score(r.query, r.passages)));
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      const reason = outcome.status === 'rejected' ? (outcome.reason as unknown) : null;
      expect(isNotaryError(reason) && reason.code).toBe('service_unavailable');
      expect((reason as Error).message).toMatch(/closed/);
    }
  });

  it('a caller that gives up before its call is rejected alone; the others get their scores', async () => {
    const scorer = watched(model);
    const batcher = new PairBatcher(scorer, { maxWaitMs: 20, maxPairs: 64 });
    const cancel = new AbortController();
    const [first, second, third] = requests as [(typeof requests)[number], (typeof requests)[number], (typeof requests)[number]];
    const a = batcher.score(first.query, first.passages);
    const b = batcher.score(second.query, second.passages, cancel.signal);
    const c = batcher.score(third.query, third.passages);
    cancel.abort(new Error('client went away'));
    await expect(b).rejects.toThrow('client went away');
    expect(await a).toEqual(expected[0]);
    expect(await c).toEqual(expected[2]);
    expect(scorer.calls.map((call) => call.pairs)).toEqual([5]);
  });

  it('a caller that gives up while its call runs is rejected at once; the others of that call are not', async () => {
    const scorer = watched(model);
    const batcher = new PairBatcher(scorer, { maxWaitMs: 5, maxPairs: 64 });
    const cancel = new AbortController();
    const [first, second] = requests as [(typeof requests)[number], (typeof requests)[number]];
    const a = batcher.score(first.query, first.passages, cancel.signal);
    const b = batcher.score(second.query, second.passages);
    while (scorer.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    cancel.abort(new Error('timed out'));
    await expect(a).rejects.toThrow('timed out');
    expect(await b).toEqual(expected[1]);
  });
});
