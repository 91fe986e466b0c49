/**
 * The search request's options (POST /v1/search, the SDKs, the MCP tool): domain and date filters, the number of
 * results and highlights, as the API takes them (snake_case JSON) and as the pipeline uses them. Each is optional; a
 * request without them is searched and answered as before.
 */
import { NotaryError } from '../core/index.js';
import type { FactFilter, HostRule } from '../indexer/index.js';

const LABEL = '[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const DOMAIN_PATTERN = `^(\\*\\.)?(${LABEL}\\.)*[A-Za-z]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\\.?$`;

/** At most this many hosts in include_domains, and in exclude_domains. */
export const MAX_DOMAINS = 100;
export const MAX_HIGHLIGHTS = 10;
export const HIGHLIGHT_CHARS = { min: 40, max: 2000 } as const;
/** Result fields a request may ask for with `include` (each absent from results unless asked for). */
export const INCLUDE_FIELDS = ['published_date'] as const;
export type IncludeField = (typeof INCLUDE_FIELDS)[number];
const DAY_MS = 86_400_000;

export interface HighlightOptions {
  /** Passages of the result's page, best first. */
  count: number;
  /** Characters of each (a query-focused window of the passage). */
  maxChars: number;
}

/** What the pipeline takes besides the query, depth and language. */
export interface SearchOptions {
  /** Results wanted; default search.max_results. */
  maxResults?: number;
  /** Domain and date filters, applied inside retrieval. */
  filter?: FactFilter;
  highlights?: HighlightOptions;
  /** Optional result fields asked for (`include`); none when absent. */
  include?: readonly IncludeField[];
}

/** The options as the API's JSON body carries them. */
export interface SearchOptionsBody {
  include_domains?: string[];
  exclude_domains?: string[];
  start_date?: string;
  end_date?: string;
  undated?: 'keep' | 'exclude';
  max_results?: number;
  highlights?: { count?: number; max_chars?: number };
  include?: IncludeField[];
}

/** JSON Schema of the options (merged into the search body's properties). */
export function searchOptionsSchema(config: { max_results: number; max_results_cap: number; snippet_chars: number }) {
  const domains = (what: string) => ({
    type: 'array',
    maxItems: MAX_DOMAINS,
    // What parseDomain takes, so that a request valid by the document is never refused: labels of letters, digits,
    // "_" and inner "-", the last one starting with a letter (a numeric last label would be read as an IPv4 address).
    items: { type: 'string', minLength: 1, maxLength: 253, pattern: DOMAIN_PATTERN },
    description: `${what}: host names ("docs.example.com"); a leading "*." ("*.example.com") also takes every host under it. At most ${MAX_DOMAINS}; an invalid one is refused with invalid_domain.`,
  });
  const date = (what: string) => ({
    type: 'string',
    format: 'date',
    minLength: 10,
    maxLength: 10,
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
    description: `${what} (ISO 8601 date, YYYY-MM-DD, UTC; inclusive); invalid dates are refused with invalid_date_range.`,
  });
  return {
    include_domains: domains('Only results from these hosts'),
    exclude_domains: domains('No results from these hosts'),
    start_date: date('Only pages published on or after this date'),
    end_date: date('Only pages published on or before this date'),
    undated: {
      type: 'string',
      enum: ['keep', 'exclude'],
      description: 'With a date range: keep (default) or exclude pages whose publication date is not known.',
    },
    max_results: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: Math.max(config.max_results_cap, config.max_results),
      description: `Results wanted (default ${config.max_results}; at most search.max_results_cap). No extra charge.`,
    },
    highlights: {
      type: 'object',
      additionalProperties: false,
      properties: {
        count: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_HIGHLIGHTS, description: 'Passages per result (default 3).' },
        max_chars: {
          type: 'integer',
          format: 'int32',
          minimum: HIGHLIGHT_CHARS.min,
          maximum: HIGHLIGHT_CHARS.max,
          description: `Characters of each passage (default ${config.snippet_chars}).`,
        },
      },
      description: "Up to `count` passages of each result's page most relevant to the query, best first, each with its score (0..1). No extra charge.",
    },
    include: {
      type: 'array',
      uniqueItems: true,
      maxItems: INCLUDE_FIELDS.length,
      items: { type: 'string', enum: [...INCLUDE_FIELDS] },
      description: 'Optional result fields to add: "published_date" (the page\'s publication date, ISO 8601 UTC, on results whose date is known). No extra charge.',
    },
  } as const;
}

/** A host rule from a request's domain ("Example.COM", "*.example.com"); invalid_domain when it is not a host name. */
export function parseDomain(raw: string, field: string): HostRule {
  const text = raw.trim().toLowerCase().replace(/\.$/, '');
  const subdomains = text.startsWith('*.');
  const name = subdomains ? text.slice(2) : text;
  let host = '';
  try {
    if (/^[^/?#@:\\[\]\s*]+$/.test(name)) host = new URL(`http://${name}/`).hostname;
  } catch {
    host = '';
  }
  const labels = host.split('.');
  if (!host || host.length > 253 || labels.some((l) => l.length === 0 || l.length > 63 || !/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/.test(l))) {
    throw new NotaryError('invalid_domain', `${field} holds "${raw.slice(0, 100)}", which is not a host name: send names like "docs.example.com" or "*.example.com" (no scheme, port or path)`, { field });
  }
  return { host, subdomains };
}

/** Epoch ms of a request's YYYY-MM-DD date (UTC midnight); invalid_date_range when it is not a calendar date. */
export function parseDate(raw: string, field: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const day = new Date(0);
  if (m) day.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const ms = m ? day.getTime() : Number.NaN;
  if (!m || Number.isNaN(ms) || day.getUTCFullYear() !== Number(m[1]) || day.getUTCMonth() !== Number(m[2]) - 1 || day.getUTCDate() !== Number(m[3])) {
    throw new NotaryError('invalid_date_range', `${field} must be an ISO 8601 calendar date, YYYY-MM-DD (got "${raw.slice(0, 40)}")`, { field });
  }
  return ms;
}

/** The body's options, validated, as the pipeline takes them (throws invalid_domain or invalid_date_range). */
export function searchOptions(body: SearchOptionsBody, snippetChars: number): SearchOptions {
  const out: SearchOptions = {};
  const filter: { -readonly [K in keyof FactFilter]: FactFilter[K] } = {};
  const include = (body.include_domains ?? []).map((d, i) => parseDomain(d, `include_domains[${i}]`));
  const exclude = (body.exclude_domains ?? []).map((d, i) => parseDomain(d, `exclude_domains[${i}]`));
  if (include.length > 0) filter.includeHosts = include;
  if (exclude.length > 0) filter.excludeHosts = exclude;
  const from = body.start_date === undefined ? undefined : parseDate(body.start_date, 'start_date');
  const through = body.end_date === undefined ? undefined : parseDate(body.end_date, 'end_date');
  if (from !== undefined && through !== undefined && from > through) {
    throw new NotaryError('invalid_date_range', `start_date (${body.start_date}) is after end_date (${body.end_date})`, { field: 'start_date' });
  }
  const undated = body.undated ?? 'keep';
  if (from !== undefined || through !== undefined || undated === 'exclude') {
    filter.published = { ...(from !== undefined ? { from } : {}), ...(through !== undefined ? { to: through + DAY_MS } : {}), undated };
  }
  if (Object.keys(filter).length > 0) out.filter = filter;
  if (body.max_results !== undefined) out.maxResults = body.max_results;
  if (body.highlights) out.highlights = { count: body.highlights.count ?? 3, maxChars: body.highlights.max_chars ?? snippetChars };
  if (body.include && body.include.length > 0) out.include = [...body.include];
  return out;
}
