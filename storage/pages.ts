import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { CollectionStore, joinCollection } from './collections.js';
import { nowIso } from './db.js';
import type { Database, NewPassage, Page, Passage } from './schema.js';

/** What the crawler knows of a page it just fetched. */
export type FetchedPage = Omit<
  Page,
  'id' | 'state' | 'indexed_hash' | 'fetched_at' | 'checked_at' | 'indexed_at' | 'content_hash' | 'html' | 'content_language' | 'language' | 'translation_key' | 'navigation'
> & {
  content_hash: string;
  html: string;
  content_language?: string | null;
};

/** More work to commit in the same transaction as a page store write. */
/** A page as a 200 answer with `html` and no validators brought it, for tools and tests that index HTML they hold. */
export function htmlPageFetched(url: string, html: string): FetchedPage {
  return {
    url,
    final_url: url,
    host: new URL(url).host,
    http_status: 200,
    content_type: 'text/html',
    etag: null,
    last_modified: null,
    content_hash: createHash('sha256').update(html).digest('hex'),
    title: null,
    html,
    crawl_depth: 0,
  };
}

export type InTransaction = (db: Kysely<Database>) => Promise<void>;

/** What the indexer decided about a page: its language, its translation group, and whether it is a navigation page. */
export interface PageAnalysis {
  language: string | null;
  translation_key: string | null;
  navigation: boolean;
}

/**
 * The pages and passages store: the only channel between crawler and indexer. The crawler writes fetched pages
 * (state "fetched") or marks them "gone"; the indexer picks those up, writes passages, and marks them "indexed".
 */
export class PageStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Each page's collection ids, sorted (a page without membership rows: the default collection). */
  async collectionsOf(pageIds: readonly number[]): Promise<Map<number, string[]>> {
    return new CollectionStore(this.db).ofPages(pageIds);
  }

  /** Puts the stored page at `url` in a collection (in `db`, a transaction of the caller's, when given). */
  async joinCollection(url: string, collectionId: string, db: Kysely<Database> = this.db): Promise<void> {
    await joinCollection(db, url, collectionId);
  }

  async getByUrl(url: string): Promise<Page | undefined> {
    return this.db.selectFrom('pages').selectAll().where('url', '=', url).executeTakeFirst();
  }

  async getById(id: number): Promise<Page | undefined> {
    return this.db.selectFrom('pages').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Another live page with the same body, if any (content-hash de-duplication). */
  async findDuplicate(contentHash: string, exceptUrl: string): Promise<Page | undefined> {
    return this.db
      .selectFrom('pages')
      .selectAll()
      .where('content_hash', '=', contentHash)
      .where('url', '!=', exceptUrl)
      .where('state', '!=', 'gone')
      .executeTakeFirst();
  }

  /**
   * Inserts or replaces a fetched page; it becomes due for indexing when its content hash changed. A caller that has
   * just read the stored row passes it (`null`: known to be absent) to save a lookup on the crawl's hot path. `also`
   * runs in the same transaction (the crawler marks the page's frontier entry done with it, so a page is never stored
   * without its entry being done, whenever the process dies).
   */
  async saveFetched(page: FetchedPage, known?: Page | null, also?: InTransaction): Promise<{ id: number; changed: boolean }> {
    if (!also) return this.save(this.db, page, known);
    return this.db.transaction().execute(async (trx) => {
      const saved = await this.save(trx, page, known);
      await also(trx);
      return saved;
    });
  }

  private async save(db: Kysely<Database>, page: FetchedPage, known?: Page | null): Promise<{ id: number; changed: boolean }> {
    const now = nowIso();
    let existing = known === undefined ? await db.selectFrom('pages').selectAll().where('url', '=', page.url).executeTakeFirst() : (known ?? undefined);
    if (!existing) {
      const row = await db
        .insertInto('pages')
        .values({ ...page, state: 'fetched', indexed_hash: null, fetched_at: now, checked_at: now, indexed_at: null })
        .onConflict((oc) => oc.column('url').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (row) return { id: row.id, changed: true };
      // Stored meanwhile (the caller's row was stale): update it instead.
      existing = await db.selectFrom('pages').selectAll().where('url', '=', page.url).executeTakeFirst();
      if (!existing) throw new Error(`page ${page.url} neither inserted nor found`);
    }
    const changed = existing.indexed_hash !== page.content_hash || existing.state === 'gone';
    await db
      .updateTable('pages')
      .set({ ...page, state: changed ? 'fetched' : existing.state, fetched_at: now, checked_at: now })
      .where('id', '=', existing.id)
      .execute();
    return { id: existing.id, changed };
  }

  /** A conditional request answered 304: the stored copy is still current. `also` as for saveFetched. */
  async markUnchanged(url: string, also?: InTransaction): Promise<void> {
    const mark = (db: Kysely<Database>) => db.updateTable('pages').set({ checked_at: nowIso() }).where('url', '=', url).execute();
    if (!also) {
      await mark(this.db);
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await mark(trx);
      await also(trx);
    });
  }

  /** The page vanished (404/410) or became a duplicate/non-HTML: the indexer will remove its passages. */
  async markGone(url: string, httpStatus: number): Promise<void> {
    await this.db
      .updateTable('pages')
      .set({ state: 'gone', http_status: httpStatus, html: null, checked_at: nowIso() })
      .where('url', '=', url)
      .execute();
  }

  /** Pages whose index entries are stale: fetched and not yet indexed at this hash, or gone but still indexed. */
  async pendingForIndex(limit: number): Promise<Page[]> {
    return this.db
      .selectFrom('pages')
      .selectAll()
      .where((eb) =>
        eb.or([eb('state', '=', 'fetched'), eb.and([eb('state', '=', 'gone'), eb('indexed_hash', 'is not', null)])]),
      )
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Titles of a few indexed content pages (navigation pages left out), oldest first: the dashboard's example query. */
  async indexedTitles(limit = 20): Promise<string[]> {
    const rows = await this.db
      .selectFrom('pages')
      .select('title')
      .where('state', '=', 'indexed')
      .where('title', 'is not', null)
      .where((eb) => eb.or([eb('navigation', 'is', null), eb('navigation', '=', 0)]))
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.title ?? '');
  }

  /** Raw <title> texts of a host's live pages (what site-wide title prefixes and suffixes are learnt from). */
  async titlesOfHost(host: string, limit = 5000): Promise<string[]> {
    const rows = await this.db
      .selectFrom('pages')
      .select('title')
      .where('host', '=', host)
      .where('state', '!=', 'gone')
      .where('title', 'is not', null)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.title ?? '');
  }

  /**
   * Replaces a page's passages in one transaction and marks the page indexed at its current hash, with what the
   * indexer decided about it.
   */
  async replacePassages(page: Page, passages: Omit<NewPassage, 'page_id'>[], analysis?: PageAnalysis): Promise<Passage[]> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('passages').where('page_id', '=', page.id).execute();
      const inserted =
        passages.length === 0
          ? []
          : await trx
              .insertInto('passages')
              .values(passages.map((p) => ({ ...p, page_id: page.id })))
              .returningAll()
              .execute();
      await trx
        .updateTable('pages')
        .set({
          state: 'indexed',
          indexed_hash: page.content_hash,
          indexed_at: nowIso(),
          ...(analysis ? { language: analysis.language, translation_key: analysis.translation_key, navigation: analysis.navigation ? 1 : 0 } : {}),
        })
        .where('id', '=', page.id)
        .execute();
      return inserted;
    });
  }

  /** Removes a gone page's passages; returns the ids removed so the search index can drop them too. */
  async removePassages(page: Page): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx.deleteFrom('passages').where('page_id', '=', page.id).returning('id').execute();
      await trx.updateTable('pages').set({ indexed_hash: null, indexed_at: nowIso() }).where('id', '=', page.id).execute();
      return rows.map((r) => r.id);
    });
  }

  /** Passages by id, in ascending id order; ids that do not exist are skipped. */
  async passagesByIds(ids: readonly number[]): Promise<Passage[]> {
    const out: Passage[] = [];
    for (let start = 0; start < ids.length; start += 500) {
      const chunk = ids.slice(start, start + 500);
      out.push(...(await this.db.selectFrom('passages').selectAll().where('id', 'in', chunk).execute()));
    }
    return out.sort((a, b) => a.id - b.id);
  }

  async passageIdsForPage(pageId: number): Promise<number[]> {
    const rows = await this.db.selectFrom('passages').select('id').where('page_id', '=', pageId).execute();
    return rows.map((r) => r.id);
  }

  async counts(): Promise<{ pages: number; indexed: number; gone: number; pending: number; passages: number }> {
    const byState = await this.db
      .selectFrom('pages')
      .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('state')
      .execute();
    const passages = await this.db
      .selectFrom('passages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const of = (s: string) => Number(byState.find((r) => r.state === s)?.n ?? 0);
    return {
      pages: of('fetched') + of('indexed'),
      indexed: of('indexed'),
      gone: of('gone'),
      pending: of('fetched'),
      passages: Number(passages.n),
    };
  }
}
