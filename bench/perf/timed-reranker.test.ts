import { describe, expect, it } from 'vitest';
import { LexicalReranker } from '../../reranker/lexical.js';
import { TimedReranker } from './timed-reranker.js';

describe('TimedReranker', () => {
  it('returns the inner scores and records each call', async () => {
    const inner = new LexicalReranker();
    const timed = new TimedReranker(inner);
    const passages = ['vacuum reclaims storage', 'the planner chooses a join'];
    const expected = await inner.score('vacuum', passages);
    expect(await timed.score('vacuum', passages)).toEqual(expected);
    expect(timed.info).toEqual(inner.info);
    expect(timed.calls).toHaveLength(1);
    expect(timed.calls[0]?.passages).toEqual(passages);
    expect(timed.calls[0]?.ms).toBeGreaterThanOrEqual(0);
    timed.reset();
    expect(timed.calls).toHaveLength(0);
  });
});
