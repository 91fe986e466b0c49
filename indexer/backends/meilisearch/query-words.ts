/**
 * The query notary sends Meilisearch for its OR semantics (issue 34): the query's stems in their own order under
 * Meilisearch's "frequency" matching strategy, which matches documents holding all the words first and then drops the
 * most frequent words one by one, down to the rarest word alone. A stem no document holds would stay to the end
 * (it is the rarest) and match nothing, so such stems are left out. Which stems the index holds is learnt without a
 * request of its own where possible: a search whose all-words query found something shows every one of its stems is
 * held; only when it found nothing are the stems counted (one multi-search of `limit: 0` queries). What was learnt is
 * remembered for `ttlMs`.
 *
 * What it cannot express exactly: FTS5's OR matches a document holding any one query word; here a document holding
 * only words more frequent than the rarest is matched by the query of its word alone, at weight 1/n (search-index.ts),
 * and documents are ranked by Meilisearch's ranking rules, not BM25 (bench/results holds the measured difference).
 */
import type { Meilisearch } from 'meilisearch';

interface Known {
  /** Whether some document holds the stem. */
  held: boolean;
  at: number;
}

export class WordFrequencies {
  private readonly known = new Map<string, Known>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly max = 50_000,
  ) {}

  private get(uid: string, stem: string): Known | undefined {
    const k = this.known.get(`${uid}\u0000${stem}`);
    return k && Date.now() - k.at <= this.ttlMs ? k : undefined;
  }

  private set(uid: string, stem: string, held: boolean): void {
    if (this.known.size >= this.max) this.known.clear();
    this.known.set(`${uid}\u0000${stem}`, { held, at: Date.now() });
  }

  /** The stems not known to be missing from the index, in the query's order. */
  candidates(uid: string, stems: readonly string[]): string[] {
    return stems.filter((s) => this.get(uid, s)?.held !== false);
  }

  /** Every one of these stems is known to be held (an all-words query found documents holding them). */
  allHeld(uid: string, stems: readonly string[]): boolean {
    return stems.every((s) => this.get(uid, s)?.held === true);
  }

  /** A search over all of `stems` found documents: each is held. */
  sawAll(uid: string, stems: readonly string[]): void {
    for (const s of stems) this.set(uid, s, true);
  }

  /** Counts the documents holding each stem (as the search matches it) and returns the held ones. */
  async count(client: Meilisearch, uid: string, stems: readonly string[], call: <T>(fn: () => Promise<T>) => Promise<T>): Promise<string[]> {
    const unique = [...new Set(stems)];
    const { results } = await call(() => client.multiSearch({ queries: unique.map((q) => ({ indexUid: uid, q, limit: 0, matchingStrategy: 'all' as const })) }));
    unique.forEach((stem, i) => this.set(uid, stem, (results[i]?.estimatedTotalHits ?? results[i]?.totalHits ?? 0) > 0));
    return stems.filter((s) => this.get(uid, s)?.held === true);
  }

  /** Forgets what was learnt (documents were written: a stem may now be held by some). */
  clear(): void {
    this.known.clear();
  }
}
