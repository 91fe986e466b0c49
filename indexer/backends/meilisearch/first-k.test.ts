import { describe, expect, it } from 'vitest';
import { widenedSearch } from '../shared.js';
import { firstK } from './vector-index.js';

describe('Meilisearch vector search: candidates asked for', () => {
  it('asks for 1.5x the limit first and doubles only when the per-page cap leaves slots empty', async () => {
    const asked: number[] = [];
    // 200 candidates, two passages a page, best first: 60 kept with at most 3 a page need the first 60.
    const all = Array.from({ length: 200 }, (_, i) => ({ id: i + 1, pageId: Math.floor(i / 2), score: 1 - i / 1000 }));
    const kept = await widenedSearch(60, 3, 10_000, async (k) => (asked.push(k), { candidates: all.slice(0, k), exhausted: k >= all.length }), firstK(60, 3));
    expect(asked).toEqual([90]);
    expect(kept).toHaveLength(60);

    // Ten passages a page: 3 kept of each, so 90 candidates fill 27 slots only and the search widens once (180: 54), twice (360).
    asked.length = 0;
    const crowded = Array.from({ length: 400 }, (_, i) => ({ id: i + 1, pageId: Math.floor(i / 10), score: 1 - i / 1000 }));
    const widened = await widenedSearch(60, 3, 10_000, async (k) => (asked.push(k), { candidates: crowded.slice(0, k), exhausted: k >= crowded.length }), firstK(60, 3));
    expect(asked).toEqual([90, 180, 360]);
    expect(widened).toHaveLength(60);
    expect(firstK(10, 10)).toBe(18);
  });
});
