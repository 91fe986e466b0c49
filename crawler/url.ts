import { getDomain } from 'tldts';
import { NotaryError } from '../core/index.js';
import { compileUrlPattern, urlPatternProblem, type UrlPattern } from './url-pattern.js';

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

/**
 * How far a crawl may go from its seeds: `path` stays under each seed's folder (the host when the seed is the root),
 * `host` on the seeds' hosts, `domain` on their registrable domains (docs.example.org and www.example.org alike),
 * `any` anywhere.
 */
export const CRAWL_SCOPES = ['path', 'host', 'domain', 'any'] as const;
export type CrawlScope = (typeof CRAWL_SCOPES)[number];

export interface ScopeRules {
  scope: CrawlScope;
  include: string[];
  exclude: string[];
}

export interface Scope {
  /** null when the URL is in scope, else a short reason for the skip detail. */
  check(url: string): string | null;
  /** One line saying what is in scope, for logs and summaries. */
  readonly description: string;
}

function compilePatterns(patterns: string[], key: 'include' | 'exclude'): UrlPattern[] {
  return patterns.map((pattern) => {
    const problem = urlPatternProblem(pattern);
    if (problem !== null) throw new NotaryError('invalid_config', `crawler.${key}: "${pattern}" is not a valid pattern (${problem})`);
    return compileUrlPattern(pattern);
  });
}

/** The folder of a seed: its path up to and including the last "/" ("/en/" for /en/ and /en/index.html). */
export function seedFolder(seed: string): string {
  const { pathname } = new URL(seed);
  return pathname.slice(0, pathname.lastIndexOf('/') + 1) || '/';
}

/** Registrable domain (public-suffix aware); an IP address or a single-label host stands for itself. */
function domainOf(url: string): string {
  const { hostname } = new URL(url);
  return getDomain(hostname, { allowPrivateDomains: true }) ?? hostname;
}

/**
 * Scope of one crawl. A URL is in scope when it matches no exclude pattern, lies within the scope rule around one of
 * the seeds, and, when include patterns are given, matches at least one of them. Include patterns narrow; widen
 * with `scope`.
 */
export function compileScope(seeds: string[], rules: ScopeRules): Scope {
  const include = compilePatterns(rules.include, 'include');
  const exclude = compilePatterns(rules.exclude, 'exclude');
  const prefixes = [...new Set(seeds.map((seed) => `${new URL(seed).origin}${seedFolder(seed)}`))];
  const hosts = new Set(seeds.map(hostOf));
  const domains = new Set(seeds.map(domainOf));
  const within = (url: string): string | null => {
    switch (rules.scope) {
      case 'path':
        return prefixes.some((prefix) => url.startsWith(prefix)) ? null : hosts.has(hostOf(url)) ? `outside ${prefixes.map((p) => new URL(p).pathname).join(' ')}` : 'other host';
      case 'host':
        return hosts.has(hostOf(url)) ? null : 'other host';
      case 'domain':
        return domains.has(domainOf(url)) ? null : 'other domain';
      case 'any':
        return null;
    }
  };
  const where = { path: `under ${prefixes.join(' ')}`, host: `on ${[...hosts].join(' ')}`, domain: `on ${[...domains].join(' ')} and subdomains`, any: 'anywhere' }[rules.scope];
  const description =
    `scope ${rules.scope}: ${where}` +
    (rules.include.length > 0 ? `; must match ${rules.include.join(' | ')}` : '') +
    (rules.exclude.length > 0 ? `; never ${rules.exclude.join(' | ')}` : '');
  return {
    description,
    check(url) {
      const blocked = exclude.findIndex((re) => re.test(url));
      if (blocked >= 0) return `matches exclude ${rules.exclude[blocked]}`;
      const outside = within(url);
      if (outside) return outside;
      if (include.length > 0 && !include.some((re) => re.test(url))) return 'matches no include pattern';
      return null;
    },
  };
}
