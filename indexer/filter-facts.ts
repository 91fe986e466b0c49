/**
 * What the domain and date filters read of a passage's page (its host and publication date), the same in every
 * backend: how a stored document's facts are derived, and the filter as a predicate for in-memory copies.
 */
import { inCollections } from '../core/index.js';
import type { DateRange, HostRule, IndexFilter } from './search-index.js';

/**
 * The filters every backend applies from these facts (besides language, navigation, translation group, pages): the
 * page's host, publication date and collections.
 */
export type FactFilter = Pick<IndexFilter, 'includeHosts' | 'excludeHosts' | 'published' | 'collections'>;

/** The lower-case host of a URL (no port, no trailing dot); "" when it has none. */
export function hostOf(url: string | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return '';
  }
}

/** The host and every domain it is under, longest first: "docs.example.com", "example.com", "com". */
export function hostSuffixes(host: string): string[] {
  const labels = host.split('.');
  return host ? labels.map((_, i) => labels.slice(i).join('.')) : [];
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Epoch milliseconds of an ISO 8601 date or date-time (UTC when it names no offset); null when it is not one. */
export function publishedMs(value: string | undefined | null): number | null {
  if (!value) return null;
  const m = ISO_DATE.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, zone] = m;
  const day = Date.UTC(Number(y), Number(mo) - 1, Number(d));
  const check = new Date(day);
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return null;
  if (h === undefined) return day;
  let offset = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const digits = zone.replace(':', '');
    offset = (digits.startsWith('-') ? -1 : 1) * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5))) * 60_000;
  }
  const ms = day + ((Number(h) * 60 + Number(mi)) * 60 + Number(s ?? 0)) * 1000 - offset;
  return Number.isFinite(ms) ? ms : null;
}

/** Whether a filter has a domain, date or collection part. */
export function hasFactFilter(filter: FactFilter | undefined): boolean {
  return hasHostOrDateFilter(filter) || filter?.collections !== undefined;
}

/** Whether a filter has a domain or date part (backends holding no such facts in memory rank those in SQL). */
export function hasHostOrDateFilter(filter: FactFilter | undefined): boolean {
  return (filter?.includeHosts?.length ?? 0) > 0 || (filter?.excludeHosts?.length ?? 0) > 0 || filter?.published !== undefined;
}

export function hostMatches(host: string, rules: readonly HostRule[]): boolean {
  return rules.some((r) => host === r.host || (r.subdomains && host.endsWith(`.${r.host}`)));
}

export function dateMatches(published: number | null, range: DateRange): boolean {
  if (published === null || Number.isNaN(published)) return range.undated === 'keep';
  return (range.from === undefined || published >= range.from) && (range.to === undefined || published < range.to);
}

/**
 * The filter as a predicate over a page's host, publication date (null or NaN: unknown) and collection ids (absent or
 * empty: the default collection).
 */
export function factsPass(filter: FactFilter | undefined, host: string, published: number | null, collections?: readonly string[] | null): boolean {
  if (!filter) return true;
  if (filter.collections && !inCollections(collections, filter.collections)) return false;
  if (filter.includeHosts && filter.includeHosts.length > 0 && !hostMatches(host, filter.includeHosts)) return false;
  if (filter.excludeHosts && filter.excludeHosts.length > 0 && hostMatches(host, filter.excludeHosts)) return false;
  if (filter.published && !dateMatches(published, filter.published)) return false;
  return true;
}

/** A stable text of the filter's fact part, for cache keys. */
export function factFilterKey(filter: FactFilter | undefined): string {
  if (!hasFactFilter(filter)) return '';
  return JSON.stringify([filter?.includeHosts ?? [], filter?.excludeHosts ?? [], filter?.published ?? null, filter?.collections ?? null]);
}

/** LIKE pattern of the hosts under `host` (escaped with backslash). */
export function subdomainPattern(host: string): string {
  return `%.${host.replace(/[\\%_]/g, (c) => `\\${c}`)}`;
}
