import type { IndexDoc } from './search-index.js';

/** A page's facts as a backend stores them (its own column names mapped to these; absent, null, false and 0 mean none). */
export interface StoredFacts {
  language?: string | null | undefined;
  navigation?: boolean | number | null | undefined;
  translationKey?: string | null | undefined;
}

/** `base` (a hit or a stored passage) with the facts that are set: language, navigation page, translation group. */
export function withFacts<T extends object>(base: T, facts: StoredFacts): T & Pick<IndexDoc, 'language' | 'navigation' | 'translationKey'> {
  return {
    ...base,
    ...(facts.language ? { language: facts.language } : {}),
    ...(facts.navigation ? { navigation: true } : {}),
    ...(facts.translationKey ? { translationKey: facts.translationKey } : {}),
  };
}
