/** A passage as the search index stores it. `id` is the passage id from storage (passages.id). */
export interface IndexDoc {
  id: number;
  pageId: number;
  url: string;
  title: string;
  /** Headings above the passage, outermost first, joined with " > ". */
  headingPath: string;
  text: string;
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

export interface IndexSearchOptions {
  limit: number;
  /** Return at most this many passages from one page (default: unlimited). */
  perPageLimit?: number;
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
  /** The stored documents with these ids, in the order asked (unknown ids are skipped, duplicates returned once). */
  get(ids: readonly number[]): Promise<IndexDoc[]>;
  stats(): Promise<IndexStats>;
  close(): Promise<void>;
}
