import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDateValue } from './date-parse.js';
import { detectPageDates, urlDate, type DateInput } from './dates.js';

/**
 * Issue 29 item 2: publication and modification dates with their source. Fixture pages written for these tests
 * (test/fixtures/extract-dates/, see its README); `now` is fixed so "in the future" does not move.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../test/fixtures/extract-dates');
const NOW = Date.UTC(2026, 0, 15, 12);

function dates(name: string, url = 'https://news.example.org/ferry', extra: Partial<DateInput> = {}): ReturnType<typeof detectPageDates> {
  return detectPageDates({ html: readFileSync(path.join(FIXTURES, name), 'utf8'), url, now: NOW, ...extra });
}

const plain = '<html><head><title>Notes</title></head><body><main><h1>Notes</h1><p>Some text.</p></main></body></html>';

describe('detectPageDates: sources and precedence', () => {
  it("takes the article's JSON-LD item over the WebPage's, a related list's, an embedded video's and a meta tag", () => {
    const d = dates('jsonld-graph.html');
    expect(d.publishedAt).toMatchObject({ value: '2024-05-17T08:00:00.000Z', source: 'json_ld', detail: 'NewsArticle.datePublished', precision: 'time' });
    expect(d.modifiedAt).toMatchObject({ value: '2024-05-18T07:15:00.000Z', source: 'json_ld', detail: 'NewsArticle.dateModified' });
    // The meta tag that disagrees is still listed as a candidate.
    expect(d.candidates.some((c) => c.source === 'meta' && c.value === '2024-05-16T08:00:00.000Z')).toBe(true);
    expect(d.candidates.some((c) => c.value.startsWith('2022-03-03'))).toBe(false);
  });

  it('reads meta tags when JSON-LD holds template text or zeros', () => {
    const d = dates('meta-tags.html');
    expect(d.publishedAt).toMatchObject({ value: '2023-11-02T11:30:00.000Z', source: 'meta', detail: 'article:published_time' });
    expect(d.modifiedAt).toMatchObject({ value: '2023-11-03T20:45:00.000Z', source: 'meta', detail: 'article:modified_time' });
  });

  it("finds the header's <time> and its Updated one, not the sidebar's before the title nor the comments' after it", () => {
    const d = dates('time-header.html');
    expect(d.publishedAt).toMatchObject({ value: '2025-03-04T08:30:00.000Z', source: 'time_element', detail: 'time[datetime]' });
    expect(d.modifiedAt).toMatchObject({ value: '2025-03-06T13:00:00.000Z', source: 'time_element' });
    const values = d.candidates.map((c) => c.value);
    expect(values).not.toContain('2025-03-09T18:00:00.000Z');
    expect(values).not.toContain('2025-03-05T20:00:00.000Z');
  });

  it("never takes comments' or a sidebar's dates for the article's", () => {
    const d = dates('comments-only.html', 'https://garden.example.org/prune');
    expect(d.publishedAt).toBeNull();
    expect(d.modifiedAt).toBeNull();
    expect(d.candidates).toEqual([]);
  });

  it('does not take a date the story mentions far below its title, but does take a labelled one in its footer', () => {
    const d = dates('event-date-in-body.html', 'https://news.example.org/festival');
    expect(d.publishedAt).toMatchObject({ value: '2025-06-20T08:00:00.000Z', source: 'time_element' });
    expect(d.candidates.map((c) => c.value)).toEqual(['2025-06-20T08:00:00.000Z']);
  });

  it('reads dates written as text in a dated byline, and microformats', () => {
    const d = dates('byline-text.html', 'https://metro.example.org/bus-lanes');
    expect(d.publishedAt).toMatchObject({ value: '2019-11-18', precision: 'day', source: 'time_element', detail: 'span.post-date text' });
    expect(d.modifiedAt).toMatchObject({ value: '2019-11-19T10:00:00.000Z', precision: 'time', detail: 'abbr.updated[title]' });
    expect(dates('zoned-text.html', 'https://metro.example.org/storm').publishedAt).toMatchObject({
      value: '2019-11-20T04:11:00.000Z',
      precision: 'time',
      detail: 'div.publish-date text',
    });
  });

  it("reads pages whose <html> or <body> classes name their layout (has-sidebar, comments-open)", () => {
    const html = readFileSync(path.join(FIXTURES, 'time-header.html'), 'utf8')
      .replace('<html lang="en">', '<html lang="en" class="story has-comments">')
      .replace('<body>', '<body class="single with-related-posts comments-open"><div class="layout has-sidebar">');
    expect(detectPageDates({ html, url: 'https://x.example/a', now: NOW }).publishedAt).toMatchObject({ value: '2025-03-04T08:30:00.000Z' });
  });

  it('gives a listing of dated teasers no date', () => {
    const d = dates('listing.html', 'https://news.example.org/');
    expect(d.publishedAt).toBeNull();
  });

  it('skips future, pre-1990, impossible, relative and ambiguous values down to the URL date', () => {
    const d = dates('junk-values.html', 'https://news.example.org/2024/05/17/tide-tables');
    expect(d.publishedAt).toEqual({ value: '2024-05-17', precision: 'day', source: 'url', detail: 'path', raw: 'https://news.example.org/2024/05/17/tide-tables' });
    expect(d.modifiedAt).toBeNull();
    expect(d.candidates.filter((c) => c.source !== 'url')).toEqual([]);
  });

  it('reads RFC 2822, US-style text with a zone, and zone-less values as UTC', () => {
    const d = dates('rfc-text-dates.html', 'https://news.example.org/bridge');
    expect(d.publishedAt).toMatchObject({ value: '2024-05-17T14:00:00.000Z', source: 'meta', detail: 'sailthru.date' });
    expect(d.modifiedAt).toMatchObject({ value: '2024-05-18T10:00:00.000Z', source: 'meta', detail: 'dcterms.modified' });
    expect(d.candidates.find((c) => c.source === 'time_element')).toMatchObject({ value: '2024-05-17T14:00:00.000Z' });
  });

  it('reads the dates of JSON-LD that is not valid JSON, after valid blocks', () => {
    const broken = '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Line one\nline two", "datePublished": "2019-11-20T01:38:07+05:30"}</script>';
    const d = detectPageDates({ html: `<html><head>${broken}</head><body><h1>T</h1></body></html>`, url: 'https://x.example/a', now: NOW });
    expect(d.publishedAt).toMatchObject({ value: '2019-11-19T20:08:07.000Z', source: 'json_ld', detail: 'datePublished (invalid JSON-LD)' });
  });

  it('scans pathological pages in linear time (thousands of open <time>s, an unclosed <h1>)', () => {
    const started = performance.now();
    detectPageDates({ html: '<time>x'.repeat(30_000), url: 'https://x.example/a', now: NOW });
    detectPageDates({ html: '<h1>' + '<span class="date">x'.repeat(20_000), url: 'https://x.example/a', now: NOW });
    // Each took over 30 s when every text node walked every open element; now about a second on a loaded 2-core machine.
    expect(performance.now() - started).toBeLessThan(10_000);
  }, 60_000);

  it('reads URL dates as days, and only real ones', () => {
    expect(urlDate('https://x.example/2024/05/17/slug', NOW)?.iso).toBe('2024-05-17');
    expect(urlDate('https://x.example/news/2019-11-19/story', NOW)?.iso).toBe('2019-11-19');
    expect(urlDate('https://x.example/2024/5/7/slug', NOW)?.iso).toBe('2024-05-07');
    expect(urlDate('https://x.example/statements/2019/nov/18/who/what', NOW)?.iso).toBe('2019-11-18');
    expect(urlDate('https://x.example/2024/13/17/slug', NOW)).toBeNull();
    expect(urlDate('https://x.example/2024/05/slug', NOW)).toBeNull();
    expect(urlDate('https://x.example/products/2024/05/170', NOW)).toBeNull();
    expect(urlDate('https://x.example/2031/01/01/slug', NOW)).toBeNull();
  });
});

describe('detectPageDates: sitemap lastmod and Last-Modified', () => {
  const served = 'Thu, 15 Jan 2026 11:59:00 GMT';

  it('uses the sitemap lastmod, then Last-Modified, for modified_at only, never for published_at', () => {
    const withBoth = detectPageDates({
      html: plain, url: 'https://docs.example.org/notes', now: NOW, sitemapLastmod: '2025-12-01',
      headers: { 'Last-Modified': 'Mon, 10 Nov 2025 08:00:00 GMT', Date: served },
    });
    expect(withBoth.publishedAt).toBeNull();
    expect(withBoth.modifiedAt).toMatchObject({ value: '2025-12-01', source: 'sitemap_lastmod', precision: 'day' });
    const headerOnly = detectPageDates({ html: plain, url: 'https://docs.example.org/notes', now: NOW, headers: new Headers({ 'last-modified': 'Mon, 10 Nov 2025 08:00:00 GMT', date: served }) });
    expect(headerOnly.modifiedAt).toMatchObject({ value: '2025-11-10T08:00:00.000Z', source: 'last_modified_header', detail: 'last-modified' });
  });

  it('ignores a Last-Modified that is the time the page was served', () => {
    const d = detectPageDates({ html: plain, url: 'https://docs.example.org/notes', now: NOW, headers: { 'last-modified': 'Thu, 15 Jan 2026 11:58:30 GMT', date: served } });
    expect(d.modifiedAt).toBeNull();
    expect(d.candidates).toEqual([]);
    // Without a Date header, the time of the fetch (now) is the reference.
    const noDate = detectPageDates({ html: plain, url: 'https://docs.example.org/notes', now: NOW, headers: { 'last-modified': 'Thu, 15 Jan 2026 11:55:00 GMT' } });
    expect(noDate.modifiedAt).toBeNull();
  });

  it("prefers the page's own modified date, and skips one from before publication", () => {
    const html = readFileSync(path.join(FIXTURES, 'meta-tags.html'), 'utf8');
    const own = detectPageDates({ html, url: 'https://x.example/a', now: NOW, sitemapLastmod: new Date('2025-01-01T00:00:00Z') });
    expect(own.modifiedAt?.source).toBe('meta');
    const noOwn = html.replace(/<meta property="article:modified_time"[^>]*>/, '');
    const early = detectPageDates({ html: noOwn, url: 'https://x.example/a', now: NOW, sitemapLastmod: '2023-10-01', headers: { 'last-modified': 'Sat, 04 Nov 2023 10:00:00 GMT' } });
    expect(early.modifiedAt).toMatchObject({ source: 'last_modified_header', value: '2023-11-04T10:00:00.000Z' });
  });
});

describe('parseDateValue', () => {
  const originalTz = process.env['TZ'];
  afterEach(() => {
    if (originalTz === undefined) delete process.env['TZ'];
    else process.env['TZ'] = originalTz;
  });

  it.each([
    ['2024-05-17', '2024-05-17'],
    ['2024-05-17T10:00:00Z', '2024-05-17T10:00:00.000Z'],
    ['2021-11-01T10:52:50+0100', '2021-11-01T09:52:50.000Z'],
    ['2024-05-17T23:30:00-05:00', '2024-05-18T04:30:00.000Z'],
    ['2019-04-28 06:01:07', '2019-04-28T06:01:07.000Z'],
    ['2017-11-24T18:42:20.314667', '2017-11-24T18:42:20.314Z'],
    ['Fri, 17 May 2024 10:00:00 GMT', '2024-05-17T10:00:00.000Z'],
    ['17 May 2024', '2024-05-17'],
    ['Sept. 3, 2019', '2019-09-03'],
    ['Nov. 18, 2019 7:04 pm ET', '2019-11-18'],
    ['Tue Nov 19 2019 03:05:46 GMT+0000', '2019-11-19T03:05:46.000Z'],
    ['2024/05/17', '2024-05-17'],
  ])('%s -> %s', (raw, iso) => {
    expect(parseDateValue(raw, NOW)?.iso).toBe(iso);
  });

  it.each(['2 hours ago', '05/06/2024', '2024-02-30', '1989-12-31', '2026-01-17', 'undefined', '0000-00-00', '1715940000', ''])(
    'refuses %j',
    (raw) => {
      expect(parseDateValue(raw, NOW)).toBeNull();
    },
  );

  it('reads Unix timestamps only when asked, and a day ahead is still accepted', () => {
    expect(parseDateValue('1715940000', NOW, { allowEpoch: true })?.iso).toBe('2024-05-17T10:00:00.000Z');
    expect(parseDateValue('2026-01-16T06:00:00Z', NOW)?.iso).toBe('2026-01-16T06:00:00.000Z');
  });

  it("does not depend on the machine's time zone", () => {
    const inputs = ['2019-04-28 06:01:07', '17 May 2024 10:00', '2024-05-17', 'May 17, 2024'];
    process.env['TZ'] = 'UTC';
    const utc = inputs.map((s) => parseDateValue(s, NOW)?.iso);
    process.env['TZ'] = 'Pacific/Kiritimati';
    const kiritimati = inputs.map((s) => parseDateValue(s, NOW)?.iso);
    process.env['TZ'] = 'America/Los_Angeles';
    const la = inputs.map((s) => parseDateValue(s, NOW)?.iso);
    expect(kiritimati).toEqual(utc);
    expect(la).toEqual(utc);
    expect(utc).toEqual(['2019-04-28T06:01:07.000Z', '2024-05-17T10:00:00.000Z', '2024-05-17', '2024-05-17']);
  });
});
