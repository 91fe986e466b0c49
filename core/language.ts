import { eld } from 'eld/medium';

/**
 * Languages: tags normalised to lower-case BCP 47 ("en", "pt-br"), their primary subtag ("pt"), and detection from
 * text with Nito-ELD (the `eld` package: n-gram detector, reliable on short texts too) when a page or a query does
 * not say which language it is in.
 */

const TAG = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})*$/;

/** "en-US" -> "en-us", "EN_gb" -> "en-gb"; null for anything that is not a language tag ("", "*", "x-default"). */
export function normaliseLanguageTag(raw: string | null | undefined): string | null {
  if (!raw) return null;
  // Content-Language may list several ("de, en"): the first is the main one.
  const first = raw.split(',')[0]?.trim().toLowerCase().replace(/_/g, '-') ?? '';
  if (!TAG.test(first) || first.startsWith('x-') || first === 'und' || first === 'mul' || first === 'zxx') return null;
  return first;
}

/** The primary subtag: "pt-br" -> "pt". */
export function primaryLanguage(tag: string): string {
  return tag.split('-')[0] ?? tag;
}

export interface DetectedLanguage {
  /** ISO 639-1 code, or null when the detector cannot tell. */
  language: string | null;
  /** The detector's own verdict on whether the text was long and distinctive enough. */
  reliable: boolean;
}

/** Characters of a text the detector reads: enough to decide, bounded in cost. */
const DETECT_CHARS = 2000;

/** The language of `text` by its letter n-grams. */
export function detectLanguage(text: string): DetectedLanguage {
  const sample = text.slice(0, DETECT_CHARS);
  if (!/\p{L}/u.test(sample)) return { language: null, reliable: false };
  const result = eld.detect(sample);
  const language = normaliseLanguageTag(result.language);
  return { language, reliable: language !== null && result.isReliable() };
}
