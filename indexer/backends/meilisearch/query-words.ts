/**
 * The query notary sends Meilisearch for its OR semantics (issue 34): the query's stems in their own order under
 * Meilisearch's "frequency" matching strategy, which matches documents holding all the words first and then drops the
 * most frequent words one by one, down to the rarest word alone; beside it each stem alone, weighted by its rarity
 * (`weights`: its BM25 idf over the sum of the query's), so that a document holding only some of the words ranks as
 * the rarer of them deserves (search-index.ts). A stem no document holds would stay to the end under "frequency" (it
 * is the rarest) and match nothing, so such stems are left out.
 *
 * Each stem's document count is asked once (one multi-search of `limit: 0` queries, with the index's document count)
 * and remembered: `heldTtlMs` for a stem some document holds (its count only weighs it), `missingTtlMs` for one none
 * holds (another process may index it). A search whose all-words query finds nothing although every stem was held has
 * a stale count: the stems are counted again.
 *
 * Meilisearch reads only the first 10 words of a query: a longer query's all-words query holds its 10 rarest stems
 * (`rarest`), and each of its stems (up to FTS5's 32) still has its own query.
 *
 * What it cannot express exactly: FTS5's OR scores a document by the sum over the words it holds; here the candidates
 * are the best of the all-words query and its words alone, ranked by Meilisearch's rules, and only then scored by
 * notary's BM25 (bm25.ts; bench/results holds the measured difference).
 */
import type { Meilisearch } from 'meilisearch';

/** Documents whose stored length the average length is taken over. */
const LENGTH_SAMPLE = 5000;

interface Known {
  /** Documents holding the stem; null when it is known to be held but not counted. */
  count: number | null;
  at: number;
}

export class WordFrequencies {
  private readonly known = new Map<string, Known>();
  private readonly documents = new Map<string, Known>();
  private readonly lengths = new Map<string, Known>();

  constructor(
    private readonly heldTtlMs = 600_000,
    private readonly missingTtlMs = 60_000,
    private readonly max = 50_000,
  ) {}

  private get(uid: string, stem: string): Known | undefined {
    const k = this.known.get(`${uid}\u0000${stem}`);
    return k && Date.now() - k.at <= (k.count === 0 ? this.missingTtlMs : this.heldTtlMs) ? k : undefined;
  }

  private set(uid: string, stem: string, count: number | null): void {
    if (this.known.size >= this.max) this.known.clear();
    this.known.set(`${uid}\u0000${stem}`, { count, at: Date.now() });
  }

  /** The stems not known to be missing from the index, in the query's order. */
  candidates(uid: string, stems: readonly string[]): string[] {
    return stems.filter((s) => this.get(uid, s)?.count !== 0);
  }

  /** Every one of these stems is known to be held (an all-words query found documents holding them). */
  allHeld(uid: string, stems: readonly string[]): boolean {
    return stems.every((s) => {
      const known = this.get(uid, s);
      return known !== undefined && known.count !== 0;
    });
  }

  /** Every one of these stems has a document count (and the index has one). */
  allCounted(uid: string, stems: readonly string[]): boolean {
    const n = this.documents.get(uid);
    return n !== undefined && Date.now() - n.at <= this.heldTtlMs && stems.every((s) => typeof this.get(uid, s)?.count === 'number');
  }

  /** A search over all of `stems` found documents: each is held (its count, if known, stays). */
  sawAll(uid: string, stems: readonly string[]): void {
    for (const s of stems) if (!this.get(uid, s)?.count) this.set(uid, s, null);
  }

  /**
   * At most `max` of `stems`, the rarest (fewest documents as last counted; a stem not counted yet counts as rarest),
   * in their query order.
   */
  rarest(uid: string, stems: readonly string[], max: number): string[] {
    if (stems.length <= max) return [...stems];
    const rank = (s: string) => this.get(uid, s)?.count ?? 0;
    const kept = new Set(
      stems
        .map((s, i) => ({ s, i, n: rank(s) }))
        .sort((a, b) => a.n - b.n || a.i - b.i)
        .slice(0, max)
        .map((x) => x.s),
    );
    return stems.filter((s) => kept.has(s));
  }

  /**
   * Each stem's weight for the OR query: its BM25 idf (from the counts) over the sum of the query's; 1/n for all when
   * a count is missing.
   */
  weights(uid: string, stems: readonly string[]): number[] {
    const n = this.documents.get(uid)?.count ?? null;
    const idf = stems.map((s) => {
      const df = this.get(uid, s)?.count;
      return n === null || typeof df !== 'number' ? Number.NaN : Math.log(1 + (n - df + 0.5) / (df + 0.5));
    });
    const sum = idf.reduce((a, x) => a + x, 0);
    return Number.isFinite(sum) && sum > 0 ? idf.map((x) => x / sum) : stems.map(() => 1 / stems.length);
  }

  /** Counts the documents holding each stem (as the search matches it) and returns the held ones. */
  async count(client: Meilisearch, uid: string, stems: readonly string[], call: <T>(fn: () => Promise<T>) => Promise<T>, phrases: readonly string[] = []): Promise<string[]> {
    const unique = [...new Set([...stems, ...phrases])];
    const queries = [...unique.map((q) => ({ indexUid: uid, q, limit: 0, matchingStrategy: 'all' as const })), { indexUid: uid, q: '', limit: 0 }];
    const { results } = await call(() => client.multiSearch({ queries }));
    const total = (i: number) => results[i]?.estimatedTotalHits ?? results[i]?.totalHits ?? 0;
    unique.forEach((stem, i) => this.set(uid, stem, total(i)));
    this.documents.set(uid, { count: total(unique.length), at: Date.now() });
    return stems.filter((s) => (this.get(uid, s)?.count ?? 0) > 0);
  }

  /** Documents holding `stem` (as last counted), or undefined. */
  df(uid: string, stem: string): number | undefined {
    const count = this.get(uid, stem)?.count;
    return typeof count === 'number' ? count : undefined;
  }

  /** Documents in the index (as last counted), or undefined. */
  total(uid: string): number | undefined {
    const n = this.documents.get(uid);
    return n && Date.now() - n.at <= this.heldTtlMs && typeof n.count === 'number' ? n.count : undefined;
  }

  /**
   * The documents' average length (their stored `len`, bm25.ts) over a sample of up to LENGTH_SAMPLE documents, asked
   * once and remembered as the counts are; null when no document has a stored length (written before it was stored).
   */
  async averageLength(client: Meilisearch, uid: string, call: <T>(fn: () => Promise<T>) => Promise<T>): Promise<number | null> {
    const known = this.lengths.get(uid);
    if (known && Date.now() - known.at <= this.heldTtlMs) return known.count;
    const { results } = await call(() => client.index<{ len?: number }>(uid).getDocuments({ fields: ['len'], limit: LENGTH_SAMPLE }));
    const lengths = results.map((r) => r.len).filter((n): n is number => typeof n === 'number' && n > 0);
    const mean = lengths.length > 0 ? lengths.reduce((a, n) => a + n, 0) / lengths.length : null;
    this.lengths.set(uid, { count: mean, at: Date.now() });
    return mean;
  }

  /** Forgets what was learnt (documents were written: a stem may now be held by some). */
  clear(): void {
    this.known.clear();
    this.documents.clear();
    this.lengths.clear();
  }
}
