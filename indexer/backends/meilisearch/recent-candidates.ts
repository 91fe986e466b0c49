/**
 * The candidates of a passage search just answered, kept a few seconds (issue 34), so that the search restricted to
 * some pages that the pipeline sends next for the same query (the best passage of each page the page index ranked but
 * the passage list left out, search/request-state.ts runPages; a page pass; highlights) is answered from them without
 * another request to the engine. A page with no candidate is still searched, alone.
 *
 * What it cannot express exactly: unless the first search saw every match (`complete`), a page's best passage among
 * the candidates is the best of the ones Meilisearch returned, not necessarily its best by BM25 over all its passages
 * (bench/results holds the measured difference).
 */
import type { IndexHit } from '../../search-index.js';

interface Recent {
  at: number;
  hits: readonly IndexHit[];
  complete: boolean;
}

export class RecentCandidates {
  private readonly recent = new Map<string, Recent>();

  constructor(
    private readonly ttlMs = 10_000,
    private readonly max = 64,
  ) {}

  static key(stems: readonly string[], filter: string | undefined): string {
    return `${stems.join(' ')}\u0000${filter ?? ''}`;
  }

  /** Keeps the scored candidates of a search (`complete`: they are every match of the query under its filter). */
  keep(key: string, hits: readonly IndexHit[], complete: boolean): void {
    if (this.recent.size >= this.max) this.recent.delete(this.recent.keys().next().value!);
    this.recent.delete(key);
    this.recent.set(key, { at: Date.now(), hits, complete });
  }

  /**
   * The kept candidates on these pages, and the pages that must still be searched (none when the kept ones were every
   * match); undefined when nothing recent is kept under `key`.
   */
  onPages(key: string, pageIds: readonly number[]): { hits: IndexHit[]; unsearched: number[] } | undefined {
    const found = this.recent.get(key);
    if (!found || Date.now() - found.at > this.ttlMs) return undefined;
    const wanted = new Set(pageIds);
    const hits = found.hits.filter((h) => wanted.has(h.pageId));
    const covered = new Set(hits.map((h) => h.pageId));
    return { hits, unsearched: found.complete ? [] : [...wanted].filter((id) => !covered.has(id)) };
  }

  clear(): void {
    this.recent.clear();
  }
}
