import { createHash } from 'node:crypto';
import { Meilisearch, MeilisearchApiError, type EnqueuedTaskPromise, type Settings, type Task } from 'meilisearch';
import { NotaryError } from '../../core/errors.js';
import type { Storage } from '../../storage/db.js';
import { primaryLanguage } from '../../core/language.js';
import { pathWords } from './url-path.js';
import type { IndexDoc, IndexFilter, IndexHit, IndexSearchOptions, IndexStats, PageDoc, PageHit, SearchIndex } from '../search-index.js';
import type { PassageVector, VectorHit, VectorIndex, VectorIndexStats, VectorSearchOptions } from '../vector-index.js';
import { QUERY_STOPWORDS, queryStems, stemmedText, stemWord } from './analysis.js';
import { selectPerPage } from '../page-cap.js';
import { checkVector, vectorSearchBounds } from '../vector-input.js';
import { dot, existingPassageIds, missingPassages, widenedSearch } from './shared.js';

export interface MeilisearchOptions {
  url: string;
  /** The master key, an admin key (crawler and indexer), or a search-only key (API nodes). */
  apiKey?: string | undefined;
  /** Index uid of the passages (and their vectors). */
  index: string;
  /** How long a write waits for its task to finish before failing with index_unavailable. */
  taskTimeoutMs: number;
  /** Timeout of one HTTP request. */
  requestTimeoutMs: number;
  /** Documents per write task. */
  batchSize: number;
}

/** Meilisearch considers only the first 10 words of a query. */
const MAX_QUERY_WORDS = 10;
/** Search results Meilisearch may return for one query (pagination.maxTotalHits, set by the settings). */
const MAX_TOTAL_HITS = 10_000;
/** Ids per `id IN [...]` filter. */
const ID_CHUNK = 1000;

/** Stored fields a hit needs; the analysed `s_*` fields are for searching only. */
const DOC_FIELDS = ['id', 'pageId', 'url', 'title', 'headingPath', 'text', 'language', 'navigation', 'translationKey'] as const;
/** Stored fields of a page hit (the page-level index, `<index>__pages`, one document per page, id = page id). */
const PAGE_FIELDS = ['id', 'url', 'title', 'language', 'navigation', 'translationKey'] as const;

/** The page's facts every document carries: what filters match (language by primary subtag). */
interface FactFields {
  language?: string;
  language_primary?: string;
  navigation?: boolean;
  translationKey?: string;
}

interface PassageDocument extends FactFields {
  id: number;
  pageId?: number;
  url?: string;
  title?: string;
  headingPath?: string;
  text?: string;
  /** `<model>|<dimensions>` of the vector this document holds, absent without one. */
  vector_model?: string | null;
  _vectors?: Record<string, unknown>;
  _rankingScore?: number;
}

/**
 * The settings notary needs on its passage index, applied idempotently at start by a process with an admin key.
 * Search runs over Porter stems computed by notary (Meilisearch does not stem), title before headings before body
 * (the `attribute` rule: the order FTS5's 4:2:1 weights give), typo tolerance for longer words only, the query
 * stopwords as stop words, and no prefix search (a stem is matched whole, as in FTS5).
 */
export function passageIndexSettings(): Settings {
  return {
    searchableAttributes: ['s_title', 's_headings', 's_text'],
    displayedAttributes: [...DOC_FIELDS, 'vector_model'],
    filterableAttributes: ['id', 'pageId', 'url', 'vector_model', ...FACT_FILTERS],
    sortableAttributes: [],
    rankingRules: ['words', 'typo', 'proximity', 'attribute', 'exactness'],
    typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 }, disableOnNumbers: true },
    stopWords: [...new Set([...QUERY_STOPWORDS].map(stemWord))].sort(),
    prefixSearch: 'disabled',
    proximityPrecision: 'byWord',
    pagination: { maxTotalHits: MAX_TOTAL_HITS },
  };
}

const FACT_FILTERS = ['language_primary', 'navigation', 'translationKey'];

/** The page-level index: whole pages, title before headings before URL path words before body. */
export function pageIndexSettings(): Settings {
  return {
    ...passageIndexSettings(),
    searchableAttributes: ['s_title', 's_headings', 's_path', 's_text'],
    displayedAttributes: [...PAGE_FIELDS],
    filterableAttributes: ['id', ...FACT_FILTERS],
  };
}

function factFields(doc: { language?: string | undefined; navigation?: boolean | undefined; translationKey?: string | undefined }): FactFields {
  return {
    ...(doc.language ? { language: doc.language, language_primary: primaryLanguage(doc.language.toLowerCase()) } : {}),
    navigation: doc.navigation === true,
    ...(doc.translationKey ? { translationKey: doc.translationKey } : {}),
  };
}

function withFacts<T extends object>(base: T, d: FactFields): T & Pick<IndexDoc, 'language' | 'navigation' | 'translationKey'> {
  return {
    ...base,
    ...(d.language ? { language: d.language } : {}),
    ...(d.navigation ? { navigation: true } : {}),
    ...(d.translationKey ? { translationKey: d.translationKey } : {}),
  };
}

/** A Meilisearch filter expression of an IndexFilter (pages of unknown language pass a language filter, as in FTS5). */
export function factFilter(filter: IndexFilter | undefined, pageField = 'pageId'): string | undefined {
  const parts: string[] = [];
  if (filter?.languages && filter.languages.length > 0) {
    const wanted = [...new Set(filter.languages.map((l) => primaryLanguage(l.toLowerCase())))];
    parts.push(`(language_primary IN [${wanted.map(filterString).join(', ')}] OR language_primary NOT EXISTS)`);
  }
  if (filter?.excludeNavigation) parts.push('navigation != true');
  if (filter?.translationKey) parts.push(`translationKey = ${filterString(filter.translationKey)}`);
  if (filter?.pageIds) parts.push(`${pageField} IN [${filter.pageIds.filter((id) => Number.isSafeInteger(id)).join(', ')}]`);
  return parts.length > 0 ? parts.join(' AND ') : undefined;
}

function asIndexError(err: unknown, what: string): NotaryError {
  if (err instanceof NotaryError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new NotaryError('index_unavailable', `Meilisearch ${what} failed: ${message}`);
}

function filterString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function idsFilter(ids: readonly number[]): string {
  return `id IN [${ids.join(', ')}]`;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** One Meilisearch server and the passage index on it: the client, task waiting, settings, swaps and keys. */
export class MeilisearchConnection {
  readonly client: Meilisearch;

  constructor(readonly options: MeilisearchOptions) {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(options.index)) throw new NotaryError('invalid_config', `Meilisearch index uid "${options.index}" must be letters, digits, - and _`);
    this.client = new Meilisearch({
      host: options.url,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      timeout: options.requestTimeoutMs,
      defaultWaitOptions: { timeout: options.taskTimeoutMs, interval: 25 },
    });
  }

  /** Waits for a task within task_timeout_ms; a failed or timed-out task is index_unavailable. */
  async wait(enqueued: EnqueuedTaskPromise, what: string): Promise<Task> {
    let task: Task;
    try {
      task = await enqueued.waitTask({ timeout: this.options.taskTimeoutMs, interval: 25 });
    } catch (err) {
      throw asIndexError(err, what);
    }
    if (task.status !== 'succeeded') {
      throw new NotaryError('index_unavailable', `Meilisearch ${what} task ${task.uid} ${task.status}: ${task.error?.message ?? 'no reason given'}`);
    }
    return task;
  }

  async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw asIndexError(err, what);
    }
  }

  /**
   * Creates the index when missing and brings its settings to `passageIndexSettings()`, changing only what differs
   * (an unchanged setting queues no task, so every node may run this at start). Returns false when the key may not
   * read settings (a search-only key): such a process leaves the settings to an admin process.
   */
  async ensureIndex(uid: string = this.options.index, wanted: Settings = passageIndexSettings()): Promise<boolean> {
    const index = this.client.index(uid);
    let current: Settings;
    try {
      current = await index.getSettings();
    } catch (err) {
      if (err instanceof MeilisearchApiError && err.cause?.code === 'index_not_found') {
        // Processes starting together may both create it: the later task fails with index_already_exists, which is
        // what it wanted anyway.
        const created = await this.call(`creating index ${uid}`, () => this.client.createIndex(uid, { primaryKey: 'id' }).waitTask({ timeout: this.options.taskTimeoutMs, interval: 25 }));
        if (created.status !== 'succeeded' && created.error?.code !== 'index_already_exists') {
          throw new NotaryError('index_unavailable', `Meilisearch creating index ${uid} task ${created.uid} ${created.status}: ${created.error?.message ?? 'no reason given'}`);
        }
        current = await this.call('reading settings', () => index.getSettings());
      } else if (err instanceof MeilisearchApiError && (err.response.status === 403 || err.response.status === 401)) {
        return false;
      } else {
        throw asIndexError(err, 'reading settings');
      }
    }
    const changed: Settings = {};
    for (const [key, value] of Object.entries(wanted) as Array<[keyof Settings, unknown]>) {
      if (!sameSetting(current[key], value)) (changed as Record<string, unknown>)[key] = value;
    }
    if (Object.keys(changed).length > 0) await this.wait(index.updateSettings(changed), `updating settings of ${uid}`);
    return true;
  }

  /** Adds a user-provided embedder to the index when it is not there yet. */
  async ensureEmbedder(name: string, dimensions: number, uid: string = this.options.index): Promise<void> {
    const index = this.client.index(uid);
    const embedders = await this.call('reading embedders', () => index.getEmbedders());
    const existing = embedders?.[name];
    if (existing && existing.source === 'userProvided' && existing.dimensions === dimensions) return;
    // Meilisearch refuses a user-provided embedder while any document lacks a vector (or a null) for it: the
    // documents get their null first. A document added between the two tasks fails the second; then again.
    for (let attempt = 0; ; attempt++) {
      for (let offset = 0; ; offset += MAX_TOTAL_HITS) {
        const { results } = await this.call('reading document ids', () => index.getDocuments({ fields: ['id'], limit: MAX_TOTAL_HITS, offset }));
        if (results.length > 0) {
          const nulls = results.map((r) => ({ id: r['id'] as number, _vectors: { [name]: null } }));
          for (const chunk of chunks(nulls, this.options.batchSize)) await this.wait(index.updateDocuments(chunk), `preparing documents for embedder ${name}`);
        }
        if (results.length < MAX_TOTAL_HITS) break;
      }
      try {
        await this.wait(index.updateEmbedders({ [name]: { source: 'userProvided', dimensions } }), `adding embedder ${name}`);
        break;
      } catch (err) {
        if (attempt >= 2 || !(err instanceof NotaryError) || !/no vectors provided/.test(err.message)) throw err;
      }
    }
    this.embedders.delete(uid);
  }

  private readonly embedders = new Map<string, Promise<string[]>>();

  /** Names of the index's embedders (cached; `fresh` reads them again, e.g. after another process added one). */
  embedderNames(uid: string = this.options.index, fresh = false): Promise<string[]> {
    let names = fresh ? undefined : this.embedders.get(uid);
    if (!names) {
      names = this.call('reading embedders', async () => Object.keys((await this.client.index(uid).getEmbedders()) ?? {}));
      this.embedders.set(uid, names);
      names.catch(() => this.embedders.delete(uid));
    }
    return names;
  }

  /**
   * A partial update of documents. Meilisearch needs every user-provided embedder named on a new document (a vector
   * or null); `vectors` gives a document's own, the others are set to null on new documents only (`isNew`), so a
   * text update keeps the vector a document has. Retried once with a fresh embedder list when another process added
   * an embedder meanwhile.
   */
  async updateDocuments(uid: string, docs: readonly object[], isNew: (id: number) => boolean, what: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const names = await this.embedderNames(uid, attempt > 0);
      const prepared = docs.map((doc) => {
        const fields = doc as Record<string, unknown>;
        const own = (fields['_vectors'] as Record<string, unknown> | undefined) ?? undefined;
        if (!own && !isNew(Number(fields['id']))) return fields;
        const vectors: Record<string, unknown> = Object.fromEntries(names.map((n) => [n, null]));
        return { ...doc, _vectors: { ...vectors, ...own } };
      });
      try {
        await this.wait(this.client.index(uid).updateDocuments(prepared), what);
        return;
      } catch (err) {
        if (attempt > 0 || !(err instanceof NotaryError) || !/no vectors provided/.test(err.message)) throw err;
      }
    }
  }

  /**
   * A key for API nodes: search and document reads on notary's passage index (and the index a rebuild swaps in),
   * nothing else. Its uid is fixed, so asking again returns the same key.
   */
  async searchKey(): Promise<{ uid: string; key: string }> {
    const uid = uuidFrom(`notary-search-key:${this.options.index}`);
    try {
      const existing = await this.client.getKey(uid);
      return { uid, key: existing.key };
    } catch (err) {
      if (!(err instanceof MeilisearchApiError && err.response.status === 404)) throw asIndexError(err, 'reading keys');
    }
    const created = await this.call('creating the search key', () =>
      this.client.createKey({
        uid,
        name: `notary search (${this.options.index})`,
        description: 'notary API nodes: search and read passages, no writes',
        actions: ['search', 'documents.get'],
        indexes: [this.options.index, `${this.options.index}__*`],
        expiresAt: null,
      }),
    );
    return { uid, key: created.key };
  }

  async healthy(): Promise<boolean> {
    try {
      return await this.client.isHealthy();
    } catch {
      return false;
    }
  }
}

/** A stable UUID (v4 layout) derived from a name, for Meilisearch key uids. */
function uuidFrom(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function sameSetting(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameSetting(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    // Only the keys notary sets are compared (the server adds defaults of its own).
    return Object.entries(b).every(([k, v]) => sameSetting((a as Record<string, unknown>)[k], v));
  }
  return a === b;
}

/** The searchable form of a passage: its stored fields plus the Porter stems the index searches. */
export function passageDocument(doc: IndexDoc): PassageDocument & { s_title: string; s_headings: string; s_text: string } {
  return {
    id: doc.id,
    pageId: doc.pageId,
    url: doc.url,
    title: doc.title,
    headingPath: doc.headingPath,
    text: doc.text,
    ...factFields(doc),
    s_title: stemmedText(doc.title),
    s_headings: stemmedText(doc.headingPath),
    s_text: stemmedText(doc.text),
  };
}

/** The searchable form of a whole page (the page-level index). */
export function pageDocument(page: PageDoc) {
  return {
    id: page.pageId,
    url: page.url,
    title: page.title,
    ...factFields(page),
    s_title: stemmedText(page.title),
    s_headings: stemmedText(page.headings),
    s_path: stemmedText(pathWords(page.url)),
    s_text: stemmedText(page.text),
  };
}

function toIndexDoc(d: PassageDocument): IndexDoc {
  return withFacts({ id: Number(d.id), pageId: Number(d.pageId), url: d.url ?? '', title: d.title ?? '', headingPath: d.headingPath ?? '', text: d.text ?? '' }, d);
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
  }

  async deletePages(pageIds: readonly number[]): Promise<void> {
    const unique = [...new Set(pageIds)].filter((id) => Number.isSafeInteger(id));
    for (const chunk of chunks(unique, ID_CHUNK)) await this.connection.wait(this.connection.client.index(this.pagesUid).deleteDocuments(chunk), 'deleting pages');
  }

  async searchPages(query: string, options: { limit: number; filter?: IndexFilter }): Promise<PageHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const stems = typeof query === 'string' ? queryStems(query, MAX_QUERY_WORDS) : [];
    if (stems.length === 0 || limit === 0) return [];
    if (options.filter?.pageIds && options.filter.pageIds.length === 0) return [];
    const found = await this.orSearch(this.pagesUid, stems, limit, factFilter(options.filter, 'id'), PAGE_FIELDS);
    return found.map((h) => withFacts({ pageId: Number(h.id), url: h.url ?? '', title: h.title ?? '', score: h.score }, h));
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
  }

  private async existing(ids: readonly number[]): Promise<Set<number>> {
    const { results } = await this.connection.call('reading documents', () => this.index.getDocuments({ filter: idsFilter(ids), fields: ['id'], limit: ids.length }));
    return new Set(results.map((r) => Number(r.id)));
  }

  async delete(ids: readonly number[]): Promise<void> {
    const unique = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    for (const chunk of chunks(unique, ID_CHUNK)) await this.connection.wait(this.index.deleteDocuments(chunk), 'deleting documents');
  }

  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const limit = Math.floor(options.limit);
    if (!Number.isFinite(limit) || limit < 0) throw new NotaryError('invalid_request', `search limit must be >= 0, got ${options.limit}`);
    const stems = typeof query === 'string' ? queryStems(query, MAX_QUERY_WORDS) : [];
    if (stems.length === 0 || limit === 0) return [];
    const perPage = options.perPageLimit === undefined ? limit : Math.max(1, Math.floor(options.perPageLimit));
    if (options.filter?.pageIds && options.filter.pageIds.length === 0) return [];
    const filter = factFilter(options.filter);
    for (let k = perPage >= limit ? limit : limit * 4; ; k = Math.min(MAX_TOTAL_HITS, k * 2)) {
      const found = await this.orSearch(this.uid, stems, k, filter, DOC_FIELDS);
      const hits = found.map((h) => ({ ...toIndexDoc(h), score: h.score }));
      const selected = selectPerPage(hits, limit, perPage, (hit) => hit.pageId);
      if (selected.length >= limit || hits.length < k || k >= MAX_TOTAL_HITS) return selected;
    }
  }

  /**
   * Documents holding any of the query's words (OR), best first. Meilisearch's matching strategies drop query words
   * in a fixed order ("last": from the end, "frequency": the most frequent first), so a document holding only words
   * dropped early is never matched. One federated request asks each rotation of the words under "last" (every word
   * leads once); a document's score is its best ranking score over the rotations, so holding more of the words
   * (next to each other, in the title) still ranks higher.
   */
  private async orSearch(
    uid: string,
    stems: readonly string[],
    k: number,
    filter: string | undefined,
    fields: readonly string[],
  ): Promise<Array<PassageDocument & { score: number }>> {
    const common = { matchingStrategy: 'last' as const, showRankingScore: true, attributesToRetrieve: [...fields], ...(filter ? { filter } : {}) };
    if (stems.length === 1) {
      const response = await this.connection.call('search', () => this.connection.client.index<PassageDocument>(uid).search(stems[0]!, { ...common, limit: k }));
      return response.hits.map((h) => ({ ...h, score: h._rankingScore ?? 0 }));
    }
    const queries = stems.map((_, i) => ({ indexUid: uid, q: [...stems.slice(i), ...stems.slice(0, i)].join(' '), ...common, federationOptions: { weight: 1 } }));
    const response = await this.connection.call('search', () => this.connection.client.multiSearch<{ federation: { limit: number }; queries: typeof queries }, PassageDocument>({ federation: { limit: k }, queries }));
    return response.hits.map((h) => {
      const federation = (h as { _federation?: { weightedRankingScore?: number } })._federation;
      return { ...h, score: federation?.weightedRankingScore ?? h._rankingScore ?? 0 };
    });
  }

  async get(ids: readonly number[]): Promise<IndexDoc[]> {
    const wanted = [...new Set(ids)].filter((id) => Number.isSafeInteger(id));
    const found = new Map<number, IndexDoc>();
    for (const chunk of chunks(wanted, ID_CHUNK)) {
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
          this.index.getDocuments({ filter: `${idsFilter(chunk)} AND vector_model EXISTS`, fields: ['id', 'vector_model'], retrieveVectors: true, limit: chunk.length }),
        );
        for (const r of results) carried.set(Number(r.id), r);
      }
      for (const doc of docs) {
        const old = carried.get(doc.id);
        if (old?.vector_model && old._vectors) {
          doc.vector_model = old.vector_model;
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
    return written;
  }

  async close(): Promise<void> {}
}

export interface MeilisearchVectorIndexOptions {
  model: string;
  dimensions: number;
}

/**
 * Passage vectors in the same Meilisearch documents as the passages, under a user-provided embedder named after
 * the model (so two models never mix), searched by Meilisearch's vector store (HNSW, approximate) through its hybrid
 * search with semanticRatio 1. The candidates are rescored exactly from their stored vectors, and passages that no
 * longer exist in storage are dropped (and their vectors removed), as the SQL cascade does for the other backends.
 */
export class MeilisearchVectorIndex implements VectorIndex {
  readonly name = 'meilisearch';
  readonly model: string;
  readonly dimensions: number;
  private readonly embedder: string;
  private readonly tag: string;

  private constructor(
    private readonly connection: MeilisearchConnection,
    private readonly storage: Storage,
    options: MeilisearchVectorIndexOptions,
  ) {
    if (!options.model) throw new NotaryError('invalid_config', 'vector index needs a model name');
    if (!Number.isInteger(options.dimensions) || options.dimensions <= 0) {
      throw new NotaryError('invalid_config', `vector dimensions must be a positive integer, got ${options.dimensions}`);
    }
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.tag = `${options.model}|${options.dimensions}`;
    this.embedder = `v_${createHash('sha256').update(this.tag).digest('hex').slice(0, 16)}`;
  }

  static async open(connection: MeilisearchConnection, storage: Storage, options: MeilisearchVectorIndexOptions): Promise<MeilisearchVectorIndex> {
    const index = new MeilisearchVectorIndex(connection, storage, options);
    if (await connection.ensureIndex()) await connection.ensureEmbedder(index.embedder, index.dimensions);
    return index;
  }

  private get index() {
    return this.connection.client.index<PassageDocument>(this.connection.options.index);
  }

  private get ofThisModel(): string {
    return `vector_model = ${filterString(this.tag)}`;
  }

  async upsert(items: readonly PassageVector[]): Promise<void> {
    const byId = new Map<number, PassageVector>();
    items.forEach((item, i) => {
      if (!Number.isSafeInteger(item.id) || !Number.isSafeInteger(item.pageId)) throw new NotaryError('invalid_request', `vector ${i}: id and pageId must be integers`);
      checkVector(item.vector, this.dimensions, `vector for passage ${item.id}`);
      byId.set(item.id, item);
    });
    // One vector per passage, as in the SQL backends: writing this model's vector clears any other model's.
    const docs = [...byId.values()].map((item) => ({
      id: item.id,
      pageId: item.pageId,
      vector_model: this.tag,
      _vectors: { [this.embedder]: Array.from(item.vector) },
    }));
    for (const chunk of chunks(docs, this.connection.options.batchSize)) await this.connection.updateDocuments(this.connection.options.index, chunk, () => true, 'adding vectors');
  }

  /** Removes the vectors of these passages, whichever model wrote them (the passages' text stays). */
  async delete(ids: readonly number[]): Promise<void> {
    for (const id of ids) if (!Number.isSafeInteger(id)) throw new NotaryError('invalid_request', `passage id must be an integer, got ${id}`);
    const unique = [...new Set(ids)];
    if (unique.length === 0) return;
    const embedders = await this.connection.embedderNames(this.connection.options.index, true);
    for (const chunk of chunks(unique, ID_CHUNK)) {
      const { results } = await this.connection.call('reading documents', () =>
        this.index.getDocuments({ filter: `${idsFilter(chunk)} AND vector_model EXISTS`, fields: ['id'], limit: chunk.length }),
      );
      if (results.length === 0) continue;
      const cleared = results.map((r) => ({ id: Number(r.id), vector_model: null, _vectors: Object.fromEntries(embedders.map((name) => [name, null])) }));
      await this.connection.wait(this.index.updateDocuments(cleared), 'removing vectors');
    }
  }

  async vectors(ids: readonly number[]): Promise<Map<number, Float32Array>> {
    for (const id of ids) if (!Number.isSafeInteger(id)) throw new NotaryError('invalid_request', `passage id must be an integer, got ${id}`);
    const out = new Map<number, Float32Array>();
    for (const chunk of chunks([...new Set(ids)], ID_CHUNK)) {
      const { results } = await this.connection.call('reading vectors', () =>
        this.index.getDocuments({ filter: `${idsFilter(chunk)} AND ${this.ofThisModel}`, fields: ['id'], retrieveVectors: true, limit: chunk.length }),
      );
      for (const r of results) {
        const v = this.vectorOf(r);
        if (v) out.set(Number(r.id), v);
      }
    }
    return out;
  }

  private vectorOf(doc: PassageDocument): Float32Array | null {
    const entry = doc._vectors?.[this.embedder] as { embeddings?: number[][] } | undefined;
    const embedding = entry?.embeddings?.[0];
    return embedding && embedding.length === this.dimensions ? Float32Array.from(embedding) : null;
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorHit[]> {
    const query = checkVector(vector, this.dimensions, 'query vector');
    const { limit, perPage } = vectorSearchBounds(options);
    if (limit <= 0 || (options.pageIds && options.pageIds.length === 0)) return [];
    const asked = Array.from(query);
    return widenedSearch(limit, perPage, MAX_TOTAL_HITS, async (k) => {
      const response = await this.connection.call('vector search', () =>
        this.index.search('', {
          vector: asked,
          hybrid: { embedder: this.embedder, semanticRatio: 1 },
          filter: options.pageIds ? `${this.ofThisModel} AND pageId IN [${options.pageIds.filter((id) => Number.isSafeInteger(id)).join(', ')}]` : this.ofThisModel,
          limit: k,
          retrieveVectors: true,
          attributesToRetrieve: ['id', 'pageId'],
        }),
      );
      const candidates: VectorHit[] = [];
      for (const h of response.hits) {
        const v = this.vectorOf(h);
        if (v) candidates.push({ id: Number(h.id), pageId: Number(h.pageId), score: dot(v, query) });
      }
      // Passages removed from storage behind the index's back (the SQL backends' cascade) are dropped here.
      const alive = await existingPassageIds(this.storage, candidates.map((c) => c.id));
      const gone = candidates.filter((c) => !alive.has(c.id)).map((c) => c.id);
      if (gone.length > 0) await this.delete(gone);
      return { candidates: candidates.filter((c) => alive.has(c.id)), exhausted: response.hits.length < k };
    });
  }

  async missing(limit: number): Promise<number[]> {
    return missingPassages(this.storage, limit, async (ids) => {
      const { results } = await this.connection.call('reading documents', () =>
        this.index.getDocuments({ filter: `${idsFilter(ids)} AND ${this.ofThisModel}`, fields: ['id'], limit: ids.length }),
      );
      return new Set(results.map((r) => Number(r.id)));
    });
  }

  /** Vectors of this model whose passage exists in storage (a full pass over the ids), and vectors of other models. */
  async stats(): Promise<VectorIndexStats> {
    const ids = await this.idsWhere(this.ofThisModel);
    const alive = await existingPassageIds(this.storage, ids);
    const others = await this.connection.call('counting vectors', () =>
      this.index.search('', { filter: `vector_model EXISTS AND NOT ${this.ofThisModel}`, hitsPerPage: 0, page: 1 }),
    );
    return { backend: this.name, model: this.model, dimensions: this.dimensions, vectors: alive.size, stale: others.totalHits ?? 0 };
  }

  private async idsWhere(filter: string): Promise<number[]> {
    const out: number[] = [];
    for (let offset = 0; ; offset += MAX_TOTAL_HITS) {
      const { results } = await this.connection.call('reading document ids', () => this.index.getDocuments({ filter, fields: ['id'], limit: MAX_TOTAL_HITS, offset }));
      for (const r of results) out.push(Number(r.id));
      if (results.length < MAX_TOTAL_HITS) return out;
    }
  }

  async close(): Promise<void> {}
}
