/** The rows of the passage and page tables as written and read: the facts columns and the filters over them. */
import { sql } from 'kysely';
import { primaryLanguage } from '../../../core/language.js';
import { withFacts, type StoredFacts } from '../../hit-facts.js';
import type { IndexDoc, IndexFilter } from '../../search-index.js';

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
export function factsOf(row: FactColumns): StoredFacts {
  return { language: row.language, navigation: row.navigation, translationKey: row.translation_key };
}

/** The facts of a document as column values: language, its primary subtag (what filters match), navigation, group. */
export function factValues(doc: { language?: string | undefined; navigation?: boolean | undefined; translationKey?: string | undefined }) {
  return sql`${doc.language ?? null}, ${doc.language ? primaryLanguage(doc.language.toLowerCase()) : null}, ${doc.navigation === true}, ${doc.translationKey ?? null}`;
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
  return sql.join(conditions, sql` and `);
}

export function toDoc(r: HitRow): IndexDoc {
  return withFacts({ id: Number(r.id), pageId: Number(r.page_id), url: r.url, title: r.title, headingPath: r.heading_path, text: r.body }, factsOf(r));
}
