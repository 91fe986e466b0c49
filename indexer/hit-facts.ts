import type { IndexDoc } from './search-index.js';

/** A page's facts as a backend stores them (its own column names mapped to these; absent, null, false and 0 mean none). */
export interface StoredFacts {
  language?: string | null | undefined;
  navigation?: boolean | number | null | undefined;
  translationKey?: string | null | undefined;
  /** Publication date as epoch ms (or a Date, or an ISO string); null or absent when unknown. */
  published?: number | string | Date | null | undefined;
}

/** `base` (a hit or a stored passage) with the facts that are set: language, navigation page, translation group. */
export function withFacts<T extends object>(base: T, facts: StoredFacts): T & Pick<IndexDoc, 'language' | 'navigation' | 'translationKey' | 'publishedAt'> {
  const published = facts.published === null || facts.published === undefined ? null : new Date(typeof facts.published === 'string' && /^\d+$/.test(facts.published) ? Number(facts.published) : facts.published);
  return {
    ...base,
    ...(facts.language ? { language: facts.language } : {}),
    ...(facts.navigation ? { navigation: true } : {}),
    ...(facts.translationKey ? { translationKey: facts.translationKey } : {}),
    ...(published && !Number.isNaN(published.getTime()) ? { publishedAt: published.toISOString() } : {}),
  };
}
