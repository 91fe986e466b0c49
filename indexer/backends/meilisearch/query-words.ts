/**
 * The query notary sends Meilisearch for its OR semantics (issue 34): the query's stems in their own order under
 * Meilisearch's "frequency" matching strategy, which matches documents holding all the words first and then drops the
 * most frequent words one by one, down to the rarest word alone. A stem no document holds would stay to the end
 * (it is the rarest) and match nothing, so such stems are left out: each stem's document count comes from one
 * multi-search of `limit: 0` queries, remembered for a while (`ttlMs`) so a search usually sends one request.
 *
 * What it cannot express exactly: FTS5's OR matches a document holding any one query word; here a document holding
 * only words more frequent than the rarest is not matched (BM25 ranks such documents low; the relevance harness
 * measures the difference, see docs/search-backends.md).
 */
import type { Meilisearch } from 'meilisearch';

interface Counted {
  documents: number;
  at: number;
}

export class WordFrequencies {
  private readonly counts = new Map<string, Counted>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly max = 50_000,
  ) {}

  /** The stems documents in `uid` hold (typo-tolerant, as the search itself matches), in the query's order. */
  async present(client: Meilisearch, uid: string, stems: readonly string[], call: <T>(fn: () => Promise<T>) => Promise<T>, fresh = false): Promise<string[]> {
    const now = Date.now();
    // Counts are of the whole index (a filter only narrows what the search returns).
    const unknown = [...new Set(stems)].filter((s) => {
      const known = this.counts.get(`${uid}\u0000${s}`);
      return fresh || !known || now - known.at > this.ttlMs;
    });
    if (unknown.length > 0) {
      const { results } = await call(() =>
        client.multiSearch({ queries: unknown.map((q) => ({ indexUid: uid, q, limit: 0, matchingStrategy: 'all' as const })) }),
      );
      if (this.counts.size + unknown.length > this.max) this.counts.clear();
      unknown.forEach((stem, i) => {
        const total = results[i]?.estimatedTotalHits ?? results[i]?.totalHits ?? 0;
        this.counts.set(`${uid}\u0000${stem}`, { documents: total, at: now });
      });
    }
    return stems.filter((s) => (this.counts.get(`${uid}\u0000${s}`)?.documents ?? 0) > 0);
  }

  /** Forgets every count (documents were written: a stem may now be held by some). */
  clear(): void {
    this.counts.clear();
  }
}
