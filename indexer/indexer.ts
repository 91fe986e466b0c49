import type { NotaryConfig } from '../core/config.js';
import { extractDocument } from '../extract/extract.js';
import type { PageStore } from '../storage/pages.js';
import type { NewPassage, Page } from '../storage/schema.js';
import { cutPassages } from './passages.js';
import type { IndexDoc, SearchIndex } from './search-index.js';

export interface IndexerProgress {
  indexedPages: number;
  removedPages: number;
  passages: number;
  failed: number;
}

export interface IndexerRunResult extends IndexerProgress {
  ms: number;
}

/** pino-compatible subset. */
export interface IndexerLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface IndexerDeps {
  pages: PageStore;
  index: SearchIndex;
  config: NotaryConfig['indexer'];
  logger?: IndexerLogger;
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
    const progress: IndexerProgress = { indexedPages: 0, removedPages: 0, passages: 0, failed: 0 };
    // A page still pending after being handled (say, re-fetched meanwhile) waits for the next run, so a run ends.
    const handled = new Set<number>();
    let stillPending = 0;
    for (;;) {
      const fetched = await this.deps.pages.pendingForIndex(batchSize + stillPending);
      const batch = fetched.filter((p) => !handled.has(p.id));
      stillPending = fetched.length - batch.length;
      if (batch.length === 0) break;
      const docs: IndexDoc[] = [];
      const staleIds: number[] = [];
      for (const page of batch) {
        handled.add(page.id);
        if (page.state === 'gone') {
          staleIds.push(...(await this.deps.pages.removePassages(page)));
          progress.removedPages++;
          continue;
        }
        staleIds.push(...(await this.deps.pages.passageIdsForPage(page.id)));
        const passages = this.passagesFor(page);
        const rows = await this.deps.pages.replacePassages(page, passages ?? []);
        if (passages === null) {
          progress.failed++;
          continue;
        }
        for (const row of rows) {
          docs.push({ id: row.id, pageId: page.id, url: row.url, title: row.title, headingPath: row.heading_path, text: row.text });
        }
        progress.indexedPages++;
        progress.passages += rows.length;
      }
      await this.deps.index.delete(staleIds);
      await this.deps.index.upsert(docs);
      options.onProgress?.({ ...progress });
    }
    return { ...progress, ms: Math.round(performance.now() - started) };
  }

  /** The page's passages, or null when extraction failed. */
  private passagesFor(page: Page): Omit<NewPassage, 'page_id'>[] | null {
    if (!page.html) return [];
    try {
      const doc = extractDocument(page.html, page.final_url || page.url);
      const title = doc.title || page.title || page.url;
      const { passage_min_words: minWords, passage_max_words: maxWords } = this.deps.config;
      return cutPassages(doc, { minWords, maxWords })
        .slice(0, MAX_PASSAGES_PER_PAGE)
        .map((p) => ({
          ordinal: p.ordinal,
          url: page.url,
          title,
          heading_path: p.headingPath,
          text: p.text,
          word_count: p.wordCount,
        }));
    } catch (err) {
      this.logger.warn({ url: page.url, pageId: page.id, err: err instanceof Error ? err.message : String(err) }, 'extraction failed; page indexed without passages');
      return null;
    }
  }
}
