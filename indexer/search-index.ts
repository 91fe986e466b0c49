/** A passage as the search index stores it. `id` is the passage id from storage (passages.id). */
export interface IndexDoc {
  id: number;
  pageId: number;
  url: string;
  title: string;
  /** Headings above the passage, outermost first, joined with " > ". */
  headingPath: string;
  text: string;
  /** The page's language (BCP 47, lower case); absent when unknown. */
  language?: string;
  /** Present and true when the page is a generated navigation page (index, listing, HTML sitemap). */
  navigation?: boolean;
  /** Translations of one page share this key; absent for a page without known translations. */
  translationKey?: string;
  /** The page's publication date (ISO 8601 date or date-time; UTC when it names no offset); absent when unknown. */
  publishedAt?: string;
  /** The ids of the collections the page is in (core/collections.ts); absent or empty: the default collection. */
  collections?: readonly string[];
}

/**
 * The text a model sees for a passage: where it sits (title, headings), then the passage. The indexer embeds exactly
 * this string, so a stored vector equals what scoring the passage at query time would compute.
 */
export function passageModelText(doc: Pick<IndexDoc, 'title' | 'headingPath' | 'text'>): string {
  const where = doc.headingPath ? `${doc.title} — ${doc.headingPath}` : doc.title;
  return `${where}. ${doc.text}`;
}

export interface IndexHit extends IndexDoc {
  /**
   * Backend relevance score: positive and finite, higher is better, on a ratio scale within one result list (the
   * pipeline divides a list by its best). It is comparable only within its own list: BM25 (FTS5), ts_rank
   * (PostgreSQL) and Meilisearch's 0..1 ranking score are on different scales, and nothing may add or compare
   * scores of two lists as they are (search/pipeline-scores.test.ts holds the pipeline to that).
   */
  score: number;
}

export interface IndexFilter {
  /** Only pages in these languages (primary subtags: "en", "pt"), and pages whose language is unknown. */
  languages?: readonly string[];
  /** Leave out navigation pages. */
  excludeNavigation?: boolean;
  /** Only these pages. */
  pageIds?: readonly number[];
  /** Only pages of this translation group. */
  translationKey?: string;
  /** Only pages on one of these hosts (filter-facts.ts). */
  includeHosts?: readonly HostRule[];
  /** Leave out pages on these hosts. */
  excludeHosts?: readonly HostRule[];
  /** Only pages published in this range. */
  published?: DateRange;
  /**
   * Only pages in at least one of these collections (ids; a document stored without collections is in the default
   * one, core/collections.ts). Empty: no page passes.
   */
  collections?: readonly string[];
}

/** A domain filter's host: `host` itself, and with `subdomains` (a leading "*." in a request) every host under it. */
export interface HostRule {
  /** Lower case, no trailing dot. */
  host: string;
  subdomains: boolean;
}

/**
 * A publication-date range in epoch milliseconds (UTC): `from` inclusive, `to` exclusive, either absent for an open
 * end. Pages without a known date pass unless `undated` is "exclude".
 */
export interface DateRange {
  from?: number;
  to?: number;
  undated: 'keep' | 'exclude';
}

export interface IndexSearchOptions {
  limit: number;
  /** Return at most this many passages from one page (default: unlimited). */
  perPageLimit?: number;
  filter?: IndexFilter;
}

/** A whole page as the page-level index stores it: its fields, each searched with its own weight. */
export interface PageDoc {
  pageId: number;
  url: string;
  title: string;
  /** Every heading of the page, in order. */
  headings: string;
  /** The page's whole main text. */
  text: string;
  language?: string;
  navigation?: boolean;
  translationKey?: string;
  publishedAt?: string;
  /** As IndexDoc.collections. */
  collections?: readonly string[];
}

export interface PageHit {
  pageId: number;
  url: string;
  title: string;
  language?: string;
  navigation?: boolean;
  translationKey?: string;
  /** The page's publication date (ISO 8601, UTC), when known. */
  publishedAt?: string;
  /** Backend relevance score of the whole page (fields weighted), higher is better. */
  score: number;
}

export interface IndexStats {
  documents: number;
  /** Approximate bytes on disk used by the index, where the backend can tell. */
  bytes: number | null;
  backend: string;
}

/**
 * Full-text passage index. Backends: SQLite FTS5 (embedded default); PostgreSQL full-text and Meilisearch implement
 * the same contract (indexer/search-index.contract.ts).
 */
export interface SearchIndex {
  readonly name: string;
  upsert(docs: readonly IndexDoc[]): Promise<void>;
  delete(ids: readonly number[]): Promise<void>;
  search(query: string, options: IndexSearchOptions): Promise<IndexHit[]>;
  /** Page-level index: whole pages with their fields (title, headings, URL path, body). */
  upsertPages(pages: readonly PageDoc[]): Promise<void>;
  deletePages(pageIds: readonly number[]): Promise<void>;
  searchPages(query: string, options: { limit: number; filter?: IndexFilter }): Promise<PageHit[]>;
  /** The stored documents with these ids, in the order asked (unknown ids are skipped, duplicates returned once). */
  get(ids: readonly number[]): Promise<IndexDoc[]>;
  stats(): Promise<IndexStats>;
  /** Makes now what searches would otherwise make at their first use (a server starting); optional. */
  warm?(): Promise<void>;
  close(): Promise<void>;
}
