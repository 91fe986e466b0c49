import { performance } from 'node:perf_hooks';
import type { NotaryConfig } from '../core/config.js';
import type { IndexHit, SearchIndex } from '../indexer/search-index.js';
import type { Reranker } from '../reranker/reranker.js';
import type { SearchRequest, SearchResponse, SearchService } from './service.js';
import { makeSnippet } from './snippet.js';

export interface SearchTimings {
  retrieve_ms: number;
  rerank_ms: number;
  total_ms: number;
  /** Passages scored by the reranker. */
  reranked: number;
}

export interface SearchOutcome extends SearchResponse {
  timings: SearchTimings;
}

/** Best passages a page may contribute to the candidate list, so one long page cannot crowd out the rest. */
const PASSAGES_PER_PAGE = 3;

/** The text a cross-encoder sees: where the passage sits, then the passage. */
export function rerankInput(hit: IndexHit): string {
  const where = hit.headingPath ? `${hit.title} — ${hit.headingPath}` : hit.title;
  return `${where}. ${hit.text}`;
}

/** Index scores are unbounded; without a reranker they are squashed into [0,1) keeping their order. */
function squash(score: number): number {
  const s = Math.max(0, score);
  return s / (s + 1);
}

/**
 * retrieve -> rerank -> one result per URL. Depth > 1 (reflection passes) is priced by the API and given its
 * behaviour by the reflection work; here every depth runs the single pass.
 */
export class SearchPipeline implements SearchService {
  constructor(
    private readonly deps: { index: SearchIndex; reranker: Reranker; config: NotaryConfig['search'] },
  ) {}

  async search(request: Pick<SearchRequest, 'query' | 'depth'>): Promise<SearchOutcome> {
    const { index, reranker, config } = this.deps;
    const started = performance.now();
    const query = request.query.trim();
    const limit = Math.max(config.rerank_top_n, config.max_results * PASSAGES_PER_PAGE);
    const hits = await index.search(query, { limit, perPageLimit: PASSAGES_PER_PAGE });
    const retrieved = performance.now();

    let scored: Array<{ hit: IndexHit; score: number }>;
    if (config.rerank_top_n > 0) {
      const candidates = hits.slice(0, config.rerank_top_n);
      const scores = await reranker.score(query, candidates.map(rerankInput));
      scored = candidates.map((hit, i) => ({ hit, score: clamp01(scores[i] ?? 0) }));
    } else {
      scored = hits.map((hit) => ({ hit, score: squash(hit.score) }));
    }
    const reranked = performance.now();

    const bestByUrl = new Map<string, { hit: IndexHit; score: number }>();
    for (const entry of scored) {
      const prev = bestByUrl.get(entry.hit.url);
      if (!prev || entry.score > prev.score) bestByUrl.set(entry.hit.url, entry);
    }
    const results = [...bestByUrl.values()]
      .sort((a, b) => b.score - a.score || b.hit.score - a.hit.score)
      .slice(0, config.max_results)
      .map(({ hit, score }) => ({
        url: hit.url,
        title: hit.title,
        snippet: makeSnippet(hit.text, query, config.snippet_chars),
        rerank_score: score,
      }));
    return {
      results,
      timings: {
        retrieve_ms: retrieved - started,
        rerank_ms: reranked - retrieved,
        total_ms: performance.now() - started,
        reranked: config.rerank_top_n > 0 ? Math.min(hits.length, config.rerank_top_n) : 0,
      },
    };
  }
}

function clamp01(x: number): number {
  if (!Number.isFinite(x)) return 0;
  return Math.min(1, Math.max(0, x));
}
