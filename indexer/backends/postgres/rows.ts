/** The rows of the passage and page tables as written and read: the facts columns and the filters over them. */
import { sql } from 'kysely';
import { collectionIdsOf, DEFAULT_COLLECTION_ID } from '../../../core/index.js';
import { primaryLanguage } from '../../../core/language.js';
import { withFacts, type StoredFacts } from '../../hit-facts.js';
import type { HostRule, IndexDoc, IndexFilter } from '../../search-index.js';
import { hostOf, publishedMs, subdomainPattern } from '../../filter-facts.js';

/** Rows per INSERT and ids per IN list. */
export const WRITE_CHUNK = 500;

export interface FactColumns {
  language: string | null;
  navigation: boolean | null;
  translation_key: string | null;
}

export interface HitRow extends FactColumns {
  id: string | number;
  page_id: string | number;
  url: string;
  title: string;
  heading_path: string;
  body: string;
  score?: number;
}

export interface PageRow extends FactColumns {
  page_id: string | number;
  url: string;
  title: string;
  score: number;
}

/** A row's facts columns by their names in IndexDoc. */
export function factsOf(row: FactColumns & { published_at?: Date | string | null }): StoredFacts {
  return { language: row.language, navigation: row.navigation, translationKey: row.translation_key, published: row.published_at ?? null };
}

/** The facts columns in factValues' order, and their update from `excluded` on conflict. */
export const FACT_COLUMNS = sql.raw('language, language_primary, navigation, translation_key, host, published_at, collections');
export const FACT_UPDATES = sql.raw(
  'language = excluded.language, language_primary = excluded.language_primary, navigation = excluded.navigation, ' +
    'translation_key = excluded.translation_key, host = excluded.host, published_at = excluded.published_at, collections = excluded.collections',
);

/**
 * The facts of a document as column values: language, its primary subtag (what filters match), navigation, group,
 * the URL's host and the publication date (domain and date filters).
 */
export function factValues(doc: {
  url: string;
  language?: string | undefined;
  navigation?: boolean | undefined;
  translationKey?: string | undefined;
  publishedAt?: string | undefined;
  collections?: readonly string[] | undefined;
}) {
  return sql`${doc.language ?? null}, ${doc.language ? primaryLanguage(doc.language.toLowerCase()) : null}, ${doc.navigation === true}, ${doc.translationKey ?? null},
    ${hostOf(doc.url)}, ${publishedValue(doc.publishedAt)}, ${[...collectionIdsOf(doc.collections)]}::text[]`;
}

/** The condition of a collection filter over a `collections` text[] column (null: the default collection). */
export function collectionCondition(collections: readonly string[] | undefined, column = sql.raw('collections')) {
  if (collections === undefined) return [];
  return [sql`coalesce(${column}, array[${DEFAULT_COLLECTION_ID}]::text[]) && ${[...collections]}::text[]`];
}

function hostConditions(rules: readonly HostRule[]) {
  return sql.join(
    rules.map((r) => (r.subdomains ? sql`(host = ${r.host} or host like ${subdomainPattern(r.host)})` : sql`host = ${r.host}`)),
    sql` or `,
  );
}

/** SQL conditions of a filter's domain and date parts over columns `host` and `published_at` (timestamptz). */
export function domainAndDateConditions(filter: Pick<IndexFilter, 'includeHosts' | 'excludeHosts' | 'published'> | undefined) {
  const conditions = [];
  if (filter?.includeHosts && filter.includeHosts.length > 0) conditions.push(sql`(${hostConditions(filter.includeHosts)})`);
  if (filter?.excludeHosts && filter.excludeHosts.length > 0) conditions.push(sql`not coalesce(${hostConditions(filter.excludeHosts)}, false)`);
  const range = filter?.published;
  if (range) {
    const bounds = [sql`published_at is not null`];
    if (range.from !== undefined) bounds.push(sql`published_at >= to_timestamp(${range.from}::float8 / 1000)`);
    if (range.to !== undefined) bounds.push(sql`published_at < to_timestamp(${range.to}::float8 / 1000)`);
    const dated = sql.join(bounds, sql` and `);
    conditions.push(range.undated === 'keep' ? sql`(published_at is null or (${dated}))` : sql`(${dated})`);
  }
  return conditions;
}

/** A publication date (ISO 8601) as a timestamptz value, null when unknown. */
export function publishedValue(publishedAt: string | undefined) {
  const published = publishedMs(publishedAt);
  return published === null ? sql`null::timestamptz` : sql`to_timestamp(${published}::float8 / 1000)`;
}

/** SQL conditions of a filter (pages of unknown language pass a language filter, as in FTS5). */
export function filterConditions(filter: IndexFilter | undefined) {
  const conditions = [sql`true`];
  if (filter?.languages && filter.languages.length > 0) {
    const wanted = [...new Set(filter.languages.map((l) => primaryLanguage(l.toLowerCase())))];
    conditions.push(sql`(language_primary is null or language_primary = any(${wanted}::text[]))`);
  }
  if (filter?.excludeNavigation) conditions.push(sql`not navigation`);
  if (filter?.translationKey) conditions.push(sql`translation_key = ${filter.translationKey}`);
  if (filter?.pageIds) conditions.push(sql`page_id = any(${filter.pageIds.filter((id) => Number.isSafeInteger(id))}::bigint[])`);
  conditions.push(...domainAndDateConditions(filter));
  conditions.push(...collectionCondition(filter?.collections));
  return sql.join(conditions, sql` and `);
}

export function toDoc(r: HitRow & { published_at?: Date | string | null }): IndexDoc {
  return withFacts({ id: Number(r.id), pageId: Number(r.page_id), url: r.url, title: r.title, headingPath: r.heading_path, text: r.body }, factsOf(r));
}
