import type { SearchOptions } from './options.js';

export interface SearchRequest extends SearchOptions {
  /** The query, trimmed and non-empty. */
  query: string;
  /** 1..config.search.max_depth; higher depth adds reflection passes. */
  depth: number;
  /** BCP 47 language of the results (optional); default search.default_language, else the query's own. */
  language?: string;
  requestId: string;
}

export interface SearchResultItem {
  url: string;
  title: string;
  snippet: string;
  /** 0..1, higher is more relevant. */
  rerank_score: number;
  /** Present when asked for (the request's `highlights`): the page's passages most relevant to the query, best first. */
  highlights?: Highlight[];
  /** Present when asked for (the request's `include`) and known: the page's publication date, ISO 8601 UTC. */
  published_date?: string;
}

export interface Highlight {
  text: string;
  /** 0..1, the passage's relevance to the query. */
  score: number;
}

export interface SearchResponse {
  /** Ordered best first; the API returns them in this order. */
  results: SearchResultItem[];
}

/** What the API needs from search: the retrieve -> rerank -> reflect pipeline implements it. */
export interface SearchService {
  search(request: SearchRequest): Promise<SearchResponse>;
}
