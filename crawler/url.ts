import { NotaryError } from '../core/errors.js';

/**
 * The one spelling of a URL the crawler keys pages by: http(s) only, fragment dropped, host lower-cased, default port
 * removed, empty path as "/". Query and path are kept as written (no sorting, no case folding). Returns null for
 * anything that is not an absolute http(s) URL.
 */
export function normaliseUrl(raw: string, base?: string): string | null {
  let url: URL;
  try {
    url = base === undefined ? new URL(raw) : new URL(raw, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // WHATWG URL already lower-cases the host, drops default ports and turns an empty path into "/".
  url.hash = '';
  url.username = '';
  url.password = '';
  return url.href;
}

export function hostOf(url: string): string {
  return new URL(url).host;
}

export interface ScopeRules {
  sameHost: boolean;
  include: string[];
  exclude: string[];
}

export interface Scope {
  /** null when the URL is in scope, else a short reason for the skip detail. */
  check(url: string): string | null;
}

function compilePatterns(patterns: string[], key: 'include' | 'exclude'): RegExp[] {
  return patterns.map((pattern) => {
    try {
      return new RegExp(pattern);
    } catch (err) {
      throw new NotaryError('invalid_config', `crawler.${key}: "${pattern}" is not a valid regular expression (${(err as Error).message})`);
    }
  });
}

/**
 * Scope of one crawl. With `sameHost` a URL must be on one of the seeds' hosts unless an include pattern matches it
 * explicitly; without include patterns and without sameHost everything is in scope. Exclude always wins.
 */
export function compileScope(seeds: string[], rules: ScopeRules): Scope {
  const include = compilePatterns(rules.include, 'include');
  const exclude = compilePatterns(rules.exclude, 'exclude');
  const seedHosts = new Set(seeds.map(hostOf));
  return {
    check(url) {
      const blocked = exclude.findIndex((re) => re.test(url));
      if (blocked >= 0) return `matches exclude ${rules.exclude[blocked]}`;
      const onSeedHost = seedHosts.has(hostOf(url));
      if (include.length > 0) {
        if (include.some((re) => re.test(url))) return null;
        return 'matches no include pattern';
      }
      if (rules.sameHost && !onSeedHost) return 'other host';
      return null;
    },
  };
}
