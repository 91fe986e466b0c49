import type { Settings } from 'meilisearch';
import { QUERY_STOPWORDS, stemWord } from '../analysis.js';
import { DOC_FIELDS, PAGE_FIELDS, SCORED_FIELDS } from './documents.js';

/** Search results Meilisearch may return for one query (pagination.maxTotalHits, set by the settings). */
export const MAX_TOTAL_HITS = 10_000;

/**
 * The settings notary needs on its passage index, applied idempotently at start by a process with an admin key.
 * Search runs over Porter stems computed by notary (Meilisearch does not stem), title before headings before body
 * (the `attribute` rule: the order FTS5's 4:2:1 weights give), the query stopwords as stop words, and a stem matched
 * whole as in FTS5: no prefix search, no typo tolerance (a typo of a stem is another word's stem), and no proximity
 * rule (BM25 does not rank by it). Without the typo and proximity rules the engine spends about a third less time on
 * notary's OR query (issue 34, bench/results/*meili*-2026-11-27-*).
 */
export function passageIndexSettings(): Settings {
  return {
    searchableAttributes: ['s_title', 's_headings', 's_text'],
    displayedAttributes: [...DOC_FIELDS, ...SCORED_FIELDS, 'vector_model', 'vector_norm'],
    filterableAttributes: ['id', 'pageId', 'url', 'vector_model', ...FACT_FILTERS],
    sortableAttributes: [],
    rankingRules: ['words', 'attribute', 'exactness'],
    typoTolerance: { enabled: false },
    stopWords: [...new Set([...QUERY_STOPWORDS].map(stemWord))].sort(),
    prefixSearch: 'disabled',
    proximityPrecision: 'byWord',
    pagination: { maxTotalHits: MAX_TOTAL_HITS },
  };
}

const FACT_FILTERS = ['language_primary', 'navigation', 'translationKey', 'host', 'hostSuffixes', 'publishedAt', 'collections'];

/** The page-level index: whole pages, title before headings before URL path words before body. */
export function pageIndexSettings(): Settings {
  return {
    ...passageIndexSettings(),
    searchableAttributes: ['s_title', 's_headings', 's_path', 's_text'],
    displayedAttributes: [...PAGE_FIELDS],
    filterableAttributes: ['id', ...FACT_FILTERS],
  };
}

export function sameSetting(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameSetting(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    // Only the keys notary sets are compared (the server adds defaults of its own).
    return Object.entries(b).every(([k, v]) => sameSetting((a as Record<string, unknown>)[k], v));
  }
  return a === b;
}
