/** The documents notary keeps in Meilisearch (passages and whole pages), their facts and the filters over them. */
import { collectionIdsOf, DEFAULT_COLLECTION_ID } from '../../../core/index.js';
import { primaryLanguage } from '../../../core/language.js';
import { withFacts } from '../../hit-facts.js';
import type { HostRule, IndexDoc, IndexFilter, PageDoc } from '../../search-index.js';
import { hostOf, hostSuffixes, publishedMs } from '../../filter-facts.js';
import { stemmedText } from '../analysis.js';
import { documentLength } from './bm25.js';
import { pathWords } from '../url-path.js';

/** Ids per `id IN [...]` filter. */
export const ID_CHUNK = 1000;

/** Stored fields a hit needs; the analysed `s_*` fields are for searching only. */
export const DOC_FIELDS = ['id', 'pageId', 'url', 'title', 'headingPath', 'text', 'language', 'navigation', 'translationKey', 'publishedAt'] as const;
/** The fields notary's BM25 reads from a candidate (bm25.ts): its stored length and analysed fields. */
export const SCORED_FIELDS = ['len', 's_title', 's_headings', 's_text'] as const;
/** Stored fields of a page hit (the page-level index, `<index>__pages`, one document per page, id = page id). */
export const PAGE_FIELDS = ['id', 'url', 'title', 'language', 'navigation', 'translationKey', 'publishedAt'] as const;

/** The page's facts every document carries: what filters match (language by primary subtag). */
export interface FactFields {
  language?: string;
  language_primary?: string;
  navigation?: boolean;
  translationKey?: string;
  /** The URL's host, and it with every domain it is under (a "*." domain filter matches these). */
  host?: string;
  hostSuffixes?: string[];
  /** Publication date, epoch milliseconds (absent when unknown). */
  publishedAt?: number;
  /** Collection ids (documents written before collections have none: the default collection). */
  collections?: string[];
}

export interface PassageDocument extends FactFields {
  id: number;
  pageId?: number;
  url?: string;
  title?: string;
  headingPath?: string;
  text?: string;
  /** `<model>|<dimensions>` of the vector this document holds, absent without one. */
  vector_model?: string | null;
  /** Euclidean norm of that vector (so a search need not send vectors back to score them exactly). */
  vector_norm?: number | null;
  _vectors?: Record<string, unknown>;
  _rankingScore?: number;
  /** Its length as BM25 counts it (bm25.ts); absent in documents written before it was stored. */
  len?: number;
  s_title?: string;
  s_headings?: string;
  s_text?: string;
}

export function factFields(doc: {
  url: string;
  language?: string | undefined;
  navigation?: boolean | undefined;
  translationKey?: string | undefined;
  publishedAt?: string | undefined;
  collections?: readonly string[] | undefined;
}): FactFields {
  const host = hostOf(doc.url);
  const published = publishedMs(doc.publishedAt);
  return {
    host,
    hostSuffixes: hostSuffixes(host),
    ...(published === null ? {} : { publishedAt: published }),
    ...(doc.language ? { language: doc.language, language_primary: primaryLanguage(doc.language.toLowerCase()) } : {}),
    navigation: doc.navigation === true,
    ...(doc.translationKey ? { translationKey: doc.translationKey } : {}),
    collections: [...collectionIdsOf(doc.collections)],
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
  parts.push(...domainAndDateFilter(filter));
  return parts.length > 0 ? parts.join(' AND ') : undefined;
}

function hostsFilter(rules: readonly HostRule[]): string {
  const exact = rules.filter((r) => !r.subdomains).map((r) => filterString(r.host));
  const under = rules.filter((r) => r.subdomains).map((r) => filterString(r.host));
  const parts = [...(exact.length > 0 ? [`host IN [${exact.join(', ')}]`] : []), ...(under.length > 0 ? [`hostSuffixes IN [${under.join(', ')}]`] : [])];
  return `(${parts.join(' OR ')})`;
}

/** The filter expressions of a filter's domain, date and collection parts (documents without a date have no publishedAt). */
export function domainAndDateFilter(filter: Pick<IndexFilter, 'includeHosts' | 'excludeHosts' | 'published' | 'collections'> | undefined): string[] {
  const parts: string[] = [];
  const collections = filter?.collections;
  if (collections) {
    // Documents written before collections have none: they are in the default collection. No id is "": an empty
    // list matches nothing.
    const among = `collections IN [${(collections.length > 0 ? collections : ['']).map(filterString).join(', ')}]`;
    parts.push(collections.includes(DEFAULT_COLLECTION_ID) ? `(${among} OR collections NOT EXISTS)` : among);
  }
  if (filter?.includeHosts && filter.includeHosts.length > 0) parts.push(hostsFilter(filter.includeHosts));
  if (filter?.excludeHosts && filter.excludeHosts.length > 0) parts.push(`NOT ${hostsFilter(filter.excludeHosts)}`);
  const range = filter?.published;
  if (range) {
    const bounds = ['publishedAt EXISTS'];
    if (range.from !== undefined) bounds.push(`publishedAt >= ${range.from}`);
    if (range.to !== undefined) bounds.push(`publishedAt < ${range.to}`);
    parts.push(range.undated === 'keep' ? `(publishedAt NOT EXISTS OR (${bounds.join(' AND ')}))` : `(${bounds.join(' AND ')})`);
  }
  return parts;
}

export function filterString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function idsFilter(ids: readonly number[]): string {
  return `id IN [${ids.join(', ')}]`;
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
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
    len: documentLength(doc),
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

export function toIndexDoc(d: PassageDocument): IndexDoc {
  return withFacts(
    { id: Number(d.id), pageId: Number(d.pageId), url: d.url ?? '', title: d.title ?? '', headingPath: d.headingPath ?? '', text: d.text ?? '' },
    { ...d, published: d.publishedAt ?? null },
  );
}
