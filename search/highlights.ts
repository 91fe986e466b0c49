/**
 * Highlights: the passages of each result's page most relevant to the query, best first, each with its score (the
 * reranker's 0..1 judgement of the passage against the query, as every passage of the request is scored).
 */
import type { IndexHit, SearchIndex } from '../indexer/index.js';
import type { HighlightOptions } from './options.js';
import type { Ranked } from './ranking.js';
import type { RequestState } from './request-state.js';
import type { Highlight } from './service.js';
import { makeSnippet } from './snippet.js';

/** Passages of a page read as candidates beyond those asked for (the reranker then picks the best of them). */
const EXTRA_CANDIDATES = 2;

/**
 * Highlights by page id for the results' pages: their passages matching the query (and those the request has pooled
 * already), scored with `score` where not scored yet, best first, `count` of each, cut to `maxChars` around the query.
 */
export async function highlightsOf(
  query: string,
  results: readonly Ranked[],
  options: HighlightOptions,
  state: RequestState,
  index: SearchIndex,
  score: (ids: readonly number[]) => Promise<unknown>,
): Promise<Map<number, Highlight[]>> {
  const pageIds = [...new Set(results.map((r) => r.hit.pageId))];
  const out = new Map<number, Highlight[]>();
  if (pageIds.length === 0) return out;
  const perPage = options.count + EXTRA_CANDIDATES;
  const found = await index.search(query, { limit: pageIds.length * perPage, perPageLimit: perPage, filter: { ...state.filter, pageIds } });
  const byPage = new Map<number, Map<number, IndexHit>>();
  const add = (hit: IndexHit) => {
    let page = byPage.get(hit.pageId);
    if (!page) byPage.set(hit.pageId, (page = new Map()));
    page.set(hit.id, hit);
  };
  const wanted = new Set(pageIds);
  for (const hit of state.pool.values()) if (wanted.has(hit.pageId)) add(hit);
  for (const hit of found) {
    if (!state.pool.has(hit.id)) state.pool.set(hit.id, hit);
    add(state.pool.get(hit.id) ?? hit);
  }
  // The result's own passage is always a candidate (its translation may have come from another search).
  for (const r of results) {
    if (!state.pool.has(r.hit.id)) state.pool.set(r.hit.id, r.hit);
    add(r.hit);
  }
  await score([...byPage.values()].flatMap((page) => [...page.keys()]));
  for (const pageId of pageIds) {
    const hits = [...(byPage.get(pageId)?.values() ?? [])];
    const scored = hits
      .map((hit) => ({ hit, score: state.rerankScores.get(hit.id) ?? 0 }))
      .sort((a, b) => b.score - a.score || a.hit.id - b.hit.id)
      .slice(0, options.count);
    out.set(
      pageId,
      scored.map(({ hit, score: s }) => ({ text: makeSnippet(hit.text, query, options.maxChars), score: s })),
    );
  }
  return out;
}
