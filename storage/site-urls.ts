import { sql, type Kysely } from 'kysely';
import { DEFAULT_COLLECTION_ID } from '../core/index.js';
import type { Dialect } from './migrations.js';
import type { Database } from './schema.js';

/** A URL the index knows, with what it knows of it. */
export interface IndexedUrl {
  url: string;
  title: string | null;
  /** When the page was last fetched or confirmed unchanged (ISO 8601). */
  checkedAt: string;
}

/** What a frontier row ended as, when its page was stored (others failed or were skipped). */
const STORED = ['stored', 'unchanged', 'fresh'];

/**
 * The URLs under a prefix that the index (pages) and the crawl frontier know, in byte order of the URL, from just
 * after `after`: one page of a site's map (POST /v1/map). Byte order on both engines (PostgreSQL compares with the "C"
 * collation), so the order, and a cursor made of the last URL, are the same wherever the rows are read.
 */
export class SiteUrlStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  private urlColumn(table: 'pages' | 'crawl_frontier') {
    return this.dialect === 'postgres' ? sql<string>`${sql.ref(`${table}.url`)} collate "C"` : sql<string>`${sql.ref(`${table}.url`)}`;
  }

  /** Pages under `prefix` (not gone), after `after`, at most `limit`; in `collectionId` only when given. */
  async indexed(prefix: string, after: string, limit: number, collectionId?: string): Promise<IndexedUrl[]> {
    const url = this.urlColumn('pages');
    let query = this.db
      .selectFrom('pages')
      .select(['pages.url', 'pages.title', 'pages.checked_at'])
      .where(sql<boolean>`substr(${sql.ref('pages.url')}, 1, ${prefix.length}) = ${prefix}`)
      .where(sql<boolean>`${url} > ${after}`)
      .where('pages.state', '!=', 'gone');
    if (collectionId !== undefined) {
      // A page without membership rows is in the default collection (storage/collections.ts).
      query = query.where((eb) => {
        const member = eb.exists(
          eb.selectFrom('page_collections').select('page_collections.page_id').whereRef('page_collections.page_id', '=', 'pages.id').where('page_collections.collection_id', '=', collectionId),
        );
        if (collectionId !== DEFAULT_COLLECTION_ID) return member;
        return eb.or([member, eb.not(eb.exists(eb.selectFrom('page_collections').select('page_collections.page_id').whereRef('page_collections.page_id', '=', 'pages.id')))]);
      });
    }
    const rows = await query.orderBy(url).limit(limit).execute();
    return rows.map((r) => ({ url: r.url, title: r.title, checkedAt: r.checked_at }));
  }

  /** Frontier URLs under `prefix` (queued, in flight, or stored), after `after`, at most `limit`, each once. */
  async frontier(prefix: string, after: string, limit: number): Promise<string[]> {
    const url = this.urlColumn('crawl_frontier');
    const rows = await this.db
      .selectFrom('crawl_frontier')
      .select('crawl_frontier.url')
      .where(sql<boolean>`substr(${sql.ref('crawl_frontier.url')}, 1, ${prefix.length}) = ${prefix}`)
      .where(sql<boolean>`${url} > ${after}`)
      .where((eb) => eb.or([eb('crawl_frontier.state', '!=', 'done'), eb('crawl_frontier.outcome', 'in', STORED)]))
      // Grouped rather than DISTINCT: PostgreSQL orders a DISTINCT only by what it selects, not by url collate "C".
      .groupBy('crawl_frontier.url')
      .orderBy(url)
      .limit(limit)
      .execute();
    return rows.map((r) => r.url);
  }
}
