import { parseDateValue, type DatePrecision, type ParsedDate } from './date-parse.js';
import { scanForDates, type DateElement, type DateScan, type HeadingMark } from './date-scan.js';
import { readJsonLdDates } from './date-jsonld.js';
import { MAX_HTML_CHARS } from './extract.js';

/**
 * A page's publication and modification dates from what the page and its server say (issue 29 item 2).
 *
 * Precedence, first found wins, each source read only when the ones before it gave nothing valid:
 * - published_at: JSON-LD (the article's `datePublished`), then <meta> (article:published_time, parsely-pub-date,
 *   sailthru.date, DC dates, itemprop datePublished, ...), then the article header's date element (`time_element`:
 *   a <time datetime>, microdata, a microformat `published`/`updated`, or a date-classed byline's text, within
 *   400 characters before or 1,200 after the title's <h1>, outside comments, sidebars and listings; farther only
 *   when labelled, "Posted by Jo on"), then a /2024/05/17/ date in the URL (a day, set when the article was
 *   created). Structured data comes first because the site's CMS writes it for machines from the stored value; a
 *   header date is found by layout heuristics; a URL date has no time and is in the site's own zone.
 * - modified_at: the same page sources (`dateModified`, article:modified_time, an "Updated" <time>), then the
 *   sitemap's `lastmod`, then the `Last-Modified` header. Neither of the last two ever gives published_at: a
 *   lastmod or Last-Modified only says the file changed then, not when the article first appeared. Last-Modified
 *   is ignored when it is within 10 minutes of the response's Date (else of `now`): a dynamic page stamped with
 *   the time it was served. A modified date more than a day before the published date is junk and skipped.
 * Impossible values (before 1990, more than a day in the future, Feb 31, "2 hours ago", 05/06/2024) are skipped,
 * so the next source is tried.
 */

export type DateSource = 'json_ld' | 'meta' | 'time_element' | 'url' | 'sitemap_lastmod' | 'last_modified_header';

export interface DateFinding {
  /** ISO 8601: `YYYY-MM-DD` when only the day is known, else UTC `YYYY-MM-DDTHH:MM:SS.sssZ`. */
  value: string;
  precision: DatePrecision;
  source: DateSource;
  /** Where exactly: the meta key, the JSON-LD type and property, `time[datetime]`, the header name. */
  detail: string;
  /** The value as the page wrote it. */
  raw: string;
}

export interface DateCandidate extends DateFinding {
  kind: 'published' | 'modified';
}

export interface PageDates {
  publishedAt: DateFinding | null;
  modifiedAt: DateFinding | null;
  /** Every valid value found, in precedence order: for diagnostics and evaluation. */
  candidates: DateCandidate[];
}

export type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface DateInput {
  html: string;
  /** The page's final URL (after redirects). */
  url: string;
  /** Response headers (Last-Modified, Date); names in any case. */
  headers?: HeaderBag | null;
  /** The page's `<lastmod>` from the sitemap that listed it. */
  sitemapLastmod?: string | Date | null;
  /** Reference time for "in the future" (ms since the epoch); defaults to Date.now(). */
  now?: number;
}

const PUBLISHED_META = [
  'article:published_time', 'article:published', 'og:article:published_time', 'og:published_time', 'og:pubdate', 'datepublished',
  'parsely-pub-date', 'sailthru.date', 'dc.date.issued', 'dcterms.issued', 'dc.date.created', 'dcterms.created',
  'dc.date', 'dcterms.date', 'citation_publication_date', 'citation_online_date', 'citation_date',
  'prism.publicationdate', 'article.published', 'publish-date', 'publish_date', 'publishdate', 'published-date',
  'published_date', 'publication_date', 'pubdate', 'date_published', 'original-publish-date', 'datecreated',
  'cxenseparse:recs:publishtime', 'bt:pubdate', 'date',
];
const MODIFIED_META = [
  'article:modified_time', 'article:modified', 'og:updated_time', 'datemodified', 'dcterms.modified',
  'dc.date.modified', 'article.updated', 'modified-date', 'last-modified', 'lastmod', 'revised',
];
/** Keys whose values are sometimes Unix timestamps. */
const EPOCH_META = new Set(['parsely-pub-date', 'sailthru.date', 'publishdate', 'pubdate', 'date']);

/** Last-Modified this close to the response's Date is the time the page was generated, not changed. */
const SERVED_NOW_MS = 10 * 60 * 1000;
const DAY_MS = 24 * 3600 * 1000;

function headerValue(headers: HeaderBag | null | undefined, name: string): string | null {
  if (!headers) return null;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== name) continue;
    return typeof value === 'string' ? value : (value?.[0] ?? null);
  }
  return null;
}

function finding(parsed: ParsedDate, source: DateSource, detail: string, raw: string): DateFinding {
  return { value: parsed.iso, precision: parsed.precision, source, detail, raw };
}

function fromMeta(scan: DateScan, keys: readonly string[], now: number): Array<[ParsedDate, string, string]> {
  const out: Array<[ParsedDate, string, string]> = [];
  for (const key of keys) {
    const meta = scan.metas.find((m) => m.key === key && !m.aside && m.content.trim());
    const parsed = meta ? parseDateValue(meta.content, now, { allowEpoch: EPOCH_META.has(key) }) : null;
    if (meta && parsed) out.push([parsed, key, meta.content]);
  }
  if (keys === PUBLISHED_META) {
    // Parse.ly's JSON blob: <meta name="parsely-page" content='{"pub_date": "..."}'>.
    const blob = scan.metas.find((m) => m.key === 'parsely-page');
    const pub = blob ? /"pub_date"\s*:\s*"([^"]+)"/.exec(blob.content)?.[1] : undefined;
    const parsed = parseDateValue(pub, now);
    if (parsed && pub) out.push([parsed, 'parsely-page', pub]);
  }
  return out;
}

/** The article's own <h1>: in <main>/<article> and matching the <title> if possible, never in a sidebar. */
function mainHeading(scan: DateScan): HeadingMark | null {
  const title = scan.title.toLowerCase();
  const visible = scan.h1s.filter((h) => !h.aside && h.text.length > 0);
  const inTitle = (h: HeadingMark): boolean => title.includes(h.text.toLowerCase().slice(0, 60));
  return (
    visible.find((h) => h.inMain && inTitle(h)) ?? visible.find((h) => h.inMain) ?? visible.find(inTitle) ?? visible[0] ?? null
  );
}

/** Dates printed before the title by at most this much text, or after it by at most this much, are its header's. */
const BEFORE_HEADING = 400;
const AFTER_HEADING = 1200;

/** The <time> and microdata elements that belong to the article's header, outside comments and sidebars. */
function headerElements(scan: DateScan): DateElement[] {
  const heading = mainHeading(scan);
  const usable = scan.elements.filter((e) => !e.aside);
  if (heading) {
    const near = usable.filter((e) => e.offset >= heading.start - BEFORE_HEADING && e.offset <= heading.end + AFTER_HEADING);
    if (near.length > 0) return near;
  }
  // A listing's dates are its teasers'.
  if (scan.articles > 1) return [];
  // A date far from the title is one the story mentions (an event, a quote), unless microdata, its class or a
  // label ("Posted by Jo on", in an article footer) says what it is.
  if (heading) return usable.filter((e) => e.itemprop || e.role !== null);
  // No title heading at all: microdata, or the first date in the single <article> or <main>.
  const first = usable.find((e) => e.inMain);
  return usable.filter((e) => e.itemprop || e === first);
}

function fromElements(scan: DateScan, now: number): { published: DateCandidate[]; modified: DateCandidate[] } {
  const published: DateCandidate[] = [];
  const modified: DateCandidate[] = [];
  for (const e of headerElements(scan)) {
    const parsed = parseDateValue(e.value, now, { zonelessTime: e.text ? 'day' : 'utc' });
    if (!parsed) continue;
    const kind = e.role === 'modified' ? 'modified' : 'published';
    (kind === 'modified' ? modified : published).push({ ...finding(parsed, 'time_element', e.detail, e.value), kind });
  }
  return { published, modified };
}

const URL_DATE = [
  /\/((?:19|20)\d{2})\/(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\/(0?[1-9]|[12]\d|3[01])(?=[/_.-]|$)/i,
  /(?:^|[/_-])((?:19|20)\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?=[/_.-]|$)/,
];

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** A /2024/05/17/, /2019/nov/18/ or /2024-05-17-slug date in the URL's path: a day, the site's local one. */
export function urlDate(url: string, now: number): ParsedDate | null {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return null;
  }
  for (const pattern of URL_DATE) {
    const m = pattern.exec(pathname);
    if (m) return parseDateValue(`${m[3]} ${MONTH_NAMES[Number(m[2]) - 1] ?? m[2]} ${m[1]}`, now);
  }
  return null;
}

export function detectPageDates(input: DateInput): PageDates {
  const now = input.now ?? Date.now();
  // The extractor's bound on one page's work: a larger page has no page dates read (extractDocument refuses it).
  const scan = scanForDates(input.html.length > MAX_HTML_CHARS ? '' : input.html);
  const candidates: DateCandidate[] = [];
  const add = (kind: DateCandidate['kind'], parsed: ParsedDate | null, source: DateSource, detail: string, raw: string): void => {
    if (parsed) candidates.push({ ...finding(parsed, source, detail, raw), kind });
  };

  for (const d of readJsonLdDates(scan.jsonLd, input.url)) add(d.kind, parseDateValue(d.raw, now), 'json_ld', d.detail, d.raw);
  for (const [parsed, key, raw] of fromMeta(scan, PUBLISHED_META, now)) add('published', parsed, 'meta', key, raw);
  for (const [parsed, key, raw] of fromMeta(scan, MODIFIED_META, now)) add('modified', parsed, 'meta', key, raw);
  const elements = fromElements(scan, now);
  candidates.push(...elements.published, ...elements.modified);
  add('published', urlDate(input.url, now), 'url', 'path', input.url);
  const lastmod = input.sitemapLastmod instanceof Date ? input.sitemapLastmod.toISOString() : input.sitemapLastmod;
  if (lastmod) add('modified', parseDateValue(lastmod, now), 'sitemap_lastmod', 'lastmod', lastmod);
  const lastModified = headerValue(input.headers, 'last-modified');
  if (lastModified) {
    const parsed = parseDateValue(lastModified, now);
    // When the response was made: its Date header, else `now` (the crawler dates a page when it fetches it).
    const servedAt = parseDateValue(headerValue(input.headers, 'date'), now)?.ms ?? now;
    if (parsed && Math.abs(servedAt - parsed.ms) > SERVED_NOW_MS) {
      add('modified', parsed, 'last_modified_header', 'last-modified', lastModified);
    }
  }

  const publishedAt = candidates.find((c) => c.kind === 'published') ?? null;
  const publishedMs = publishedAt ? Date.parse(publishedAt.value) : null;
  const modifiedAt =
    candidates.find((c) => c.kind === 'modified' && (publishedMs === null || Date.parse(c.value) >= publishedMs - DAY_MS)) ?? null;
  return { publishedAt: strip(publishedAt), modifiedAt: strip(modifiedAt), candidates };
}

function strip(candidate: DateCandidate | null): DateFinding | null {
  if (!candidate) return null;
  const { value, precision, source, detail, raw } = candidate;
  return { value, precision, source, detail, raw };
}
