import { NotaryError, identifiers } from '../../../core/index.js';
import type { IndexDoc, IndexFilter, IndexHit, IndexSearchOptions, IndexStats, PageDoc, PageHit, SearchIndex } from '../../search-index.js';
import { withFacts } from '../../hit-facts.js';
import { selectPerPage } from '../../page-cap.js';
import { analysedWords, QUERY_STOPWORDS, stemWord } from '../analysis.js';
import { asIndexError, type MeilisearchConnection } from './connection.js';
import { chunks, DOC_FIELDS, SCORED_FIELDS, factFilter, ID_CHUNK, idsFilter, PAGE_FIELDS, pageDocument, passageDocument, toIndexDoc, type PassageDocument } from './documents.js';
import { WordFrequencies } from './query-words.js';
import { bm25Scores, documentLength, phraseKey } from './bm25.js';
import { MAX_TOTAL_HITS, pageIndexSettings } from './settings.js';

/**
 * The identifiers of a query (lc_numeric, pg_catalog.pg_class) as phrases of their stems, each a term of BM25 of its
 * own as in FTS5 (fts5/query.ts).
 */
function queryPhrases(query: string): string[][] {
  if (typeof query !== 'string') return [];
  return identifiers(query)
    .slice(0, MAX_QUERY_TERMS)
    .map((parts) => analysedWords(parts.join(' ')).map(stemWord))
    .filter((phrase) => phrase.length > 1);
}

/** Meilisearch considers only the first 10 words of a query. */
const ENGINE_QUERY_WORDS = 10;

/** The words of a query FTS5 searches for and scores (fts5/query.ts): at most 32. */
const MAX_QUERY_TERMS = 32;

/**
 * The query's BM25 terms as FTS5's OR query has them (fts5/query.ts): its distinct words, stopwords dropped unless
 * nothing else is left, at most MAX_QUERY_TERMS, each as its stem; two words of one stem stay two terms. Empty when
 * the query holds no word.
 */
export function queryTerms(query: string): string[] {
  if (typeof query !== 'string') return [];
  const all = [...new Set(analysedWords(query))];
  const meaningful = all.filter((w) => !QUERY_STOPWORDS.has(w));
  return (meaningful.length > 0 ? meaningful : all).slice(0, MAX_QUERY_TERMS).map(stemWord);
}

/**
 * The passage index in Meilisearch. Writes wait for their task (task_timeout_ms), so a search after upsert() sees
 * the documents, as with the other backends. Scores are Meilisearch's ranking scores (0..1, `showRankingScore`):
 * like every backend's, comparable only within one result list (see SearchIndex).
 */
export class MeilisearchSearchIndex implements SearchIndex {
  readonly name = 'meilisearch';

  constructor(
    private readonly connection: MeilisearchConnection,
    private readonly uid: string = connection.options.index,
  ) {}

  /** Document counts of query stems, by index (query-words.ts). */
  private readonly words = new WordFrequencies();

  /** Connects and applies the settings of the passage and page indexes (when the key allows it). */
  static async open(connection: MeilisearchConnection): Promise<MeilisearchSearchIndex> {
    const index = new MeilisearchSearchIndex(connection);
    if (await connection.ensureIndex()) await connection.ensureIndex(index.pagesUid, pageIndexSettings());
    return index;
  }

  /** The page-level index beside the passages (covered by the search key's `<index>__*`). */
  get pagesUid(): string {
    return `${this.uid}__pages`;
  }

  async upsertPages(pages: readonly PageDoc[]): Promise<void> {
    for (const page of pages) {
      if (!Number.isSafeInteger(page.pageId)) throw new NotaryError('invalid_request', `page id must be an integer, got ${page.pageId}`);
    }
    const docs = [...new Map(pages.map((p) => [p.pageId, pageDocument(p)])).values()];
    for (const chunk of chunks(docs, this.connection.options.batchSize)) {
      await this.connection.wait(this.connection.client.index(this.pagesUid).addDocuments(chunk), 'adding pages');
    }
    this.words.clear();
  }

  async deletePages(pageIds: readonly number[]): Promise<void> {
    const unique = [...new Set(pageIds)].filter((id) => Number.isSafeInteger(id));
    for (const chunk of chunks(unique, ID_CHUNK)) await this.connection.wait(this.connection.client.index(this.pagesUid).deleteDocuments(chunk), 'deleting pages');
  }

  async searchPages(query: string, options: { limit: number; filter?: IndexFilter }): Promise<PageHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const stems = [...new Set(queryTerms(query))];
    if (stems.length === 0 || limit === 0) return [];
    if (options.filter?.pageIds && options.filter.pageIds.length === 0) return [];
    const found = await this.orSearch(this.pagesUid, stems, limit, factFilter(options.filter, 'id'), PAGE_FIELDS);
    return found.map((h) => withFacts({ pageId: Number(h.id), url: h.url ?? '', title: h.title ?? '', score: h.score }, { ...h, published: h.publishedAt ?? null }));
  }

  private get index() {
    return this.connection.client.index<PassageDocument>(this.uid);
  }

  async upsert(docs: readonly IndexDoc[]): Promise<void> {
    for (const doc of docs) {
      if (!Number.isSafeInteger(doc.id)) throw new NotaryError('invalid_request', `index document id must be an integer, got ${doc.id}`);
    }
    // A partial update: the document's vector (written by the vector index) survives a text update.
    for (const chunk of chunks(docs.map(passageDocument), this.connection.options.batchSize)) {
      const existing = await this.existing(chunk.map((d) => d.id));
      await this.connection.updateDocuments(this.uid, chunk, (id) => !existing.has(id), 'adding documents');
    }
    this.words.clear();
  }

  private async existing(ids: readonly number[]): Promise<Set<number>> {
    const { results } = await this.connection.call('reading documents', () => this.index.getDocuments({ filter: idsFilter(ids), fields: ['id'], limit: ids.length }));
    return new Set(results.map((r) => Number(r.id)));
  }

  async delete(ids: readonly number[]): Promise<void> {
    const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    for (const chunk of chunks(unique, ID_CHUNK)) await this.connection.wait(this.index.deleteDocuments(chunk), 'deleting documents');
    this.words.clear();
  }

  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const terms = queryTerms(query);
    if (terms.length === 0 || limit === 0) return [];
    const perPage = options.perPageLimit === undefined ? limit : Math.max(1, Math.floor(options.perPageLimit));
    if (options.filter?.pageIds && options.filter.pageIds.length === 0) return [];
    const { hits } = await this.searchOnce(terms, queryPhrases(query), limit, perPage, factFilter(options.filter));
    return selectPerPage(hits, limit, perPage, (hit) => hit.pageId);
  }

  /**
   * Candidates scored, best first, widened until `limit` survive the per-page cap (or every match is in). `terms`: the
   * query's BM25 terms (queryTerms); the engine searches their distinct stems.
   */
  private async searchOnce(
    terms: readonly string[],
    phrases: readonly (readonly string[])[],
    limit: number,
    perPage: number,
    filter: string | undefined,
  ): Promise<{ hits: IndexHit[]; complete: boolean }> {
    const stems = [...new Set(terms)];
    for (let k = perPage >= limit ? limit : limit * 4; ; k = Math.min(MAX_TOTAL_HITS, k * 2)) {
      const found = await this.orSearch(this.uid, stems, k, filter, [...DOC_FIELDS, ...SCORED_FIELDS], phrases.map(phraseKey));
      const hits = await this.rescored(terms, phrases, found);
      const complete = found.length < k;
      if (complete || k >= MAX_TOTAL_HITS || selectPerPage(hits, limit, perPage, (hit) => hit.pageId).length >= limit) return { hits, complete };
    }
  }

  /**
   * Meilisearch's candidates scored by notary's BM25 (bm25.ts), best first (ties in the engine's order); candidates
   * holding none of the stems as notary analyses them are dropped.
   */
  private async rescored(stems: readonly string[], phrases: readonly (readonly string[])[], found: ReadonlyArray<PassageDocument & { score: number }>): Promise<IndexHit[]> {
    if (found.length === 0) return [];
    const docs = found.map(toIndexDoc);
    let averageLength = await this.words.averageLength(this.connection.client, this.uid, (fn) => this.connection.call('sampling lengths', fn));
    if (averageLength === null) averageLength = docs.reduce((a, d) => a + documentLength(d), 0) / docs.length;
    const scores = bm25Scores(stems, found, { documents: this.words.total(this.uid) ?? 0, averageLength, df: (stem) => this.words.df(this.uid, stem) }, phrases);
    return docs
      .map((doc, i) => ({ ...doc, score: scores[i]! }))
      .filter((hit) => hit.score > 0)
      .map((hit, i) => ({ hit, i }))
      .sort((a, b) => b.hit.score - a.hit.score || a.i - b.i)
      .map(({ hit }) => hit);
  }

  /**
   * Documents holding any of the query's words (OR), best first, in one federated request: the stems under
   * Meilisearch's "frequency" matching strategy (every word, then the most frequent dropped first, down to the
   * rarest alone: query-words.ts), beside each stem alone weighted by its rarity (its idf over the sum of the query's),
   * which brings the documents holding only some of the words, the rarer ones first. A document's score is its best
   * weighted ranking score (more of the words, the rarer ones, in the title: higher). The stems are counted once (and
   * remembered), beside the first search that holds them; when the all-words query finds nothing the counts may be
   * stale, and the stems are counted again and the search is sent again without the missing ones.
   */
  private async orSearch(
    uid: string,
    stems: readonly string[],
    k: number,
    filter: string | undefined,
    fields: readonly string[],
    phrases: readonly string[] = [],
  ): Promise<Array<PassageDocument & { score: number }>> {
    const common = { showRankingScore: true, attributesToRetrieve: [...fields], ...(filter ? { filter } : {}) };
    const count = () => this.words.count(this.connection.client, uid, stems, (fn) => this.connection.call('counting query words', fn), phrases);
    let words = this.words.candidates(uid, stems);
    // Stems not counted yet are counted beside the search (their counts weigh the next searches and give BM25 its
    // idf), not before it: the search weighs what is known, 1/n each when a count is missing.
    let counting = (words.length > 1 && !this.words.allCounted(uid, words)) || (phrases.length > 0 && !this.words.allCounted(uid, phrases)) ? count() : null;
    counting?.catch(() => undefined); // awaited below; never an unhandled rejection
    let counted = false;
    for (;;) {
      if (words.length === 0) {
        await counting;
        return [];
      }
      const { hits, fromAllWords, allWords } = await this.federated(uid, words, k, common);
      if (fromAllWords) this.words.sawAll(uid, allWords);
      if (counting) {
        const held = await counting;
        counting = null;
        counted = true;
        // A word no document holds matches nothing under "frequency": searched again without it.
        if (fromAllWords || held.length === words.length) return hits;
        words = held;
        continue;
      }
      // Nothing from the all-words query: fine under a filter when every word is known to be held; otherwise a word
      // may be missing (or have left the index since it was counted), which matches nothing under "frequency".
      if (fromAllWords || counted || (filter !== undefined && this.words.allHeld(uid, words))) return hits;
      words = await count();
      counted = true;
    }
  }

  private async federated(
    uid: string,
    words: readonly string[],
    k: number,
    common: { showRankingScore: boolean; attributesToRetrieve: string[]; filter?: string },
  ): Promise<{ hits: Array<PassageDocument & { score: number }>; fromAllWords: boolean; allWords: readonly string[] }> {
    if (words.length === 1) {
      const response = await this.connection.call('search', () => this.connection.client.index<PassageDocument>(uid).search(words[0]!, { ...common, limit: k }));
      return { hits: response.hits.map((h) => ({ ...h, score: h._rankingScore ?? 0 })), fromAllWords: response.hits.length > 0, allWords: words };
    }
    const weights = this.words.weights(uid, words);
    // Meilisearch reads only the first 10 words of a query: the all-words query holds the 10 rarest (the ones the
    // frequency strategy keeps longest anyway); every word still has its own query.
    const allWords = this.words.rarest(uid, words, ENGINE_QUERY_WORDS);
    const queries = [
      { indexUid: uid, q: allWords.join(' '), matchingStrategy: 'frequency' as const, ...common, federationOptions: { weight: 1 } },
      ...words.map((q, i) => ({ indexUid: uid, q, ...common, federationOptions: { weight: weights[i]! } })),
    ];
    const response = await this.connection.call('search', () => this.connection.client.multiSearch<{ federation: { limit: number }; queries: typeof queries }, PassageDocument>({ federation: { limit: k }, queries }));
    let fromAllWords = false;
    const hits = response.hits.map((h) => {
      const federation = (h as { _federation?: { weightedRankingScore?: number; queriesPosition?: number } })._federation;
      if (federation?.queriesPosition === 0) fromAllWords = true;
      return { ...h, score: federation?.weightedRankingScore ?? h._rankingScore ?? 0 };
    });
    return { hits, fromAllWords, allWords };
  }

  async get(ids: readonly number[]): Promise<IndexDoc[]> {
    const wanted = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    const found = new Map<number, IndexDoc>();
    for (const id of wanted) {
      const recalled = this.connection.recalled(this.uid, id);
      if (recalled) found.set(id, toIndexDoc(recalled));
    }
    for (const chunk of chunks(wanted.filter((id) => !found.has(id)), ID_CHUNK)) {
      const { results } = await this.connection.call('reading documents', () =>
        this.index.getDocuments({ filter: `${idsFilter(chunk)} AND url EXISTS`, fields: [...DOC_FIELDS], limit: chunk.length }),
      );
      for (const d of results) found.set(Number(d.id), toIndexDoc(d));
    }
    return wanted.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
  }

  async stats(): Promise<IndexStats> {
    const counted = await this.connection.call('counting documents', () => this.index.search('', { filter: 'url EXISTS', hitsPerPage: 0, page: 1 }));
    let bytes: number | null = null;
    try {
      bytes = (await this.index.getStats()).rawDocumentDbSize;
    } catch {
      bytes = null; // a search-only key may not read stats
    }
    return { documents: counted.totalHits ?? 0, bytes, backend: this.name };
  }

  /**
   * Rebuilds the whole index from `source` without ever serving a half-built one: the documents go into a fresh
   * index with the same settings, which is swapped with the live one in one task once complete; the old one is then
   * deleted. Vectors of passages that still exist are carried over from the live index.
   */
  async rebuild(
    source: AsyncIterable<readonly IndexDoc[]>,
    onProgress?: (documents: number) => void,
    pages?: AsyncIterable<readonly PageDoc[]>,
  ): Promise<number> {
    const { client } = this.connection;
    const staging = `${this.uid}__rebuild`;
    const pagesStaging = `${this.pagesUid}__rebuild`;
    for (const uid of [staging, pagesStaging]) {
      await client.deleteIndexIfExists(uid).catch((err: unknown) => {
        throw asIndexError(err, 'dropping an old staging index');
      });
    }
    await this.connection.ensureIndex(staging);
    const live = await this.connection.call('reading embedders', () => this.index.getEmbedders());
    if (live && Object.keys(live).length > 0) await this.connection.wait(client.index(staging).updateEmbedders(live), 'copying embedders');
    let written = 0;
    for await (const batch of source) {
      const docs: PassageDocument[] = batch.map(passageDocument);
      const ids = batch.map((d) => d.id);
      const carried = new Map<number, PassageDocument>();
      for (const chunk of chunks(ids, ID_CHUNK)) {
        const { results } = await this.connection.call('reading vectors', () =>
          this.index.getDocuments({ filter: `${idsFilter(chunk)} AND vector_model EXISTS`, fields: ['id', 'vector_model', 'vector_norm'], retrieveVectors: true, limit: chunk.length }),
        );
        for (const r of results) carried.set(Number(r.id), r);
      }
      for (const doc of docs) {
        const old = carried.get(doc.id);
        if (old?.vector_model && old._vectors) {
          doc.vector_model = old.vector_model;
          if (typeof old.vector_norm === 'number') doc.vector_norm = old.vector_norm;
          doc._vectors = Object.fromEntries(
            Object.entries(old._vectors).flatMap(([name, v]) => {
              const embeddings = (v as { embeddings?: number[][] }).embeddings;
              return embeddings?.[0] ? [[name, embeddings[0]]] : [];
            }),
          );
        }
      }
      for (const chunk of chunks(docs, this.connection.options.batchSize)) {
        await this.connection.wait(client.index(staging).addDocuments(chunk), 'adding documents to the staging index');
      }
      written += docs.length;
      onProgress?.(written);
    }
    // The page-level index is rebuilt beside it and swapped in the same task, so the two never disagree.
    if (pages) {
      await this.connection.ensureIndex(pagesStaging, pageIndexSettings());
      for await (const batch of pages) {
        const docs = [...new Map(batch.map((p) => [p.pageId, pageDocument(p)])).values()];
        for (const chunk of chunks(docs, this.connection.options.batchSize)) {
          await this.connection.wait(client.index(pagesStaging).addDocuments(chunk), 'adding pages to the staging index');
        }
      }
    }
    const swaps = [{ indexes: [this.uid, staging] as [string, string], rename: false }];
    if (pages) swaps.push({ indexes: [this.pagesUid, pagesStaging], rename: false });
    await this.connection.wait(client.swapIndexes(swaps), 'swapping the rebuilt index in');
    await this.connection.wait(client.deleteIndex(staging), 'deleting the replaced index');
    if (pages) await this.connection.wait(client.deleteIndex(pagesStaging), 'deleting the replaced page index');
    this.words.clear();
    return written;
  }

  async close(): Promise<void> {}
}
