import { RE2JS } from 're2js';

/**
 * A crawl's include or exclude pattern. Tenants submit these (POST /v1/crawl), so they are compiled with RE2 (RE2JS,
 * a port of Go's regexp): matching takes time linear in the URL's length, where a backtracking RegExp such as
 * `(a+)+$` takes longer than a crawl may run on a 30-character URL. RE2 syntax is JavaScript's without lookaround and
 * backreferences.
 */
export interface UrlPattern {
  readonly source: string;
  /** Whether the pattern matches anywhere in the URL (unanchored, as RegExp.test). */
  test(url: string): boolean;
}

/** What a pattern that is not RE2 syntax is told, after the parser's own reason. */
export const URL_PATTERN_SYNTAX = 'patterns use RE2 syntax: JavaScript regular expressions without lookahead, lookbehind or backreferences';

export function compileUrlPattern(source: string): UrlPattern {
  const compiled = RE2JS.compile(source);
  return { source, test: (url) => compiled.test(url) };
}

/** Why `source` is not a usable pattern (the parser's reason and the syntax hint), or null when it is one. */
export function urlPatternProblem(source: string): string | null {
  try {
    RE2JS.compile(source);
    return null;
  } catch (err) {
    return `${(err as Error).message.replace(/^error parsing regexp: /, '')}; ${URL_PATTERN_SYNTAX}`;
  }
}
