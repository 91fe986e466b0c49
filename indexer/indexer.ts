import { DEFAULT_COLLECTION_ID } from '../core/index.js';
import type { NotaryConfig } from '../core/index.js';
import { detectPageDates, extractDocument, learnSiteTitleAffixes, type SiteTitleAffixes } from '../extract/index.js';
import type { Embedder } from '../reranker/index.js';
import type { PageAnalysis, PageStore, NewPassage, Page } from '../storage/index.js';
import { cutPassages } from './passages.js';
import { pageLanguage, readPageFacts, translationKey } from './page-facts.js';
import { passageModelText, type IndexDoc, type PageDoc, type SearchIndex } from './search-index.js';
import type { VectorIndex } from './vector-index.js';

export interface IndexerProgress {
  /** index: pages into passages and the full-text index; embed: passages into vectors. */
  phase: 'index' | 'embed';
  indexedPages: number;
  removedPages: number;
  passages: number;
  failed: number;
  /** Passages embedded into the vector index (new ones and any left without a vector of the current model). */
  embedded: number;
  /** Passages without a vector of the current model when embedding started. */
  embedTotal: number;
}

export interface IndexerRunResult extends IndexerProgress {
  ms: number;
  /** Of `ms`, the time spent embedding. */
  embedMs: number;
}

function emptyProgress(): IndexerProgress {
  return { phase: 'index', indexedPages: 0, removedPages: 0, passages: 0, failed: 0, embedded: 0, embedTotal: 0 };
}

/** pino-compatible subset. */
export interface IndexerLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface IndexerDeps {
  pages: PageStore;
  index: SearchIndex;
  /** include_comments: index the reader comments after an article too (default false: the article alone). */
  config: Pick<NotaryConfig['indexer'], 'passage_min_words' | 'passage_max_words'> & { backend?: string; include_comments?: boolean };
  logger?: IndexerLogger;
  /** Dense retrieval: every passage also gets an embedding in `index`, made by `embedder`. */
  vectors?: { index: VectorIndex; embedder: Embedder; batchSize?: number };
}

const consoleLogger: IndexerLogger = {
  warn: (details, message) => console.warn(message, details),
};

/** A page yielding more passages than this is truncated (keeps one page from dominating a batch or a result list). */
export const MAX_PASSAGES_PER_PAGE = 2000;

/**
 * Moves pages from the store into the search index: fetched pages are extracted, cut into passages, stored and
 * indexed; gone pages lose their passages in both places. Extraction failures are counted and the page is marked
 * indexed with no passages, so it is not retried until its content changes.
 */
export class Indexer {
  private readonly logger: IndexerLogger;

  constructor(private readonly deps: IndexerDeps) {
    this.logger = deps.logger ?? consoleLogger;
  }

  async runOnce(
    options: { batchSize?: number; onProgress?: (p: IndexerProgress) => void } = {},
  ): Promise<IndexerRunResult> {
    const started = performance.now();
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? 100));
    const progress = emptyProgress();
    // A page still pending after being handled (say, re-fetched meanwhile) waits for the next run, so a run ends.
    const handled = new Set<number>();
    let stillPending = 0;
    const siteTitles = new Map<string, SiteTitleAffixes>();
    for (;;) {
      const fetched = await this.deps.pages.pendingForIndex(batchSize + stillPending);
      const batch = fetched.filter((p) => !handled.has(p.id));
      stillPending = fetched.length - batch.length;
      if (batch.length === 0) break;
      const docs: IndexDoc[] = [];
      const pageDocs: PageDoc[] = [];
      const staleIds: number[] = [];
      const stalePages: number[] = [];
      const collectionsOf = await this.deps.pages.collectionsOf(batch.filter((p) => p.state !== 'gone').map((p) => p.id));
      for (const page of batch) {
        handled.add(page.id);
        stalePages.push(page.id);
        if (page.state === 'gone') {
          staleIds.push(...(await this.deps.pages.removePassages(page)));
          progress.removedPages++;
          continue;
        }
        staleIds.push(...(await this.deps.pages.passageIdsForPage(page.id)));
        const indexed = this.indexPage(page, await this.siteTitles(page.host, siteTitles));
        const rows = await this.deps.pages.replacePassages(page, indexed?.passages ?? [], indexed?.analysis);
        if (indexed === null) {
          progress.failed++;
          continue;
        }
        const facts = {
          collections: collectionsOf.get(page.id) ?? [DEFAULT_COLLECTION_ID],
          ...(indexed.publishedAt ? { publishedAt: indexed.publishedAt } : {}),
          ...(indexed.analysis.language ? { language: indexed.analysis.language } : {}),
          ...(indexed.analysis.navigation ? { navigation: true } : {}),
          ...(indexed.analysis.translation_key ? { translationKey: indexed.analysis.translation_key } : {}),
        };
        for (const row of rows) {
          docs.push({ id: row.id, pageId: page.id, url: row.url, title: row.title, headingPath: row.heading_path, text: row.text, ...facts });
        }
        if (rows.length > 0) pageDocs.push({ ...indexed.page, ...facts });
        progress.indexedPages++;
        progress.passages += rows.length;
      }
      await this.deps.index.delete(staleIds);
      await this.deps.index.upsert(docs);
      await this.deps.index.deletePages(stalePages);
      await this.deps.index.upsertPages(pageDocs);
      await this.deps.vectors?.index.delete(staleIds);
      options.onProgress?.({ ...progress });
    }
    const embedStarted = performance.now();
    await this.embedPending(options.onProgress, progress);
    const done = performance.now();
    return { ...progress, ms: Math.round(done - started), embedMs: Math.round(done - embedStarted) };
  }

  /**
   * Embeds every stored passage that has no vector of the current model: the ones just indexed, and all of them
   * after the model changes. Stops when a round finds nothing it has not already tried, so a vector the index does
   * not keep cannot loop forever.
   */
  async embedPending(
    onProgress?: (p: IndexerProgress) => void,
    progress: IndexerProgress = emptyProgress(),
  ): Promise<number> {
    const vectors = this.deps.vectors;
    if (!vectors) return 0;
    const before = progress.embedded;
    const batchSize = Math.max(1, Math.floor(vectors.batchSize ?? 64));
    const [{ passages: passageCount }, stats] = await Promise.all([this.deps.pages.counts(), vectors.index.stats()]);
    progress.phase = 'embed';
    progress.embedTotal = Math.max(0, passageCount - stats.vectors);
    const tried = new Set<number>();
    for (;;) {
      const ids = (await vectors.index.missing(batchSize)).filter((id) => !tried.has(id));
      if (ids.length === 0) break;
      for (const id of ids) tried.add(id);
      const passages = await this.deps.pages.passagesByIds(ids);
      if (passages.length === 0) continue;
      // The publication dates the index holds: the vector index keeps them, and the host, for date and domain filters.
      const published = new Map((await this.deps.index.get(ids)).map((doc) => [doc.id, doc.publishedAt]));
      // And the collections of their pages, which collection filters read inside a vector search.
      const collections = await this.deps.pages.collectionsOf([...new Set(passages.map((p) => p.page_id))]);
      const embeddings = await vectors.embedder.embed(
        passages.map((p) => passageModelText({ title: p.title, headingPath: p.heading_path, text: p.text })),
      );
      await vectors.index.upsert(
        passages.map((p, i) => {
          const publishedAt = published.get(p.id);
          const inCollections = collections.get(p.page_id);
          return { id: p.id, pageId: p.page_id, url: p.url, ...(publishedAt ? { publishedAt } : {}), ...(inCollections ? { collections: inCollections } : {}), vector: embeddings[i] ?? new Float32Array(vectors.embedder.dimensions) };
        }),
      );
      progress.embedded += passages.length;
      onProgress?.({ ...progress });
    }
    return progress.embedded - before;
  }

  /** The title prefixes and suffixes a host's pages share, learnt once per run from the titles stored for it. */
  private async siteTitles(host: string, cache: Map<string, SiteTitleAffixes>): Promise<SiteTitleAffixes> {
    let affixes = cache.get(host);
    if (!affixes) cache.set(host, (affixes = learnSiteTitleAffixes(await this.deps.pages.titlesOfHost(host))));
    return affixes;
  }

  /** The page's passages, its page-level document and what was decided about it; null when extraction failed. */
  private indexPage(
    page: Page,
    siteTitles: SiteTitleAffixes,
  ): { passages: Omit<NewPassage, 'page_id'>[]; page: PageDoc; analysis: PageAnalysis; publishedAt?: string } | null {
    const emptyAnalysis: PageAnalysis = { language: null, translation_key: null, navigation: false };
    if (!page.html) return { passages: [], page: { pageId: page.id, url: page.url, title: page.title ?? page.url, headings: '', text: '' }, analysis: emptyAnalysis };
    try {
      const url = page.final_url || page.url;
      const doc = extractDocument(page.html, url, { siteTitles, includeComments: this.deps.config.include_comments === true });
      const title = doc.title || page.title || page.url;
      const facts = readPageFacts(page.html, url);
      const language = pageLanguage(facts, url, page.content_language ?? null, doc.text);
      const analysis: PageAnalysis = {
        language,
        translation_key: translationKey(page.url, language, facts.alternates),
        navigation: facts.navigation.navigation,
      };
      const { passage_min_words: minWords, passage_max_words: maxWords } = this.deps.config;
      const passages = cutPassages(doc, { minWords, maxWords })
        .slice(0, MAX_PASSAGES_PER_PAGE)
        .map((p) => ({
          ordinal: p.ordinal,
          url: page.url,
          title,
          heading_path: p.headingPath,
          text: p.text,
          word_count: p.wordCount,
        }));
      const headings = doc.blocks.filter((b) => b.type === 'heading').map((b) => b.text).join('\n');
      // What the page says of its publication (JSON-LD, meta tags, the article header's date, a dated URL): the date
      // filters' fact. Last-Modified and sitemaps date a file's changes, not its publication, so they are not read here.
      const published = detectPageDates({ html: page.html, url }).publishedAt?.value;
      return { passages, page: { pageId: page.id, url: page.url, title, headings, text: doc.text }, analysis, ...(published ? { publishedAt: published } : {}) };
    } catch (err) {
      this.logger.warn({ url: page.url, pageId: page.id, err: err instanceof Error ? err.message : String(err) }, 'extraction failed; page indexed without passages');
      return null;
    }
  }
}
