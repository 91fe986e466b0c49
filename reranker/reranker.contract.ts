import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reranker } from './reranker.js';

const QUERY = 'how does postgresql vacuum reclaim storage';
const PASSAGES = [
  'VACUUM reclaims storage occupied by dead tuples.',
  'New York City is famous for the Metropolitan Museum of Art.',
  '',
  'Straße café naïve — ünïcödé & emoji 🚀 東京都',
  '   ',
  'postgresql vacuum storage '.repeat(300),
];

/** The behaviour every Reranker must have; registers a describe block for the reranker `create` returns. */
export function rerankerContract(name: string, create: () => Promise<Reranker>): void {
  describe(`Reranker contract: ${name}`, () => {
    let reranker: Reranker;
    beforeAll(async () => {
      reranker = await create();
    }, 60_000);
    afterAll(async () => {
      await reranker?.close();
    });

    it('returns one score per passage, each within [0, 1]', async () => {
      const scores = await reranker.score(QUERY, PASSAGES);
      expect(scores).toHaveLength(PASSAGES.length);
      for (const score of scores) {
        expect(Number.isFinite(score)).toBe(true);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
      }
    });

    it('returns [] for no passages', async () => {
      expect(await reranker.score(QUERY, [])).toEqual([]);
    });

    it('is deterministic', async () => {
      const first = await reranker.score(QUERY, PASSAGES);
      const second = await reranker.score(QUERY, PASSAGES);
      expect(second).toEqual(first);
    });

    it('scores a passage the same alone as among others', async () => {
      const together = await reranker.score(QUERY, PASSAGES);
      const alone = await reranker.score(QUERY, [PASSAGES[0] ?? '']);
      expect(alone[0]).toBeCloseTo(together[0] ?? -1, 5);
    });

    it('handles empty, whitespace-only and unicode queries', async () => {
      for (const query of ['', '   ', '東京都 🚀 ünïcödé', '\u0000\u200b']) {
        const scores = await reranker.score(query, PASSAGES);
        expect(scores).toHaveLength(PASSAGES.length);
        for (const score of scores) expect(score >= 0 && score <= 1).toBe(true);
      }
    });

    it('names its kind and source', () => {
      expect(['cross-encoder', 'bi-encoder', 'lexical']).toContain(reranker.info.kind);
      expect(reranker.info.source.length).toBeGreaterThan(0);
      expect(reranker.info.model.length).toBeGreaterThan(0);
    });
  });
}
